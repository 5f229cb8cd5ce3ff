package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/internal/objcodec"
)

// continueToken is the content of a list's continue token.
type continueToken struct {
	V     string `json:"v"`
	RV    int64  `json:"rv"`
	Start string `json:"start"`
}

const continueVersion = "mgmt.store/v1"

// filter holds a list's or watch's parsed selectors.
type filter struct {
	labels resource.LabelSelector
	fields resource.FieldSelector
}

func parseFilter(labelSel, fieldSel string) (filter, error) {
	var f filter
	var err error
	if f.labels, err = resource.ParseLabelSelector(labelSel); err != nil {
		return f, err
	}
	if f.fields, err = resource.ParseFieldSelector(fieldSel); err != nil {
		return f, err
	}
	return f, nil
}

func (f *filter) empty() bool { return f.labels.Empty() && f.fields.Empty() }

func (f *filter) matches(obj resource.Object) bool {
	m := obj.GetObjectMeta()
	return f.labels.Matches(m.Labels) && f.fields.Matches(m.Name, m.Namespace)
}

// List fills list with the objects of its kind that opts select, in key order
// (namespace, then name), and sets the list's resourceVersion to the revision of the
// snapshot it was read from. With Limit, at most Limit items come back and
// metadata.continue is set when more remain; the next pages are served from the same
// snapshot.
//
// Errors: 400 for a malformed selector or continue token, or continue together with
// resourceVersion; 410 Expired when the continue token's snapshot is no longer kept;
// 504 Timeout when resourceVersion is newer than the store; 422 for bad options.
func (s *Store) List(ctx context.Context, list resource.ObjectList, opts ListOptions) error {
	k, err := s.scheme.KindOfList(list)
	if err != nil {
		return resource.NewBadRequest(err.Error()).WithCause(err)
	}
	f, err := parseFilter(opts.LabelSelector, opts.FieldSelector)
	if err != nil {
		return err
	}
	if opts.Limit < 0 {
		return resource.NewInvalid(k, "", resource.ErrorList{resource.Invalid(resource.NewPath("limit"), opts.Limit, "must be 0 or more")})
	}
	if k.Namespaced && opts.Namespace != "" {
		if errs := resource.ValidateNamespaceName(opts.Namespace, resource.NewPath("metadata", "namespace")); len(errs) > 0 {
			return resource.NewInvalid(k, "", errs)
		}
	}
	prefix := nsPrefix(k, opts.Namespace)
	rev, start, err := s.listStart(ctx, k, prefix, opts)
	if err != nil {
		return err
	}
	items := newListBuilder(s, k, list)
	items.raw = rawItemsFrom(ctx) // ListRaw collects the items' stored bytes
	if label, value, ok := f.labels.RequiredEquals(); ok && opts.Limit == 0 && opts.Continue == "" && rev == 0 && s.track.labelsReady() {
		return s.listByLabel(ctx, items, &f, prefix, label, value)
	}
	return s.listRange(ctx, items, &f, prefix, start, rev, int(opts.Limit))
}

// listStart returns where a list starts: the revision to read at (0: the current
// one) and the first key, from the continue token or the resourceVersion options.
func (s *Store) listStart(ctx context.Context, k *resource.KindInfo, prefix string, opts ListOptions) (int64, string, error) {
	if opts.Continue != "" {
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return 0, "", resource.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		tok, err := decodeContinue(opts.Continue, prefix)
		if err != nil {
			return 0, "", err
		}
		return tok.RV, tok.Start, nil
	}
	switch opts.ResourceVersionMatch {
	case "":
	case ResourceVersionMatchNotOlderThan, ResourceVersionMatchExact:
		if opts.ResourceVersion == "" {
			return 0, "", resource.NewInvalid(k, "", resource.ErrorList{resource.Forbidden(
				resource.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden unless resourceVersion is provided")})
		}
	default:
		return 0, "", resource.NewInvalid(k, "", resource.ErrorList{resource.NotSupported(
			resource.NewPath("resourceVersionMatch"), opts.ResourceVersionMatch,
			[]string{ResourceVersionMatchExact, ResourceVersionMatchNotOlderThan})})
	}
	n, err := parseRV(opts.ResourceVersion)
	if err != nil {
		return 0, "", err
	}
	if opts.ResourceVersionMatch == ResourceVersionMatchExact && n == 0 {
		return 0, "", resource.NewInvalid(k, "", resource.ErrorList{resource.Forbidden(
			resource.NewPath("resourceVersionMatch"), "resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"0\"")})
	}
	if err := s.waitForRevision(ctx, n); err != nil {
		return 0, "", err
	}
	if opts.ResourceVersionMatch == ResourceVersionMatchExact {
		return n, "", nil
	}
	return 0, "", nil
}

// listByLabel serves a list whose selector requires label=value from the label
// index: only the objects carrying it are read, at the index's revision, which is at
// least the store's revision when the list began.
func (s *Store) listByLabel(ctx context.Context, items *listBuilder, f *filter, prefix, label, value string) error {
	cur, err := s.b.Revision(ctx)
	if err != nil {
		return backendError(err)
	}
	keys, at, err := s.track.keysWithLabel(ctx, prefix, label, value, cur)
	if err != nil {
		return err
	}
	items.grow(len(keys))
	for _, key := range keys {
		kv, err := s.b.Get(ctx, key, at)
		if errors.Is(err, backend.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return backendError(err)
		}
		if _, err := items.add(kv, f); err != nil {
			return err
		}
	}
	return items.fill(at, "")
}

// listRange serves a list by reading the range under prefix from start, at rev,
// until limit items (0: all) matched the filter.
//
// A list without a limit reads the backend in chunks of listChunk keys at the
// revision of its first chunk, so that it holds the stored bytes of one chunk at a
// time besides the decoded items (a durable backend copies each value out). When a
// later chunk's revision has been compacted away meanwhile, the list starts over at
// the revision it was asked for (the current one when none) with the whole range in
// one read.
func (s *Store) listRange(ctx context.Context, items *listBuilder, f *filter, prefix, start string, rev int64, limit int) error {
	next := ""
	first, firstRev, whole := start, rev, false
	for {
		chunk := 0
		switch {
		case limit > 0:
			chunk = limit - items.len()
			if !f.empty() && chunk < 64 {
				chunk = 64
			}
		case !whole:
			chunk = listChunk
		}
		res, err := s.b.Range(ctx, backend.RangeOptions{Prefix: prefix, Start: start, Limit: chunk, Revision: rev})
		if err != nil {
			if limit == 0 && !whole && start != first && errors.Is(err, backend.ErrCompacted) {
				items.reset()
				start, rev, whole = first, firstRev, true
				continue
			}
			return backendError(err)
		}
		rev = res.Revision
		full := false
		if f.empty() {
			n := len(res.KVs)
			if res.More && limit == 0 && start == first {
				// Room for every item at once: growing the slice chunk by chunk
				// would copy a million items several times over.
				if c, ok := s.track.countNow(prefix, start); ok && c > n {
					n = c
				}
			}
			items.grow(n)
		}
		for i, kv := range res.KVs {
			added, err := items.add(kv, f)
			if err != nil {
				return err
			}
			if !added {
				continue
			}
			if limit > 0 && items.len() == limit {
				if i+1 < len(res.KVs) || res.More {
					next = kv.Key + "\x00"
				}
				full = true
				break
			}
		}
		if full || !res.More || len(res.KVs) == 0 {
			break
		}
		start = res.KVs[len(res.KVs)-1].Key + "\x00"
	}
	if err := items.fill(rev, next); err != nil {
		return err
	}
	if next != "" && f.empty() {
		// As kube-apiserver does for a paged list without a selector.
		if n, ok := s.track.countFrom(ctx, prefix, next, rev); ok {
			items.list.GetListMeta().RemainingItemCount = &n
		}
	}
	return nil
}

// countNow is the number of objects under prefix whose keys are from start on, as the
// label index has them now, without waiting for it to catch up with anything; ok is
// false while the index is being built. A list takes it as an estimate of its length.
func (t *tracker) countNow(prefix, start string) (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lscan != nil {
		return 0, false
	}
	return t.labels.countFrom(prefix, start), true
}

// listChunk is how many keys a list without a limit reads from the backend at a time.
const listChunk = 1000

// countWait is the longest a page waits for the index to reach its revision before it
// goes without a count.
const countWait = time.Second

// countFrom counts the objects under prefix whose keys are from start on, once the
// label index is built and has seen revision minRev: the remaining items of a paged
// list, from the index's revision (an estimate when writes came after the list's
// snapshot, as kube-apiserver's count from its watch cache is). It costs a binary
// search and a sum over the index's leaves after start (about N/100 additions), not a
// pass over the keys. ok is false when the index is not ready within countWait.
func (t *tracker) countFrom(ctx context.Context, prefix, start string, minRev int64) (int64, bool) {
	// The index is normally there already; a list does not wait long for a count.
	ctx, cancel := context.WithTimeout(ctx, countWait)
	defer cancel()
	for {
		t.mu.Lock()
		if t.lscan != nil {
			// The label index has every object only once it is built; a page does
			// not wait for the build.
			t.mu.Unlock()
			return 0, false
		}
		if t.rev >= minRev {
			n := t.labels.countFrom(prefix, start)
			t.mu.Unlock()
			return int64(n), true
		}
		ch := t.changedLocked()
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// listBuilder collects the items of a list. Into a resource.List it copies each
// object straight into the list's Items slice; into any other list it collects
// objects for SetItems.
type listBuilder struct {
	s        *Store
	k        *resource.KindInfo
	list     resource.ObjectList
	itemType reflect.Type      // *T
	items    reflect.Value     // the []T being filled (invalid: SetItems)
	n        int               // items filled
	objs     []resource.Object // for SetItems
	raw      *RawItems         // collects the stored bytes of the items (ListRaw); may be nil
}

var listMetaPkg = reflect.TypeFor[resource.ListMeta]().PkgPath()

func newListBuilder(s *Store, k *resource.KindInfo, list resource.ObjectList) *listBuilder {
	b := &listBuilder{s: s, k: k, list: list, itemType: reflect.TypeOf(list.NewItem())}
	lt := reflect.TypeOf(list)
	if lt.Kind() == reflect.Pointer && lt.Elem().PkgPath() == listMetaPkg && strings.HasPrefix(lt.Elem().Name(), "List[") {
		f := reflect.ValueOf(list).Elem().FieldByName("Items")
		if f.IsValid() && f.Kind() == reflect.Slice && reflect.PointerTo(f.Type().Elem()) == b.itemType {
			b.items = reflect.MakeSlice(f.Type(), 0, 0)
		}
	}
	return b
}

// reset drops the items added so far.
func (b *listBuilder) reset() {
	if b.items.IsValid() {
		for i := range b.n {
			b.items.Index(i).SetZero()
		}
	}
	b.n, b.objs = 0, nil
	b.raw.reset()
}

func (b *listBuilder) len() int {
	if b.items.IsValid() {
		return b.n
	}
	return len(b.objs)
}

// grow makes room for n more items.
func (b *listBuilder) grow(n int) {
	if !b.items.IsValid() || b.items.Cap()-b.n >= n {
		return
	}
	c := max(b.n+n, 2*b.items.Cap())
	grown := reflect.MakeSlice(b.items.Type(), c, c)
	reflect.Copy(grown, b.items.Slice(0, b.n))
	b.items = grown
}

// add adds the object stored in kv, stamped with its revision, when it matches f.
func (b *listBuilder) add(kv backend.KV, f *filter) (bool, error) {
	s, k := b.s, b.k
	if !b.items.IsValid() {
		obj := b.list.NewItem()
		if err := s.decodeTo(k, kv.Key, kv.ModRevision, kv.Value, kv.ModRevision, obj); err != nil {
			return false, err
		}
		if !f.matches(obj) {
			return false, nil
		}
		b.objs = append(b.objs, obj)
		b.raw.add(kv.Value, kv.ModRevision)
		return true, nil
	}
	b.grow(1)
	slot := b.items.Index(b.n).Addr().Interface().(resource.Object)
	if s.cache == nil || kv.ModRevision == 0 {
		if err := s.decodeTo(k, kv.Key, kv.ModRevision, kv.Value, kv.ModRevision, slot); err != nil {
			return false, err
		}
		if !f.matches(slot) {
			b.items.Index(b.n).SetZero()
			return false, nil
		}
	} else if e := s.cache.Entry(kv.Key, kv.ModRevision); e.Obj != nil && reflect.TypeOf(e.Obj) == b.itemType ||
		s.cache.HasRoom(len(kv.Value)) {
		// Cached, or there is room to cache it: filter on the shared object; copy
		// only what the list returns.
		src, rv, err := s.stored(k, kv.Key, kv.ModRevision, kv.Value, kv.ModRevision, b.itemType)
		if err != nil {
			return false, err
		}
		if !f.matches(src) {
			return false, nil
		}
		objcodec.DeepCopyInto(slot, src)
		slot.GetObjectMeta().ResourceVersion = rv
	} else {
		// Not cached and the cache is full: decode straight into the list, and
		// leave the cache as it is. A list of more objects than the cache holds
		// costs a decode per object it misses, whatever its length, and does not
		// replace the cache's objects with the ones it reads once.
		if err := s.unmarshal(k, kv.Key, kv.Value, slot); err != nil {
			return false, err
		}
		if !f.matches(slot) {
			b.items.Index(b.n).SetZero()
			return false, nil
		}
		slot.GetObjectMeta().ResourceVersion = formatRV(kv.ModRevision)
	}
	b.raw.add(kv.Value, kv.ModRevision)
	b.n++
	return true, nil
}

// fill puts the items, kind and list metadata into the list.
func (b *listBuilder) fill(rev int64, next string) error {
	list, k := b.list, b.k
	if b.items.IsValid() {
		reflect.ValueOf(list).Elem().FieldByName("Items").Set(b.items.Slice3(0, b.n, b.n))
	} else if err := list.SetItems(b.objs); err != nil {
		return resource.NewInternalError(err)
	}
	tm := list.GetTypeMeta()
	tm.Kind, tm.APIVersion = k.ListKind, k.APIVersion()
	lm := list.GetListMeta()
	*lm = resource.ListMeta{ResourceVersion: formatRV(rev)}
	if next != "" {
		lm.Continue = encodeContinue(continueToken{V: continueVersion, RV: rev, Start: next})
	}
	return nil
}

func encodeContinue(t continueToken) string {
	b, _ := json.Marshal(t) // a struct of strings and ints always encodes
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s, prefix string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return t, resource.NewBadRequest(fmt.Sprintf("continue key is not valid: %v", err)).WithCause(err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, resource.NewBadRequest(fmt.Sprintf("continue key is not valid: %v", err)).WithCause(err)
	}
	if t.V != continueVersion || t.RV <= 0 || !strings.HasPrefix(t.Start, prefix) {
		return t, resource.NewBadRequest("continue key is not valid: it does not belong to this list")
	}
	return t, nil
}
