package objcodec

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec/objcodectest"
)

// TestAppendObject_writes_what_json_Marshal_writes encodes random objects of every
// kind, as the caller sent them and as a write normalizes them, and compares with
// json.Marshal.
func TestAppendObject_writes_what_json_Marshal_writes(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	encoded := 0
	for _, k := range resource.NewScheme().Kinds() {
		require.NotNil(t, encoderFor(reflect.TypeOf(k.New())), k.Kind)
		for i := 0; i < 3000; i++ {
			obj := k.New()
			objcodectest.Fill(r, reflect.ValueOf(obj).Elem(), 0)
			objs := []resource.Object{obj}
			if work, err := Copy(k, obj, false); err == nil {
				objs = append(objs, work)
			}
			for _, o := range objs {
				want, wantErr := json.Marshal(o)
				got, ok := Encode(o)
				if !ok {
					continue
				}
				require.NoError(t, wantErr)
				require.Equal(t, string(want), string(got))
				// AppendEncode writes the same after what dst holds, into dst's
				// array when it has room.
				dst := make([]byte, 3, 3+len(want)+i%2*4096)
				copy(dst, "ab,")
				app, ok := AppendEncode(dst, o)
				require.True(t, ok)
				require.Equal(t, "ab,"+string(want), string(app))
				if i%2 == 1 {
					require.Same(t, &dst[0], &app[0], "dst had room")
				}
				encoded++
			}
		}
	}
	assert.Greater(t, encoded, 6000, "most objects can be encoded")
}

type EncInner struct {
	B  bool    `json:"b,omitempty"`
	U  uint16  `json:"u"`
	P  *string `json:"p,omitempty"`
	PI *int32  `json:"pi"`
}

type encNamed string

type encTest struct {
	resource.TypeMeta `json:",inline"`
	Meta              resource.ObjectMeta `json:"metadata"`
	EncInner
	Untagged  string
	Named     encNamed           `json:"named,omitempty"`
	Counts    map[string]int     `json:"counts"`
	NamedMap  map[encNamed]uint8 `json:"namedMap,omitempty"`
	Inners    []EncInner         `json:"inners,omitzero"`
	Names     []encNamed         `json:"names"`
	Z         EncInner           `json:"z,omitzero"`
	PZ        *EncInner          `json:"pz,omitzero"`
	Times     []resource.Time    `json:"times"`
	Raw       json.RawMessage    `json:"raw"`
	RawOmit   json.RawMessage    `json:"rawOmit,omitempty"`
	WithTag   int64              `json:"with-tag!"`
	OmitEmpty EncInner           `json:"omitEmpty,omitempty"`
}

func (o *encTest) GetObjectMeta() *resource.ObjectMeta { return &o.Meta }
func (o *encTest) GetTypeMeta() *resource.TypeMeta     { return &o.TypeMeta }

// TestAppendObject_covers_what_it_claims encodes random values of a type that uses
// every form the encoder knows.
func TestAppendObject_covers_what_it_claims(t *testing.T) {
	require.NotNil(t, encoderFor(reflect.TypeFor[*encTest]()))
	r := rand.New(rand.NewSource(5))
	encoded := 0
	for i := 0; i < 5000; i++ {
		obj := &encTest{}
		objcodectest.Fill(r, reflect.ValueOf(obj).Elem(), 0)
		want, wantErr := json.Marshal(obj)
		got, ok := Encode(obj)
		if !ok {
			continue
		}
		require.NoError(t, wantErr)
		require.Equal(t, string(want), string(got))
		encoded++
	}
	assert.Greater(t, encoded, 500)
}

type encFloat struct {
	resource.TypeMeta `json:",inline"`
	Meta              resource.ObjectMeta `json:"metadata"`
	F                 float64             `json:"f"`
}

func (o *encFloat) GetObjectMeta() *resource.ObjectMeta { return &o.Meta }
func (o *encFloat) GetTypeMeta() *resource.TypeMeta     { return &o.TypeMeta }

type encZeroer struct{ A int }

func (encZeroer) IsZero() bool { return true }

type encIsZero struct {
	resource.TypeMeta `json:",inline"`
	Meta              resource.ObjectMeta `json:"metadata"`
	Z                 encZeroer           `json:"z,omitzero"`
}

func (o *encIsZero) GetObjectMeta() *resource.ObjectMeta { return &o.Meta }
func (o *encIsZero) GetTypeMeta() *resource.TypeMeta     { return &o.TypeMeta }

// TestAppendObject_refuses_what_it_does_not_know leaves types with a JSON form it
// does not write to json.Marshal.
func TestAppendObject_refuses_what_it_does_not_know(t *testing.T) {
	assert.Nil(t, encoderFor(reflect.TypeFor[*encFloat]()))
	assert.Nil(t, encoderFor(reflect.TypeFor[*encIsZero]()))
	_, ok := Encode(&encIsZero{})
	assert.False(t, ok)
}

// TestAppendJSONString_writes_what_json_Marshal_writes compares strings of random
// bytes and runes, escapes and invalid UTF-8 included, with json.Marshal.
func TestAppendJSONString_writes_what_json_Marshal_writes(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	pieces := []string{"a", "Z", " ", "\"", "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f", "<", ">", "&",
		"é", "🙂", "\u2028", "\u2029", "\xff", "\xe2\x80", "\xed\xa0\x80", "\uFFFD", "x<y>&z", "line\nbreak \"q\""}
	for i := 0; i < 20000; i++ {
		var s string
		for n := r.Intn(8); n > 0; n-- {
			if r.Intn(4) == 0 {
				s += string(rune(r.Intn(0x110000)))
			} else if r.Intn(4) == 0 {
				s += string([]byte{byte(r.Intn(256))})
			} else {
				s += pieces[r.Intn(len(pieces))]
			}
		}
		want, err := json.Marshal(s)
		require.NoError(t, err)
		prefix := []byte("[1,")
		got, ok := appendJSONString(prefix, s)
		require.True(t, ok)
		require.Equal(t, "[1,"+string(want), string(got), "%q", s)
	}
}

// TestAppendTime_writes_what_MarshalJSON_writes compares with resource.Time's own
// encoding, zero, non-UTC and out-of-range times included.
func TestAppendTime_writes_what_MarshalJSON_writes(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	loc := time.FixedZone("x", -7*3600-1800)
	times := []time.Time{{}, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 1, 0, 30, 0, 5, loc)}
	for i := 0; i < 2000; i++ {
		times = append(times, time.Unix(r.Int63n(1<<40)-1<<39, r.Int63n(2e9)).In(loc))
	}
	for _, tm := range times {
		rt := resource.Time{Time: tm}
		want, err := rt.MarshalJSON()
		got, ok := appendTime([]byte("x"), rt)
		if err != nil {
			assert.False(t, ok, "%v", tm)
			continue
		}
		require.True(t, ok, "%v", tm)
		require.Equal(t, "x"+string(want), string(got), "%v", tm)
	}
}

// TestPlain8_agrees_with_jsonPlain checks the word-at-a-time test against the table
// on every byte value in every position, and on random words.
func TestPlain8_agrees_with_jsonPlain(t *testing.T) {
	check := func(b []byte) {
		want := true
		for _, c := range b {
			want = want && jsonPlain[c]
		}
		require.Equal(t, want, plain8(string(b)), "%q", b)
	}
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			check(b)
		}
	}
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 200000; i++ {
		b := make([]byte, 8)
		for j := range b {
			if r.Intn(3) == 0 {
				b[j] = byte(r.Intn(256))
			} else {
				b[j] = byte(0x20 + r.Intn(0x60))
			}
		}
		check(b)
	}
}

// FuzzAppendJSONString compares the string encoder with json.Marshal on any input,
// and the object encoder on a VirtualClusterInstance carrying it in several fields.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\nd<e>&f", "é🙂\u2028\u2029", "\xff\xfe", "\x00\x1f\x7f", "12345678<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		got, ok := appendJSONString([]byte("x"), s)
		require.True(t, ok)
		require.Equal(t, "x"+string(want), string(got))

		obj := &resource.VirtualClusterInstance{
			TypeMeta:   resource.TypeMeta{APIVersion: "management.service/v1", Kind: "VirtualClusterInstance"},
			ObjectMeta: resource.ObjectMeta{Name: s, Labels: map[string]string{s: s, "k": s}, Annotations: map[string]string{"a": s}},
			Spec:       resource.VirtualClusterInstanceSpec{DisplayName: s, Parameters: s},
		}
		want, err = json.Marshal(obj)
		require.NoError(t, err)
		if got, ok := Encode(obj); ok {
			require.Equal(t, string(want), string(got))
		}
	})
}

// A large map's sorted keys are remembered between encodings, and used only while
// the map has exactly those keys: a map changed in place (the same size, one key
// swapped; a key added; a key removed) encodes as json.Marshal encodes it.
func TestEncode_remembers_a_large_maps_keys_only_while_they_hold(t *testing.T) {
	labels := map[string]string{}
	for i := range bigMapKeys + 10 {
		labels[fmt.Sprintf("k%05d", i)] = fmt.Sprint(i)
	}
	obj := &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Name: "big", Namespace: "ns", Labels: labels}}
	check := func(what string) {
		t.Helper()
		want, err := json.Marshal(obj)
		require.NoError(t, err)
		got, ok := Encode(obj)
		require.True(t, ok)
		require.Equal(t, string(want), string(got), what)
	}
	check("first encoding")
	check("again, from the remembered keys")
	delete(labels, "k00007")
	labels["a-first"] = "x"
	check("one key swapped, the same size")
	labels["zz-last"] = "y"
	check("a key added")
	delete(labels, "k00000")
	check("a key removed")
	other := maps.Clone(labels)
	obj.Labels = other
	other["k00001"] = "changed value"
	check("another map")
}

// Many goroutines encoding large maps at once share the remembered keys safely.
func TestEncode_large_maps_concurrently(t *testing.T) {
	objs := make([]*resource.VirtualClusterInstance, 2*sortedKeysSlots)
	for i := range objs {
		labels := map[string]string{}
		for j := range bigMapKeys + i {
			labels[fmt.Sprintf("g%d-%05d", i, j)] = "v"
		}
		objs[i] = &resource.VirtualClusterInstance{ObjectMeta: resource.ObjectMeta{Name: "big", Labels: labels}}
	}
	want := make([]string, len(objs))
	for i, o := range objs {
		b, err := json.Marshal(o)
		require.NoError(t, err)
		want[i] = string(b)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 20 {
				i := (g + n) % len(objs)
				if got, ok := Encode(objs[i]); !ok || string(got) != want[i] {
					errs <- fmt.Sprintf("object %d encoded wrongly", i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		assert.Fail(t, e)
	}
}
