package store

import (
	"context"
	"encoding/json"
	"math/rand"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/internal/objcodec"
	"github.com/management-service/mgmt/store/internal/objcodec/objcodectest"
)

// TestWithResourceVersion_writes_what_json_Marshal_writes checks, on random objects
// of every kind, that the stored bytes with the resourceVersion written in are
// exactly json.Marshal's encoding of the decoded object stamped with it.
func TestWithResourceVersion_writes_what_json_Marshal_writes(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	s := &Store{maxSize: 1 << 30}
	spliced := 0
	for _, k := range resource.NewScheme().Kinds() {
		for i := 0; i < 500; i++ {
			obj := k.New()
			objcodectest.Fill(r, reflect.ValueOf(obj).Elem(), 0)
			work, err := objcodec.Copy(k, obj, false)
			if err != nil {
				continue
			}
			data, err := s.encode(k, work)
			require.NoError(t, err)
			rev := r.Int63n(1 << 40)
			decoded := k.New()
			require.NoError(t, s.unmarshal(k, "key", data, decoded))
			decoded.GetObjectMeta().ResourceVersion = formatRV(rev)
			want, err := json.Marshal(decoded)
			require.NoError(t, err)
			got, ok := withResourceVersion(k, data, rev)
			if !ok {
				continue
			}
			spliced++
			require.Equal(t, string(want), string(got), "%s", data)
		}
	}
	assert.Greater(t, spliced, 1000, "most stored objects are spliced")
}

// FuzzWithResourceVersion checks that whatever withResourceVersion accepts, it turns
// into the same JSON with metadata.resourceVersion set, and nothing else changed.
func FuzzWithResourceVersion(f *testing.F) {
	k := resource.NewScheme().Kinds()[0]
	s := &Store{maxSize: 1 << 30}
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 20; i++ {
		obj := k.New()
		objcodectest.Fill(r, reflect.ValueOf(obj).Elem(), 0)
		if work, err := objcodec.Copy(k, obj, false); err == nil {
			if data, err := s.encode(k, work); err == nil {
				f.Add(data, int64(i))
			}
		}
	}
	f.Add([]byte(`{"kind":"`+k.Kind+`","apiVersion":"`+k.APIVersion()+`","metadata":{}}`), int64(7))
	f.Add([]byte(`{"kind":"`+k.Kind+`","apiVersion":"`+k.APIVersion()+`","metadata":{"name":"a","resourceVersion":"3"}}`), int64(7))
	f.Fuzz(func(t *testing.T, data []byte, rev int64) {
		if !json.Valid(data) {
			return // the store reads only JSON it wrote
		}
		got, ok := withResourceVersion(k, data, rev)
		if !ok {
			return
		}
		var before, after map[string]any
		require.NoError(t, json.Unmarshal(got, &after), "%s", got)
		require.NoError(t, json.Unmarshal(data, &before))
		meta, _ := before["metadata"].(map[string]any)
		require.NotNil(t, meta, "accepted without metadata")
		_, had := meta["resourceVersion"]
		require.False(t, had, "accepted with a resourceVersion")
		meta["resourceVersion"] = formatRV(rev)
		assert.Equal(t, before, after)
	})
}

// TestWatch_events_share_their_encoding checks that watches served by the hub get
// one JSON encoding of an event (the same bytes), that it is the object as
// json.Marshal writes it (a deletion stamped with its own resourceVersion), and that
// Encoded runs once per format for all of them.
func TestWatch_events_share_their_encoding(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, Options{})
	var ws []*Watcher
	for _, shared := range []bool{true, true, false} {
		w, err := s.Watch(ctx, &resource.Project{}, WatchOptions{ResourceVersion: "0", SharedObjects: shared})
		require.NoError(t, err)
		defer w.Stop()
		ws = append(ws, w)
	}
	p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}, Annotations: map[string]string{"html": "<a &b>"}}}
	require.NoError(t, s.Create(ctx, p, CreateOptions{}))
	_, err := s.Delete(ctx, p, DeleteOptions{})
	require.NoError(t, err)
	var encodes atomic.Int32
	for _, typ := range []EventType{Added, Deleted} {
		var first []byte
		for i, w := range ws {
			var ev Event
			select {
			case ev = <-w.ResultChan():
			case <-time.After(10 * time.Second):
				require.FailNow(t, "no event")
			}
			require.Equal(t, typ, ev.Type, "%v", ev.Err)
			got, err := ev.JSON()
			require.NoError(t, err)
			want, err := json.Marshal(ev.Object)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			if typ == Deleted {
				assert.Equal(t, p.ResourceVersion, ev.Object.GetObjectMeta().ResourceVersion)
			}
			if i == 0 {
				first = got
			} else {
				assert.Same(t, &first[0], &got[0], "watch %d has bytes of its own", i)
			}
			enc, err := ev.Encoded("test", func(o resource.Object) ([]byte, error) {
				encodes.Add(1)
				return []byte(o.GetObjectMeta().ResourceVersion), nil
			})
			require.NoError(t, err)
			assert.Equal(t, ev.Object.GetObjectMeta().ResourceVersion, string(enc))
		}
	}
	assert.Equal(t, int32(2), encodes.Load(), "one encoding per event")
}
