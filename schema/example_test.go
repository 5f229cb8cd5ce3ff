package schema_test

import (
	"context"
	"fmt"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
)

// A token request whose scope uses "*" inside a verb and a URL is refused with one
// cause per violation, each naming its field.
func Example() {
	reg := schema.NewRegistry()
	v, _ := reg.Validator(resource.GroupVersionKind{
		Group: resource.Group, Version: resource.Version, Kind: resource.KindDirectClusterEndpointToken,
	})

	tok := &resource.DirectClusterEndpointToken{}
	tok.Name = "ci-token"
	tok.Spec.TTL = 3600
	tok.Spec.Scope = &resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{{
		Verbs:           []string{"get", "list*"},
		NonResourceURLs: []string{"/healthz*"},
	}}}

	st := resource.StatusOf(v.Validate(tok))
	fmt.Println(st.Code, st.Reason)
	for _, c := range st.Details.Causes {
		fmt.Println(c.Field)
	}
	// Output:
	// 422 Invalid
	// spec.scope.rules[0].nonResourceURLs[0]
	// spec.scope.rules[0].verbs[1]
}

// A host program registers the schema of its own kind; it may reuse the shared
// definitions by reference, but nothing outside memory can be referenced.
func ExampleRegistry_Register() {
	reg := schema.NewRegistry()
	gvk := resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	err := reg.Register(gvk, []byte(`{
	  "type": "object",
	  "properties": {
	    "metadata": {"$ref": "https://schemas.management.service/v1/common.json#/$defs/objectMeta"},
	    "spec": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 1}}}
	  }
	}`))
	fmt.Println(err)

	err = reg.Register(resource.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"},
		[]byte(`{"$ref": "file:///etc/passwd"}`))
	fmt.Println(err != nil)

	v, _ := reg.Validator(gvk)
	st := resource.StatusOf(v.ValidateJSON([]byte(`{"metadata": {"name": "w"}, "spec": {"size": 0}}`)))
	fmt.Println(st.Details.Causes[0].Field+":", st.Details.Causes[0].Message)
	// Output:
	// <nil>
	// true
	// spec.size: Invalid value: 0: must be greater than or equal to 1
}

// The admission hook validates every create, update and status update of a kind with
// a schema before the store writes it.
func ExampleAdmitter() {
	hook := schema.NewAdmitter(schema.NewRegistry())
	var _ store.ValidatingAdmitter = hook

	project := &resource.Project{}
	project.Name = "Team_A"
	err := hook.Validate(context.Background(), &store.AdmissionRequest{
		Operation: store.OperationCreate,
		Object:    project,
		Kind: &resource.KindInfo{
			Group: resource.Group, Version: resource.Version, Kind: resource.KindProject, Resource: "projects",
		},
	})
	fmt.Println(resource.ReasonOf(err), resource.StatusOf(err).Details.Causes[0].Field)
	// Output:
	// Invalid metadata.name
}

// A strategic merge patch adds a cluster to a project's allowedClusters, merged by the
// list's merge key, and removes another with a $patch directive.
func ExampleRegistry_StrategicMergePatch() {
	reg := schema.NewRegistry()
	project := []byte(`{"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"a"},` +
		`"spec":{"allowedClusters":[{"name":"c1"},{"name":"c2"}]}}`)
	patch := []byte(`{"spec":{"allowedClusters":[{"name":"c3"},{"name":"c1","$patch":"delete"}]}}`)
	out, err := reg.StrategicMergePatch(resource.GroupVersionKind{Group: resource.Group, Version: resource.Version,
		Kind: resource.KindProject}, project, patch)
	fmt.Println(string(out), err)
	// Output: {"apiVersion":"management.service/v1","kind":"Project","metadata":{"name":"a"},"spec":{"allowedClusters":[{"name":"c2"},{"name":"c3"}]}} <nil>
}
