package main

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// benchSeq numbers the objects the benchmark creates, across its runs.
var benchSeq int

// BenchmarkCRClientCreate creates typed CRD-like objects through store/crclient and
// through the fake client (for profiling the -crclient create row on its own).
func BenchmarkCRClientCreate(b *testing.B) {
	ctx := context.Background()
	for _, sh := range crShapes() {
		ours, err := sh.ours()
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			c    client.Client
		}{{"crclient", ours}, {"fake", sh.fake()}} {
			b.Run(sh.name+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					if err := c.c.Create(ctx, sh.mk(prefixCreate, benchSeq)); err != nil {
						b.Fatal(err)
					}
					benchSeq++
				}
			})
		}
		_ = ours.Close()
	}
}
