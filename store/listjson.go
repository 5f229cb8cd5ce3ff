package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/resource/jsonscan"
)

// Lists written from the stored bytes.
//
// A list of a thousand objects used to be decoded (or copied from the object cache)
// item by item and then encoded again by the HTTP layer through encoding/json, which
// was most of a list's CPU. [AppendListJSON] writes a list as json.Marshal would,
// taking each item from the bytes the store read it from, with its resourceVersion
// spliced in ([Event.JSON] does the same for watch events); an item it has no bytes
// for goes through encoding/json.
//
// The bytes are collected while the list is filled: [Store.ListRaw] is [Store.List]
// that also returns them. The list may be filtered afterwards (an item the caller may
// not see dropped); items are matched to their bytes by position, namespace, name
// and resourceVersion, so a dropped item only skips its bytes.

// RawItems are the stored bytes of the items of a list, in the list's order.
type RawItems struct {
	k     *resource.KindInfo
	items []rawItem
}

// rawItem is one item's stored bytes and the revision it is stamped with.
type rawItem struct {
	data []byte
	rev  int64
}

type rawItemsKey struct{}

// rawItemsFrom returns the RawItems a list run under ctx collects into, nil when it
// collects none.
func rawItemsFrom(ctx context.Context) *RawItems {
	r, _ := ctx.Value(rawItemsKey{}).(*RawItems)
	return r
}

// reset drops the items recorded so far; r may be nil.
func (r *RawItems) reset() {
	if r != nil {
		clear(r.items)
		r.items = r.items[:0]
	}
}

// add records the stored bytes of the next item of the list; r may be nil.
func (r *RawItems) add(data []byte, rev int64) {
	if r != nil {
		r.items = append(r.items, rawItem{data: data, rev: rev})
	}
}

// ListRaw is [Store.List] that also returns the stored bytes of the items, for
// [AppendListJSON].
func (s *Store) ListRaw(ctx context.Context, list resource.ObjectList, opts ListOptions) (*RawItems, error) {
	k, err := s.scheme.KindOfList(list)
	if err != nil {
		return nil, resource.NewBadRequest(err.Error()).WithCause(err)
	}
	raw := &RawItems{k: k}
	if err := s.List(context.WithValue(ctx, rawItemsKey{}, raw), list, opts); err != nil {
		return nil, err
	}
	return raw, nil
}

// AppendListJSON appends list to dst as json.Marshal writes it (a list of kind
// "<Kind>List": kind, apiVersion, metadata, items), each item from raw when raw holds
// its stored bytes (raw may be nil). Items must not have been changed since the store
// filled the list.
func AppendListJSON(dst []byte, list resource.ObjectList, raw *RawItems) ([]byte, error) {
	if raw == nil || len(raw.items) == 0 {
		b, err := json.Marshal(list)
		if err != nil {
			return nil, resource.NewInternalError(fmt.Errorf("store: encode %T: %w", list, err))
		}
		return append(dst, b...), nil
	}
	tm := list.GetTypeMeta()
	dst = append(dst, '{')
	if tm.Kind != "" {
		dst = append(dst, `"kind":`...)
		dst = jsonscan.AppendQuote(dst, []byte(tm.Kind))
		dst = append(dst, ',')
	}
	if tm.APIVersion != "" {
		dst = append(dst, `"apiVersion":`...)
		dst = jsonscan.AppendQuote(dst, []byte(tm.APIVersion))
		dst = append(dst, ',')
	}
	meta, err := json.Marshal(list.GetListMeta())
	if err != nil {
		return nil, resource.NewInternalError(fmt.Errorf("store: encode list metadata: %w", err))
	}
	dst = append(dst, `"metadata":`...)
	dst = append(dst, meta...)
	dst = append(dst, `,"items":`...)
	if list.Len() == 0 && isNilItems(list) {
		return append(dst, "null}"...), nil
	}
	dst = append(dst, '[')
	next := 0 // the next raw item to match
	for i := 0; i < list.Len(); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		it := list.Item(i)
		var ok bool
		if dst, ok = raw.match(dst, it, &next); ok {
			continue
		}
		b, err := json.Marshal(it)
		if err != nil {
			return nil, resource.NewInternalError(fmt.Errorf("store: encode %T: %w", it, err))
		}
		dst = append(dst, b...)
	}
	return append(dst, "]}"...), nil
}

// match appends to dst the JSON of it from its stored bytes: the first raw item from
// *next on that has its namespace, name and resourceVersion; false when there is
// none (or its bytes are not as the store writes them).
func (r *RawItems) match(dst []byte, it resource.Object, next *int) ([]byte, bool) {
	if r == nil {
		return dst, false
	}
	m := it.GetObjectMeta()
	var rv [20]byte
	for j := *next; j < len(r.items); j++ {
		ri := r.items[j]
		if string(strconv.AppendInt(rv[:0], ri.rev, 10)) != m.ResourceVersion {
			continue
		}
		h, ok := scanMetaHead(r.k, ri.data)
		if !ok || !jsonString(h.name, m.Name) || !(m.Namespace == "" && h.namespace == nil || jsonString(h.namespace, m.Namespace)) {
			continue
		}
		*next = j + 1
		dst = append(dst, ri.data[:h.at]...)
		dst = append(dst, `"resourceVersion":"`...)
		dst = strconv.AppendInt(dst, ri.rev, 10)
		dst = append(dst, `",`...)
		return append(dst, ri.data[h.at:]...), true
	}
	return dst, false
}

// jsonString reports whether the content v of a JSON string as written (without its
// quotes) is s.
func jsonString(v []byte, s string) bool {
	return v != nil && string(jsonscan.Unquote(v)) == s
}

// isNilItems reports whether list's items are nil (json.Marshal writes null), as
// opposed to empty ([]).
func isNilItems(list resource.ObjectList) bool {
	b, err := json.Marshal(list)
	return err == nil && len(b) >= len(`"items":null}`) && string(b[len(b)-len(`"items":null}`):]) == `"items":null}`
}
