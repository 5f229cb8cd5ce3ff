package resource_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/management-service/mgmt/resource"
)

func ExampleCodec_Decode() {
	codec := resource.NewCodec(resource.NewScheme(), resource.CodecOptions{})
	body := []byte(`
apiVersion: management.service/v1
kind: ProjectMigrateVirtualClusterInstance
sourceVirtualClusterInstance:
  name: my-vcluster
  namespace: p-old-project
`)
	obj, err := codec.Decode(body, "application/yaml", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	m := obj.(*resource.ProjectMigrateVirtualClusterInstance)
	fmt.Println(m.Kind, m.SourceVirtualClusterInstance.Namespace+"/"+m.SourceVirtualClusterInstance.Name)

	out, _ := codec.Encode(m, resource.MediaTypeJSON)
	fmt.Println(string(out))
	// Output:
	// ProjectMigrateVirtualClusterInstance p-old-project/my-vcluster
	// {"kind":"ProjectMigrateVirtualClusterInstance","apiVersion":"management.service/v1","metadata":{"creationTimestamp":null},"sourceVirtualClusterInstance":{"name":"my-vcluster","namespace":"p-old-project"}}
}

func ExampleCodec_Decode_expectedKind() {
	codec := resource.NewCodec(nil, resource.CodecOptions{})
	projects, _ := codec.Scheme().KindFor(resource.GroupVersion, resource.KindProject)

	// The endpoint's kind fills in a missing apiVersion and kind...
	obj, err := codec.Decode([]byte(`{"metadata":{"name":"a"}}`), "application/json", projects)
	fmt.Println(obj.GetTypeMeta().Kind, err)

	// ...and a body naming another kind is refused.
	_, err = codec.Decode([]byte(`{"kind":"AccessKey"}`), "application/json", projects)
	fmt.Println(resource.CodeOf(err), err)

	// Strict decoding names unknown and duplicate fields.
	_, err = codec.Decode([]byte(`{"metadata":{"name":"a","name":"b"},"spce":{}}`), "", projects)
	fmt.Println(resource.CodeOf(err), err)
	// Output:
	// Project <nil>
	// 400 the kind in the data (AccessKey) does not match the expected kind (Project)
	// 400 strict decoding error: duplicate field "metadata.name", unknown field "spce"
}

func ExampleValidateObjectMeta() {
	meta := resource.ObjectMeta{
		Name:            "Bad_Name",
		Labels:          map[string]string{"app": "web"},
		OwnerReferences: []resource.OwnerReference{{APIVersion: "v1", Kind: "Project", Name: "a"}},
	}
	errs := resource.ValidateObjectMeta(&meta, false, resource.NewPath("metadata"))
	for _, e := range errs {
		fmt.Println(e.Type, e.Field)
	}
	// Output:
	// FieldValueInvalid metadata.name
	// FieldValueRequired metadata.ownerReferences[0].uid
}

func ExampleNewInvalid() {
	projects, _ := resource.NewScheme().KindFor(resource.GroupVersion, resource.KindProject)
	errs := resource.ErrorList{resource.Required(resource.NewPath("metadata", "name"), "name or generateName is required")}
	err := fmt.Errorf("create: %w", resource.NewInvalid(projects, "", errs))

	fmt.Println(errors.Is(err, resource.ErrInvalid))
	b, _ := json.MarshalIndent(resource.StatusOf(err), "", "  ")
	fmt.Println(string(b))
	// Output:
	// true
	// {
	//   "kind": "Status",
	//   "apiVersion": "v1",
	//   "metadata": {},
	//   "status": "Failure",
	//   "message": "Project.management.service \"\" is invalid: metadata.name: Required value: name or generateName is required",
	//   "reason": "Invalid",
	//   "details": {
	//     "group": "management.service",
	//     "kind": "Project",
	//     "causes": [
	//       {
	//         "reason": "FieldValueRequired",
	//         "message": "Required value: name or generateName is required",
	//         "field": "metadata.name"
	//       }
	//     ]
	//   },
	//   "code": 422
	// }
}

func ExampleStatusOf() {
	projects, _ := resource.NewScheme().KindFor(resource.GroupVersion, resource.KindProject)
	for _, err := range []error{
		resource.NewNotFound(projects, "a"),
		fmt.Errorf("lookup: %w", resource.ErrConflict),
		errors.New("disk on fire"),
	} {
		st := resource.StatusOf(err)
		fmt.Printf("%d %q %s\n", st.Code, st.Reason, st.Message)
	}
	// Output:
	// 404 "NotFound" projects.management.service "a" not found
	// 409 "Conflict" lookup: resource: conflict
	// 500 "" disk on fire
}

func ExampleParseLabelSelector() {
	sel, err := resource.ParseLabelSelector("env in (prod, dev), app = web, !legacy")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sel.String())
	fmt.Println(sel.Matches(map[string]string{"app": "web", "env": "dev"}))
	fmt.Println(sel.Matches(map[string]string{"app": "web", "env": "dev", "legacy": "true"}))

	_, err = resource.ParseLabelSelector("app in (web")
	fmt.Println(resource.CodeOf(err), err)
	// Output:
	// app=web,env in (dev,prod),!legacy
	// true
	// false
	// 400 unable to parse label selector: found end of string at position 11, expected ',' or ')'
}

func ExampleParseFieldSelector() {
	sel, err := resource.ParseFieldSelector("metadata.namespace=p-a,metadata.name!=old")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sel.Matches("new", "p-a"), sel.Matches("old", "p-a"))

	_, err = resource.ParseFieldSelector("spec.ttl=60")
	fmt.Println(resource.CodeOf(err), err)
	// Output:
	// true false
	// 400 field label not supported: spec.ttl
}
