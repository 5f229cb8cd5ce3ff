package store

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// specChangedByMaps is how specChanged used to decide, with maps of members.
func specChangedByMaps(a, b []byte) bool {
	top := func(b []byte) map[string][]byte {
		ms, ok := members(b, nil)
		if !ok {
			return nil
		}
		out := map[string][]byte{}
		for _, m := range ms {
			out[string(m.key)] = m.value
		}
		return out
	}
	fa, fb := top(a), top(b)
	if fa == nil || fb == nil {
		return !bytes.Equal(a, b)
	}
	skip := func(k string) bool { return k == "metadata" || k == "status" || k == "kind" || k == "apiVersion" }
	n := 0
	for k, va := range fa {
		if skip(k) {
			continue
		}
		n++
		if vb, ok := fb[k]; !ok || !bytes.Equal(va, vb) {
			return true
		}
	}
	for k := range fb {
		if !skip(k) {
			n--
		}
	}
	return n != 0
}

func TestSpecChanged_agrees_with_the_map_version(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	keys := []string{"kind", "apiVersion", "metadata", "spec", "status", "x", "y"}
	values := []string{`1`, `2`, `"a"`, `{"b":[1,{"c":"}"}]}`, `null`, `{}`}
	obj := func() []byte {
		var b bytes.Buffer
		b.WriteByte('{')
		for i := 0; i < r.Intn(7); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:%s", keys[r.Intn(len(keys))], values[r.Intn(len(values))])
		}
		if r.Intn(20) > 0 {
			b.WriteByte('}')
		}
		return b.Bytes()
	}
	for i := 0; i < 20000; i++ {
		a, b := obj(), obj()
		if r.Intn(3) == 0 {
			b = a
		}
		require.Equal(t, specChangedByMaps(a, b), specChanged(a, b), "%s vs %s", a, b)
	}
}
