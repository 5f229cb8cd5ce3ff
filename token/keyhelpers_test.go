package token

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/storetest"
)

// keyEnv is a memdb store wired the way a host wires this package: the internal kinds
// registered, the AccessKey admission as mutating and validating hook, the Authorizer
// as owner authorizer; plus an Authenticator over it.
type keyEnv struct {
	t     testing.TB
	f     *storetest.Fixture
	auth  *Authenticator
	authz *Authorizer
}

// keyStoreOptions are the store options a host builds, with this package's hooks.
func keyStoreOptions(t testing.TB) *store.Options {
	scheme := resource.NewScheme()
	require.NoError(t, RegisterKinds(scheme))
	adm := NewAccessKeyAdmission()
	return &store.Options{Scheme: scheme,
		Mutating:        []store.MutatingAdmitter{adm},
		Validating:      []store.ValidatingAdmitter{adm},
		OwnerAuthorizer: NewAuthorizer(AuthorizerOptions{Scheme: scheme})}
}

func newKeyEnv(t testing.TB) *keyEnv {
	t.Helper()
	so := keyStoreOptions(t)
	f := storetest.NewFixture(t, so)
	return &keyEnv{t: t, f: f, auth: NewAuthenticator(f.Store, AuthenticatorOptions{}),
		authz: NewAuthorizer(AuthorizerOptions{Scheme: so.Scheme})}
}

// Scopes of the tests.
func projects(names ...string) *resource.AccessKeyScope {
	s := &resource.AccessKeyScope{}
	for _, n := range names {
		s.Projects = append(s.Projects, resource.AccessKeyScopeProject{Project: n})
	}
	return s
}

// accessKey is an AccessKey to create.
func accessKey(name, secret, subject string, scope *resource.AccessKeyScope) *resource.AccessKey {
	return &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: name},
		Spec: resource.AccessKeySpec{Key: secret, Subject: subject, Scope: scope}}
}

// seed creates a key as the host (no caller).
func (e *keyEnv) seed(k *resource.AccessKey) *resource.AccessKey {
	e.t.Helper()
	require.NoError(e.t, e.f.Create(context.Background(), k, store.CreateOptions{}))
	return k
}

// login authenticates secret and fails the test when it does not.
func (e *keyEnv) login(secret string) *store.UserInfo {
	e.t.Helper()
	u, err := e.auth.Authenticate(context.Background(), secret)
	require.NoError(e.t, err, "secret %q should authenticate", secret)
	return u
}

// authenticates reports the name of the key secret authenticates as, or "".
func (e *keyEnv) authenticates(secret string) string {
	u, err := e.auth.Authenticate(context.Background(), secret)
	if err != nil {
		require.Equal(e.t, resource.ReasonUnauthorized, resource.ReasonOf(err), "%v", err)
		return ""
	}
	return IdentityOf(u).Key.Name
}

// get reads the stored key name.
func (e *keyEnv) get(name string) *resource.AccessKey {
	e.t.Helper()
	k := &resource.AccessKey{}
	require.NoError(e.t, e.f.Get(context.Background(), "", name, k, store.GetOptions{}))
	return k
}

// update reads key name, changes it with fn and writes it as user.
func (e *keyEnv) update(user *store.UserInfo, name string, fn func(k *resource.AccessKey)) error {
	k := e.get(name)
	fn(k)
	return e.f.Update(context.Background(), k, store.UpdateOptions{WriteOptions: store.WriteOptions{User: user}})
}

// remove deletes key name as user.
func (e *keyEnv) remove(user *store.UserInfo, name string) error {
	_, err := e.f.Delete(context.Background(), &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: name}},
		store.DeleteOptions{WriteOptions: store.WriteOptions{User: user}})
	return err
}

// create creates k as user.
func (e *keyEnv) create(user *store.UserInfo, k *resource.AccessKey) error {
	return e.f.Create(context.Background(), k, store.CreateOptions{WriteOptions: store.WriteOptions{User: user}})
}
