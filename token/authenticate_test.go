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

func TestAdoptLegacyHashes_keepsOldSecretsWorking(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t)
	// An older server stored the hash on the key itself.
	plain, err := store.New(e.f.Backend, store.Options{Scheme: keyStoreOptions(t).Scheme})
	require.NoError(t, err)
	defer plain.Close()
	legacy := func(name, secret string) {
		h := strings.TrimPrefix(SecretName(secret), "sha256-")
		require.NoError(t, plain.Create(ctx, &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: name},
			Spec: resource.AccessKeySpec{KeyHash: "sha256:" + h}}, store.CreateOptions{}))
	}
	legacy("old", "s-old")
	legacy("twin", "s-new") // the secret a key of this server holds already
	require.NoError(t, plain.Create(ctx, &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "odd"},
		Spec: resource.AccessKeySpec{KeyHash: "md5:00"}}, store.CreateOptions{}))
	e.seed(accessKey("new", "s-new", "", nil))
	assert.Equal(t, "", e.authenticates("s-old"), "not adopted yet")

	n, err := AdoptLegacyHashes(ctx, e.f.Store)
	assert.Equal(t, 1, n)
	require.Error(t, err)
	assert.Equal(t, 2, strings.Count(err.Error(), "\n")+1, "twin and odd: %v", err)
	assert.Equal(t, "old", e.authenticates("s-old"))
	assert.Equal(t, "new", e.authenticates("s-new"), "the holder keeps its secret")
	assert.Empty(t, e.get("old").Spec.KeyHash)
	assert.NotEmpty(t, e.get("twin").Spec.KeyHash, "left as it was")

	n, err = AdoptLegacyHashes(ctx, e.f.Store)
	assert.Zero(t, n)
	assert.Error(t, err, "twin and odd still need a hand")
}
