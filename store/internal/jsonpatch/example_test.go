package jsonpatch_test

import (
	"errors"
	"fmt"

	"github.com/management-service/mgmt/store/internal/jsonpatch"
)

func ExampleMergePatch() {
	doc := []byte(`{"metadata":{"name":"web","labels":{"app":"web","tier":"front"}},"spec":{"replicas":1}}`)
	patch := []byte(`{"metadata":{"labels":{"tier":null,"team":"a"}},"spec":{"replicas":3}}`)
	out, err := jsonpatch.MergePatch(doc, patch)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	// {"metadata":{"labels":{"app":"web","team":"a"},"name":"web"},"spec":{"replicas":3}}
}

func ExampleApply() {
	doc := []byte(`{"spec":{"ports":[80],"id":12345678901234567890}}`)
	patch := []byte(`[
		{"op":"test","path":"/spec/id","value":12345678901234567890},
		{"op":"add","path":"/spec/ports/-","value":443},
		{"op":"copy","from":"/spec/ports","path":"/status~1ports"}
	]`)
	out, err := jsonpatch.Apply(doc, patch, jsonpatch.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	// {"spec":{"id":12345678901234567890,"ports":[80,443]},"status/ports":[80,443]}
}

// The error classes map to HTTP status codes.
func ExampleApply_errors() {
	status := func(err error) int {
		switch {
		case err == nil:
			return 200
		case errors.Is(err, jsonpatch.ErrMalformed):
			return 400
		case errors.Is(err, jsonpatch.ErrTooLarge):
			return 413
		case errors.Is(err, jsonpatch.ErrFailed):
			return 422
		}
		return 500
	}
	doc := []byte(`{"a":1}`)
	for _, patch := range []string{
		`[{"op":"replace","path":"/a","value":2}]`,
		`[{"op":"frobnicate","path":"/a"}]`,
		`[{"op":"test","path":"/a","value":2}]`,
		`[{"op":"copy","from":"/a","path":"/b"},{"op":"copy","from":"/a","path":"/c"}]`,
	} {
		_, err := jsonpatch.Apply(doc, []byte(patch), jsonpatch.Options{MaxOperations: 1})
		fmt.Println(status(err), err)
	}
	// Output:
	// 200 <nil>
	// 400 jsonpatch: operation 0 (path "/a"): malformed: unknown op "frobnicate"
	// 422 jsonpatch: operation 0 (path "/a"): cannot apply: test: the value at the path is not equal to the given value
	// 413 jsonpatch: too large: patch has 2 operations, more than the limit of 1
}

func ExampleError() {
	_, err := jsonpatch.Apply([]byte(`{"items":[1,2]}`), []byte(`[{"op":"remove","path":"/items/2"}]`), jsonpatch.Options{})
	var e *jsonpatch.Error
	if errors.As(err, &e) {
		fmt.Println(e.Op, e.Path, errors.Is(e, jsonpatch.ErrFailed))
	}
	// Output:
	// 0 /items/2 true
}
