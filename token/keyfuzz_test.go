package token

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// The universe of FuzzAccessKeyWrites: few enough values that writes collide.
var (
	fuzzScopes = []*resource.AccessKeyScope{nil, projects("a"), projects("a", "b"), projects("b"), projects("c"),
		{AllowServiceCli: true, Projects: []resource.AccessKeyScopeProject{{Project: "a"}}}}
	fuzzSubjects = []string{"", "alice", "bob"}
	fuzzNames    = []string{"root", "alice", "k0", "k1", "k2"}
	fuzzSecrets  = []string{"s-root", "s-alice", "s0", "s1", "s2", "s3"}
	fuzzTTLs     = []int64{0, 3600, 60, MaxAccessKeyTTL + 1, 9223372037, -5}
)

// modelKey is what the model knows of a stored key.
type modelKey struct {
	secret  string
	scope   *resource.AccessKeyScope
	subject string
}

// FuzzAccessKeyWrites runs random sequences of AccessKey writes (a caller, a target
// key, a write) through the admission and checks after each one that
//
//   - a write by a scoped caller that succeeded left no key whose scope (stored before
//     or after) the caller does not cover, nor a key of another subject, and a write
//     by an unauthenticated secret never happens;
//
//   - no two keys ever share a secret, and an invalid ttl never gets stored;
//
//   - Authenticate of every secret of the universe agrees with a model that keeps, per
//     key, the secret of its last successful create or rotation.
//
//     go test -run '^$' -fuzz FuzzAccessKeyWrites -fuzztime 20s ./token/
func FuzzAccessKeyWrites(f *testing.F) {
	f.Add([]byte{0, 2, 2, 1, 1, 2, 0})
	f.Add([]byte{1, 2, 0, 0, 0, 3, 1, 2, 1, 0, 2, 2, 0, 0})
	f.Add([]byte{0, 0, 3, 0, 0, 0, 0, 2, 1, 3, 0, 0, 0, 0, 1, 0, 3, 2, 1, 4, 0})
	f.Add([]byte{0, 2, 3, 2, 1, 0, 1, 1, 2, 3, 1, 1, 5, 2, 2, 2, 3, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 7*12 {
			data = data[:7*12]
		}
		runKeyWrites(t, data)
	})
}

func runKeyWrites(t *testing.T, data []byte) (done, refused int) {
	ctx := context.Background()
	e := newKeyEnv(t)
	model := map[string]*modelKey{}
	seed := func(name, secret, subject string, scope *resource.AccessKeyScope) {
		e.seed(accessKey(name, secret, subject, scope))
		model[name] = &modelKey{secret: secret, scope: scope, subject: subject}
	}
	seed("root", "s-root", "", nil)
	seed("alice", "s-alice", "alice", projects("a", "b"))

	for step := 0; len(data) >= 7; step, data = step+1, data[7:] {
		op, callerB, nameB, scopeB, subjB, secretB, ttlB := data[0]%3, data[1], data[2], data[3], data[4], data[5], data[6]
		var user *store.UserInfo
		// The caller: the host (a quarter of the writes) or the key of one secret.
		if callerB%4 != 0 {
			u, err := e.auth.Authenticate(ctx, fuzzSecrets[int(callerB>>2)%len(fuzzSecrets)])
			if err != nil {
				continue // not a caller now
			}
			user = u
		}
		name := fuzzNames[int(nameB)%len(fuzzNames)]
		oldStored := e.tryGet(name)
		var newStored *resource.AccessKey
		var err error
		secret := ""
		switch op {
		case 0: // create
			k := accessKey(name, fuzzSecrets[int(secretB)%len(fuzzSecrets)], fuzzSubjects[int(subjB)%len(fuzzSubjects)],
				fuzzScopes[int(scopeB)%len(fuzzScopes)].DeepCopy())
			k.Spec.TTL = fuzzTTLs[int(ttlB)%len(fuzzTTLs)]
			secret = k.Spec.Key
			err = e.create(user, k)
		case 1: // update: each byte's low bit says whether that field changes
			if oldStored == nil {
				continue
			}
			err = e.update(user, name, func(k *resource.AccessKey) {
				if scopeB&1 == 1 {
					k.Spec.Scope = fuzzScopes[int(scopeB>>1)%len(fuzzScopes)].DeepCopy()
				}
				if subjB&1 == 1 {
					k.Spec.Subject = fuzzSubjects[int(subjB>>1)%len(fuzzSubjects)]
				}
				if secretB&1 == 1 {
					secret = fuzzSecrets[int(secretB>>1)%len(fuzzSecrets)]
					k.Spec.Key = secret
				}
				if ttlB&1 == 1 {
					k.Spec.TTL = fuzzTTLs[int(ttlB>>1)%len(fuzzTTLs)]
				}
				if ttlB&2 == 2 {
					k.Spec.TokenGeneration++
				}
			})
		case 2: // delete
			if oldStored == nil {
				continue
			}
			err = e.remove(user, name)
		}
		if err == nil {
			newStored = e.tryGet(name)
		}
		label := fmt.Sprintf("step %d: op %d on %s by %v", step, op, name, user != nil)
		checkWrite(t, label, user, oldStored, newStored, err, op)
		if err != nil {
			require.Equal(t, oldStored, e.tryGet(name), "%s: a refused write changes nothing: %v", label, err)
			refused++
			continue
		}
		done++
		// Apply the write to the model.
		switch {
		case newStored == nil:
			delete(model, name)
		default:
			m := model[name]
			if m == nil {
				m = &modelKey{}
				model[name] = m
			}
			if secret != "" {
				for other, o := range model {
					require.False(t, other != name && o.secret == secret, "%s: secret %s given to %s while %s holds it", label, secret, name, other)
				}
				m.secret = secret
			}
			m.scope, m.subject = newStored.Spec.Scope, newStored.Spec.Subject
		}
		for _, s := range fuzzSecrets {
			want := ""
			for n, m := range model {
				if m.secret == s {
					want = n
				}
			}
			require.Equal(t, want, e.authenticates(s), "%s: Authenticate(%s)", label, s)
		}
	}
	assertSecretsModel(t, e)
	return done, refused
}

// checkWrite asserts the rules a completed or refused write must keep.
func checkWrite(t *testing.T, label string, user *store.UserInfo, old, new *resource.AccessKey, err error, op byte) {
	t.Helper()
	if err != nil {
		switch resource.ReasonOf(err) {
		case resource.ReasonForbidden, resource.ReasonConflict, resource.ReasonInvalid, resource.ReasonAlreadyExists:
		default:
			require.FailNow(t, fmt.Sprintf("%s: unexpected error %v", label, err))
		}
		return
	}
	if new != nil {
		require.Empty(t, new.Spec.Key, label)
		require.True(t, new.Spec.TTL >= 0 && new.Spec.TTL <= MaxAccessKeyTTL, "%s: ttl %d stored", label, new.Spec.TTL)
	}
	id := IdentityOf(user)
	if id == nil || id.Unrestricted() {
		return
	}
	for _, k := range []*resource.AccessKey{old, new} {
		if k == nil || (op == 0 && k == old) {
			continue
		}
		ok, gaps := coversKey(id.Key.Spec.Scope, k.Spec.Scope)
		require.True(t, ok, "%s: the writer's scope %+v does not cover %+v: %v", label, id.Key.Spec.Scope, k.Spec.Scope, gaps)
		require.Equal(t, subjectID(id.Key), subjectID(k), "%s: a key of another subject", label)
	}
	if old != nil && new != nil {
		require.Equal(t, old.Spec.TokenGeneration, new.Spec.TokenGeneration, "%s: tokenGeneration changed by a scoped key", label)
	}
	if old == nil && new != nil {
		require.Zero(t, new.Spec.TokenGeneration, label)
	}
}

// tryGet returns the stored key name, or nil.
func (e *keyEnv) tryGet(name string) *resource.AccessKey {
	e.t.Helper()
	k := &resource.AccessKey{}
	err := e.f.Get(context.Background(), "", name, k, store.GetOptions{})
	if err != nil {
		require.ErrorIs(e.t, err, resource.ErrNotFound)
		return nil
	}
	return k
}

// TestAccessKeyWrites_fuzzSeeds runs the seeds of FuzzAccessKeyWrites and a longer
// pseudo-random sequence as a plain test.
func TestAccessKeyWrites_fuzzSeeds(t *testing.T) {
	data := make([]byte, 7*60)
	x := uint32(2463534242)
	for i := range data {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		data[i] = byte(x)
	}
	done, refused := runKeyWrites(t, data)
	require.Greater(t, done, 5, "writes that went through")
	require.Greater(t, refused, 5, "writes that were refused")
}
