package token

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// seedKeys are the keys every row of the truth table starts with; the secret of each
// is "s-" and its name.
func seedKeys() []*resource.AccessKey {
	exp := accessKey("alice-expiring", "s-alice-expiring", "alice", projects("a", "b"))
	exp.Spec.TTL = 3600
	return []*resource.AccessKey{
		accessKey("admin", "s-admin", "", nil),
		accessKey("alice-wide", "s-alice-wide", "alice", projects("a", "b")),
		accessKey("alice-narrow", "s-alice-narrow", "alice", projects("a")),
		exp,
		accessKey("solo", "s-solo", "", projects("a", "b")),
		accessKey("alice-a", "s-alice-a", "alice", projects("a")),
		accessKey("alice-c", "s-alice-c", "alice", projects("c")),
		accessKey("bob-a", "s-bob-a", "bob", projects("a")),
	}
}

// TestAccessKeyAdmission_truthTable is the one table of the key-management rules: who
// may create, update (patch is an update) or delete which key, and what a secret, a
// ttl, a scope, a subject or a tokenGeneration change needs. Callers are named by
// their key; "host" is a write without a caller, "foreign" a caller of another
// authenticator.
func TestAccessKeyAdmission_truthTable(t *testing.T) {
	type row struct {
		name   string
		caller string
		op     store.Operation
		target string                    // update, delete
		key    *resource.AccessKey       // create
		change func(*resource.AccessKey) // update
		want   resource.StatusReason     // "" allowed
	}
	withGen := func(k *resource.AccessKey, g int64) *resource.AccessKey { k.Spec.TokenGeneration = g; return k }
	withTTL := func(k *resource.AccessKey, ttl int64) *resource.AccessKey { k.Spec.TTL = ttl; return k }
	setKey := func(s string) func(*resource.AccessKey) { return func(k *resource.AccessKey) { k.Spec.Key = s } }
	setTTL := func(n int64) func(*resource.AccessKey) { return func(k *resource.AccessKey) { k.Spec.TTL = n } }
	setScope := func(s *resource.AccessKeyScope) func(*resource.AccessKey) {
		return func(k *resource.AccessKey) { k.Spec.Scope = s }
	}
	setSubject := func(s string) func(*resource.AccessKey) { return func(k *resource.AccessKey) { k.Spec.Subject = s } }
	setGen := func(g int64) func(*resource.AccessKey) {
		return func(k *resource.AccessKey) { k.Spec.TokenGeneration = g }
	}
	const (
		ok        = resource.StatusReason("")
		forbidden = resource.ReasonForbidden
		conflict  = resource.ReasonConflict
		invalid   = resource.ReasonInvalid
	)
	create, update, del := store.OperationCreate, store.OperationUpdate, store.OperationDelete
	rows := []row{
		// Writes without a caller are the host's: allowed, but the secret rules hold.
		{name: "host creates an unrestricted key", caller: "host", op: create, key: accessKey("k", "s-k", "", nil), want: ok},
		{name: "host creates a key with another key's secret: 409", caller: "host", op: create, key: accessKey("k", "s-admin", "", nil), want: conflict},
		{name: "host creates a key without a secret: 422", caller: "host", op: create, key: accessKey("k", "", "", nil), want: invalid},
		{name: "host creates a key with a keyHash: 422", caller: "host", op: create, key: func() *resource.AccessKey {
			k := accessKey("k", "s-k", "", nil)
			k.Spec.KeyHash = "sha256:00"
			return k
		}(), want: invalid},
		{name: "host creates a key with a ttl above the bound: 422", caller: "host", op: create, key: withTTL(accessKey("k", "s-k", "", nil), MaxAccessKeyTTL+1), want: invalid},
		{name: "host creates a key with a negative ttl: 422", caller: "host", op: create, key: withTTL(accessKey("k", "s-k", "", nil), -1), want: invalid},
		{name: "host deletes the admin key", caller: "host", op: del, target: "admin", want: ok},

		// The unrestricted key may do everything.
		{name: "admin creates a key for another subject", caller: "s-admin", op: create, key: accessKey("k", "s-k", "bob", projects("z")), want: ok},
		{name: "admin creates a key with a tokenGeneration", caller: "s-admin", op: create, key: withGen(accessKey("k", "s-k", "bob", nil), 5), want: ok},
		{name: "admin raises a key's tokenGeneration", caller: "s-admin", op: update, target: "alice-a", change: setGen(7), want: ok},
		{name: "admin rotates a scoped key", caller: "s-admin", op: update, target: "bob-a", change: setKey("s-new"), want: ok},
		{name: "admin rotates to a secret another key holds: 409", caller: "s-admin", op: update, target: "bob-a", change: setKey("s-alice-a"), want: conflict},

		// A scoped caller creates keys only for its own subject, within its scope.
		{name: "scoped creates a narrower key for its subject", caller: "s-alice-wide", op: create, key: accessKey("k", "s-k", "alice", projects("a")), want: ok},
		{name: "scoped creates a key without a subject: it acts for the caller's", caller: "s-alice-wide", op: create, key: accessKey("k", "s-k", "", projects("a")), want: ok},
		{name: "scoped creates a key with its own scope", caller: "s-alice-wide", op: create, key: accessKey("k", "s-k", "alice", projects("a", "b")), want: ok},
		{name: "scoped creates a key for another subject: 403", caller: "s-alice-wide", op: create, key: accessKey("k", "s-k", "admin", projects("a")), want: forbidden},
		{name: "scoped creates an unrestricted key: 403", caller: "s-alice-wide", op: create, key: accessKey("k", "s-k", "alice", nil), want: forbidden},
		{name: "scoped creates a key with a scope it does not cover: 403", caller: "s-alice-wide", op: create, key: accessKey("k", "s-k", "alice", projects("c")), want: forbidden},
		{name: "narrow scoped creates a wider key: 403", caller: "s-alice-narrow", op: create, key: accessKey("k", "s-k", "alice", projects("a", "b")), want: forbidden},
		{name: "scoped creates a key with a tokenGeneration: 403", caller: "s-alice-wide", op: create, key: withGen(accessKey("k", "s-k", "alice", projects("a")), 1000000), want: forbidden},
		{name: "scoped creates a key with another key's secret, after the rights: 409", caller: "s-alice-wide", op: create, key: accessKey("k", "s-admin", "alice", projects("a")), want: conflict},
		{name: "scoped for another subject with another key's secret: 403 first", caller: "s-alice-wide", op: create, key: accessKey("k", "s-admin", "bob", projects("a")), want: forbidden},
		{name: "expiring scoped creates a key without expiry: 403", caller: "s-alice-expiring", op: create, key: accessKey("k", "s-k", "alice", projects("a")), want: forbidden},
		{name: "expiring scoped creates a key that ends before it", caller: "s-alice-expiring", op: create, key: withTTL(accessKey("k", "s-k", "alice", projects("a")), 60), want: ok},
		{name: "expiring scoped creates a key that outlives it: 403", caller: "s-alice-expiring", op: create, key: withTTL(accessKey("k", "s-k", "alice", projects("a")), 7200), want: forbidden},
		{name: "scoped names another user as the key's owner: 403", caller: "s-alice-wide", op: create, key: func() *resource.AccessKey {
			k := accessKey("k", "s-k", "alice", projects("a"))
			k.Spec.User = "admin"
			return k
		}(), want: forbidden},
		{name: "scoped names another team as the key's owner: 403", caller: "s-alice-wide", op: update, target: "alice-a",
			change: func(k *resource.AccessKey) { k.Spec.Team = "admins" }, want: forbidden},
		{name: "admin names any owner", caller: "s-admin", op: update, target: "alice-a",
			change: func(k *resource.AccessKey) { k.Spec.Team = "admins" }, want: ok},
		{name: "a key acting for itself creates a key: 403", caller: "s-solo", op: create, key: accessKey("k", "s-k", "solo", projects("a")), want: forbidden},
		{name: "a caller without an access key identity: 403", caller: "foreign", op: create, key: accessKey("k", "s-k", "", projects("a")), want: forbidden},

		// Updates: the caller must cover the stored and the new key, of its own subject.
		{name: "admin takeover: scoped rotates the admin's secret: 403", caller: "s-alice-wide", op: update, target: "admin", change: setKey("s-mine"), want: forbidden},
		{name: "admin takeover: scoped changes the admin's ttl: 403", caller: "s-alice-wide", op: update, target: "admin", change: setTTL(1), want: forbidden},
		{name: "admin takeover: scoped gives the admin key its own secret: 403 before 409", caller: "s-alice-wide", op: update, target: "admin", change: setKey("s-alice-a"), want: forbidden},
		{name: "scoped rotates a covered key of its subject", caller: "s-alice-wide", op: update, target: "alice-a", change: setKey("s-new"), want: ok},
		{name: "scoped changes the ttl of a covered key of its subject", caller: "s-alice-wide", op: update, target: "alice-a", change: setTTL(60), want: ok},
		{name: "scoped widens a covered key within its own scope", caller: "s-alice-wide", op: update, target: "alice-a", change: setScope(projects("a", "b")), want: ok},
		{name: "narrow scoped widens a key beyond its scope: 403", caller: "s-alice-narrow", op: update, target: "alice-a", change: setScope(projects("a", "b")), want: forbidden},
		{name: "scoped narrows a key whose stored scope it does not cover: 403", caller: "s-alice-wide", op: update, target: "alice-c", change: setScope(projects("a")), want: forbidden},
		{name: "scoped lifts a key's scope: 403", caller: "s-alice-wide", op: update, target: "alice-a", change: setScope(nil), want: forbidden},
		{name: "scoped moves a key to another subject: 403", caller: "s-alice-wide", op: update, target: "alice-a", change: setSubject("bob"), want: forbidden},
		{name: "scoped changes a key of another subject: 403", caller: "s-alice-wide", op: update, target: "bob-a", change: setTTL(60), want: forbidden},
		{name: "scoped raises a key's tokenGeneration: 403", caller: "s-alice-wide", op: update, target: "alice-a", change: setGen(1), want: forbidden},
		{name: "scoped rotates to another key's secret: 409", caller: "s-alice-wide", op: update, target: "alice-a", change: setKey("s-bob-a"), want: conflict},
		{name: "scoped rotates to the key's own secret: nothing changes", caller: "s-alice-wide", op: update, target: "alice-a", change: setKey("s-alice-a"), want: ok},
		{name: "a key acting for itself rotates its own secret", caller: "s-solo", op: update, target: "solo", change: setKey("s-solo-2"), want: ok},
		{name: "expiring scoped extends its own ttl: 403", caller: "s-alice-expiring", op: update, target: "alice-expiring", change: setTTL(0), want: forbidden},
		{name: "update with a ttl above the bound: 422", caller: "s-admin", op: update, target: "alice-a", change: setTTL(9223372037), want: invalid},

		// Deletes: the caller must cover the stored key, of its own subject.
		{name: "scoped deletes a covered key of its subject", caller: "s-alice-wide", op: del, target: "alice-a", want: ok},
		{name: "scoped deletes itself", caller: "s-alice-narrow", op: del, target: "alice-narrow", want: ok},
		{name: "scoped deletes the admin key: 403", caller: "s-alice-wide", op: del, target: "admin", want: forbidden},
		{name: "scoped deletes a key it does not cover: 403", caller: "s-alice-wide", op: del, target: "alice-c", want: forbidden},
		{name: "scoped deletes a key of another subject: 403", caller: "s-alice-wide", op: del, target: "bob-a", want: forbidden},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			e := newKeyEnv(t)
			for _, k := range seedKeys() {
				e.seed(k)
			}
			var user *store.UserInfo
			switch r.caller {
			case "host":
			case "foreign":
				user = &store.UserInfo{Name: "alice", Extra: "not an identity"}
			default:
				user = e.login(r.caller)
			}
			before := map[string]*resource.AccessKey{}
			for _, k := range seedKeys() {
				before[k.Name] = e.get(k.Name)
			}
			var err error
			switch r.op {
			case store.OperationCreate:
				err = e.create(user, r.key)
			case store.OperationUpdate:
				err = e.update(user, r.target, r.change)
			case store.OperationDelete:
				err = e.remove(user, r.target)
			}
			if r.want == ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				require.Equal(t, r.want, resource.ReasonOf(err), "%v", err)
			}
			if r.want == forbidden {
				assert.True(t, strings.HasPrefix(err.Error(), leadManage), "opens with what to do: %v", err)
			}
			if r.want == conflict {
				for _, k := range seedKeys() {
					if k.Name != r.target {
						assert.NotContains(t, err.Error(), `"`+k.Name+`"`, "names no other key")
					}
				}
			}
			if r.want != ok {
				// A refused write changes nothing: every seed key as before, every
				// seed secret still its key's.
				for _, k := range seedKeys() {
					assert.Equal(t, before[k.Name], e.get(k.Name))
					assert.Equal(t, k.Name, e.authenticates(k.Spec.Key))
				}
				return
			}
			assertSecretsModel(t, e)
		})
	}
}

// assertSecretsModel checks that every stored key's records are consistent: each key
// has a binding to one secret record naming it by uid, and no record is left over.
func assertSecretsModel(t *testing.T, e *keyEnv) {
	t.Helper()
	ctx := context.Background()
	var keys resource.AccessKeyList
	require.NoError(t, e.f.List(ctx, &keys, store.ListOptions{}))
	var secrets AccessKeySecretList
	require.NoError(t, e.f.List(ctx, &secrets, store.ListOptions{}))
	var bindings AccessKeyBindingList
	require.NoError(t, e.f.List(ctx, &bindings, store.ListOptions{}))
	live := map[string]string{}
	for _, k := range keys.Items {
		if !k.IsTerminating() {
			live[k.Name] = k.UID
		}
		assert.Empty(t, k.Spec.Key, "no secret stored")
		assert.Empty(t, k.Spec.KeyHash, "no hash stored on the key")
	}
	require.Len(t, bindings.Items, len(live))
	require.Len(t, secrets.Items, len(live))
	for _, b := range bindings.Items {
		assert.Equal(t, live[b.Name], b.Spec.UID)
		rec := &AccessKeySecret{}
		require.NoError(t, e.f.Get(ctx, "", b.Spec.Secret, rec, store.GetOptions{}))
		assert.Equal(t, AccessKeyRef{Name: b.Name, UID: b.Spec.UID}, rec.Spec)
	}
}
