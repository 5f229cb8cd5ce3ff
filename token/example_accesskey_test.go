package token_test

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/token"
)

// A host wires access keys in four steps: register the internal kinds, give the
// admission to the store as mutating and validating hook (and the Authorizer as owner
// authorizer), authenticate each bearer, and authorize each request with the caller
// it found, passing it on to every write.
func Example_accessKeys() {
	ctx := context.Background()
	scheme := resource.NewScheme()
	if err := token.RegisterKinds(scheme); err != nil {
		panic(err)
	}
	adm := token.NewAccessKeyAdmission()
	authz := token.NewAuthorizer(token.AuthorizerOptions{Scheme: scheme})
	b := memdb.New(memdb.Options{})
	defer b.Close()
	s, err := store.New(b, store.Options{Scheme: scheme,
		Mutating:        []store.MutatingAdmitter{adm},
		Validating:      []store.ValidatingAdmitter{adm},
		OwnerAuthorizer: authz})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	auth := token.NewAuthenticator(s, token.AuthenticatorOptions{})

	// The host seeds the admin key (no caller: allowed everything).
	admin := &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "admin"},
		Spec: resource.AccessKeySpec{Key: "admin-secret"}}
	if err := s.Create(ctx, admin, store.CreateOptions{}); err != nil {
		panic(err)
	}
	fmt.Printf("stored spec.key: %q\n", admin.Spec.Key)

	// A request with the admin's bearer creates a scoped key for alice.
	adminUser, err := auth.Authenticate(ctx, "admin-secret")
	if err != nil {
		panic(err)
	}
	alice := &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "alice"},
		Spec: resource.AccessKeySpec{Key: "alice-secret", Subject: "alice",
			Scope: &resource.AccessKeyScope{Projects: []resource.AccessKeyScopeProject{{Project: "web"}}}}}
	err = s.Create(ctx, alice, store.CreateOptions{WriteOptions: store.WriteOptions{User: adminUser}})
	fmt.Println("admin creates alice's key:", err)

	// Alice's key may not touch the admin key...
	aliceUser, err := auth.Authenticate(ctx, "alice-secret")
	if err != nil {
		panic(err)
	}
	target := &resource.AccessKey{}
	if err := s.Get(ctx, "", "admin", target, store.GetOptions{}); err != nil {
		panic(err)
	}
	target.Spec.Key = "stolen"
	err = s.Update(ctx, target, store.UpdateOptions{WriteOptions: store.WriteOptions{User: aliceUser}})
	fmt.Println("alice rotates the admin key:", resource.ReasonOf(err))

	// ...and its scope decides its requests, the project taken from the namespace.
	list := func(ns string) policy.Request {
		return policy.Request{Verb: "list", APIGroup: resource.Group, Resource: "virtualclusterinstances",
			Namespace: ns, Target: resource.RequestTargetManagement}
	}
	d, err := authz.Authorize(ctx, aliceUser, list("p-web"))
	fmt.Println("list in p-web:", d.Entry, err)
	_, err = authz.Authorize(ctx, aliceUser, list("p-ops"))
	fmt.Println("list in p-ops:", resource.ReasonOf(err))
	// Output:
	// stored spec.key: ""
	// admin creates alice's key: <nil>
	// alice rotates the admin key: Forbidden
	// list in p-web: spec.scope.projects[0] <nil>
	// list in p-ops: Forbidden
}
