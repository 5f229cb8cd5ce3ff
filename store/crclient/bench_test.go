package crclient_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func benchConfigMap(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("cm-%05d", i),
		Labels:      map[string]string{"app": "bench", "tier": "backend", "team": fmt.Sprint(i % 10), "pick": fmt.Sprint(i%100 == 0)},
		Annotations: map[string]string{"description": strings.Repeat("x", 400)}},
		Data: map[string]string{"displayName": fmt.Sprint(i), "description": strings.Repeat("d", 200), "owner": "alice"}}
}

// BenchmarkClient measures the verbs on ConfigMaps (examples/compare has the
// comparison with the fake client).
func BenchmarkClient(b *testing.B) {
	ctx := context.Background()
	c := newClient(&testing.T{})
	defer c.Close()
	for i := range 1000 {
		require.NoError(b, c.Create(ctx, benchConfigMap(i)))
	}
	b.Run("get", func(b *testing.B) {
		var cm corev1.ConfigMap
		for i := 0; b.Loop(); i++ {
			if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: fmt.Sprintf("cm-%05d", i%1000)}, &cm); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("list1000", func(b *testing.B) {
		for b.Loop() {
			var l corev1.ConfigMapList
			if err := c.List(ctx, &l); err != nil || len(l.Items) != 1000 {
				b.Fatal(err, len(l.Items))
			}
		}
	})
}

func BenchmarkWidgetWrites(b *testing.B) {
	ctx := context.Background()
	c := newClient(&testing.T{})
	defer c.Close()
	w := widget("ns", "w", 1, "red")
	w.Labels = map[string]string{"app": "bench", "tier": "backend", "team": "t", "pick": "false", "x": "y"}
	w.Annotations = map[string]string{"description": strings.Repeat("x", 400)}
	w.Spec.Tags = map[string]string{"description": strings.Repeat("d", 200), "owner": "alice"}
	require.NoError(b, c.Create(ctx, w))
	b.Run("update", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			w.Spec.Size = i
			if err := c.Update(ctx, w); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("create", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			o := w.DeepCopy()
			o.ResourceVersion, o.Name = "", fmt.Sprintf("c-%d", i)
			if err := c.Create(ctx, o); err != nil {
				b.Fatal(err)
			}
		}
	})
}
