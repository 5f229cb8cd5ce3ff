package jsonpatch

import (
	"strings"
	"testing"
)

// benchDoc is a Kubernetes-like object of about 2 KiB.
var benchDoc = []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default",` +
	`"uid":"6f1c7c2e-5d0b-4d8e-9a47-0c0f2f2d8b11","resourceVersion":"123456","generation":4,` +
	`"labels":{"app":"web","tier":"frontend","team":"payments"},"annotations":{"note":"` + strings.Repeat("x", 512) + `"}},` +
	`"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},` +
	`"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80},{"containerPort":443}],` +
	`"env":[{"name":"A","value":"1"},{"name":"B","value":"2"},{"name":"C","value":"3"}],` +
	`"resources":{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"100m","memory":"64Mi"}}}]}}},` +
	`"status":{"replicas":3,"readyReplicas":3,"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"}]}}`)

func BenchmarkMergePatch(b *testing.B) {
	patch := []byte(`{"metadata":{"labels":{"tier":null,"release":"v2"}},"spec":{"replicas":5}}`)
	b.SetBytes(int64(len(benchDoc)))
	for b.Loop() {
		if _, err := MergePatch(benchDoc, patch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApply(b *testing.B) {
	patch := []byte(`[{"op":"test","path":"/metadata/resourceVersion","value":"123456"},` +
		`{"op":"replace","path":"/spec/replicas","value":5},` +
		`{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"D","value":"4"}},` +
		`{"op":"remove","path":"/metadata/labels/tier"}]`)
	b.SetBytes(int64(len(benchDoc)))
	for b.Loop() {
		if _, err := Apply(benchDoc, patch, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
