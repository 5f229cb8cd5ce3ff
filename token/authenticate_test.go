package token

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

func TestAuthenticate_followsCreateRotationDeleteAndRestart(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t)
	assert.Equal(t, "", e.authenticates("s-1"), "nothing yet")
	e.seed(accessKey("k", "s-1", "alice", projects("a")))
	u := e.login("s-1")
	assert.Equal(t, "alice", u.Name, "the subject")
	assert.Equal(t, e.get("k").UID, u.UID)
	assert.Equal(t, "k", IdentityOf(u).Key.Name)

	require.NoError(t, e.update(nil, "k", func(k *resource.AccessKey) { k.Spec.Key = "s-2" }))
	assert.Equal(t, "", e.authenticates("s-1"), "the old secret stops at once")
	assert.Equal(t, "k", e.authenticates("s-2"))

	// A restart: a new store on the same backend, a new Authenticator; nothing to load.
	s2, err := store.New(e.f.Backend, *keyStoreOptions(t))
	require.NoError(t, err)
	defer s2.Close()
	u2, err := NewAuthenticator(s2, AuthenticatorOptions{}).Authenticate(ctx, "s-2")
	require.NoError(t, err)
	assert.Equal(t, "k", IdentityOf(u2).Key.Name)

	require.NoError(t, e.remove(nil, "k"))
	assert.Equal(t, "", e.authenticates("s-2"))
	e.seed(accessKey("k", "s-3", "alice", projects("a")))
	assert.Equal(t, "", e.authenticates("s-2"), "re-created with another secret")
	assert.Equal(t, "k", e.authenticates("s-3"))
}

func TestAuthenticate_refusesMalformedBearersWith401(t *testing.T) {
	e := newKeyEnv(t)
	e.seed(accessKey("k", "s-1", "", nil))
	for _, b := range []string{"", " ", "s-1 ", "s 1", strings.Repeat("x", MaxAccessKeyBytes+1), "Bearer s-1"} {
		_, err := e.auth.Authenticate(context.Background(), b)
		require.Error(t, err, "%q", b)
		assert.Equal(t, 401, resource.CodeOf(err), "%q", b)
	}
}

func TestAccessKeyAdmission_concurrentCreatesOfOneSecretLeaveOneHolder(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = e.f.Create(ctx, accessKey(fmt.Sprintf("k%d", i), "s-shared", "", nil), store.CreateOptions{})
		}(i)
	}
	wg.Wait()
	winner := ""
	for i, err := range errs {
		if err == nil {
			require.Empty(t, winner, "two keys got the secret")
			winner = fmt.Sprintf("k%d", i)
			continue
		}
		assert.Equal(t, resource.ReasonConflict, resource.ReasonOf(err), "%v", err)
	}
	require.NotEmpty(t, winner)
	assert.Equal(t, winner, e.authenticates("s-shared"))
	assertSecretsModel(t, e)
}

func TestAccessKeyAdmission_scrubsTheSecretFromLastApplied(t *testing.T) {
	e := newKeyEnv(t)
	k := accessKey("k", "s-1", "", nil)
	k.Annotations = map[string]string{AnnotationLastApplied: `{"kind":"AccessKey","spec":{"key":"s-1","keyHash":"h","ttl":5}}`}
	e.seed(k)
	got := e.get("k").Annotations[AnnotationLastApplied]
	assert.NotContains(t, got, "s-1")
	assert.NotContains(t, got, "keyHash")
	assert.Contains(t, got, `"ttl":5`)

	require.NoError(t, e.update(nil, "k", func(k *resource.AccessKey) {
		k.Spec.Key = "s-2"
		k.Annotations[AnnotationLastApplied] = "not json s-2"
	}))
	assert.NotContains(t, e.get("k").Annotations, AnnotationLastApplied, "dropped rather than kept with a secret")
}

func TestAccessKeyAdmission_dryRunStoresNoSecret(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t)
	k := accessKey("k", "s-1", "", nil)
	require.NoError(t, e.f.Create(ctx, k, store.CreateOptions{WriteOptions: store.WriteOptions{DryRun: true}}))
	assert.Empty(t, k.Spec.Key)
	assert.Equal(t, "", e.authenticates("s-1"))
	require.NoError(t, e.create(nil, accessKey("k", "s-1", "", nil)), "the secret is still free")
}
