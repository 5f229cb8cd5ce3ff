package store

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
)

// The tracker's label index, as List uses it: the keys of the objects carrying a
// label, at a revision the index has reached.
//
// Unlike the sparse index, it covers every object, so a store does not wait for it at
// open: it is built in the background by the loop, a page of objects at a time
// between watch events (the rebuild's rules, tracker_rebuild.go), and List serves
// selectors by scanning until it is ready (labelsReady). The same pass writes the
// records an older store did not (repairRecord).

// labelPage is how many objects one step of the label build reads.
const labelPage = 500

// labelsOf encodes labels as one string, "k\x00v\x00" for each label in key order:
// smaller than a map, and comparable.
func labelsOf(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	keys := make([]string, 0, len(labels))
	n := 0
	for k, v := range labels {
		keys = append(keys, k)
		n += len(k) + len(v) + 2
	}
	sort.Strings(keys)
	var b strings.Builder
	b.Grow(n)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}

// relabel returns labelsOf(labels) made from enc, the encoding of the object's
// labels before: when labels has no key enc lacks, the keys keep enc's order and
// only the values and removals need a pass, where labelsOf sorts every key (35 ms
// of a one-label patch of an object with 40,000 labels). ok is false when labels
// adds a key (or enc is torn): the caller encodes from scratch.
func relabel(enc string, labels map[string]string) (_ string, ok bool) {
	var b strings.Builder
	b.Grow(len(enc))
	n := 0
	for enc != "" {
		i := strings.IndexByte(enc, 0)
		if i < 0 {
			return "", false
		}
		k, rest := enc[:i], enc[i+1:]
		j := strings.IndexByte(rest, 0)
		if j < 0 {
			return "", false
		}
		enc = rest[j+1:]
		v, found := labels[k]
		if !found {
			continue // removed
		}
		n++
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(v)
		b.WriteByte(0)
	}
	if n != len(labels) {
		return "", false
	}
	return b.String(), true
}

// eachLabel calls fn with "label\x00value" for each label of an encoded set.
func eachLabel(enc string, fn func(lv string)) {
	for enc != "" {
		i := strings.IndexByte(enc, 0)
		j := i + 1 + strings.IndexByte(enc[i+1:], 0)
		fn(enc[:j])
		enc = enc[j+1:]
	}
}

// setLabelsLocked records that the object at key exists with labels enc (present),
// or that it does not (!present).
func (t *tracker) setLabelsLocked(key, enc string, present bool) {
	if present {
		t.labels.set(key, enc)
	} else {
		t.labels.remove(key)
	}
}

// labelsReady reports whether the label index covers every object, so that List may
// serve a selector from it.
func (t *tracker) labelsReady() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lscan == nil
}

// keysWithLabel waits until the index has seen revision minRev, then returns, sorted,
// the keys under prefix whose objects carry label=value at the index's revision, and
// that revision. Reading those keys at that revision gives a consistent list. While
// the label index is being built it waits for it too.
func (t *tracker) keysWithLabel(ctx context.Context, prefix, label, value string, minRev int64) ([]string, int64, error) {
	for {
		t.mu.Lock()
		if t.rev >= minRev && t.lscan == nil {
			keys := t.labels.keysWith(prefix, label+"\x00"+value)
			rev := t.rev
			t.mu.Unlock()
			return keys, rev, nil
		}
		if t.stalled {
			// The index does not follow the backend: say so rather than wait for it.
			err := t.fault
			t.mu.Unlock()
			return nil, 0, resource.NewServiceUnavailable("store: label index does not follow the backend: " + err.Error()).
				WithCause(fmt.Errorf("%w: %w", ErrBackground, err))
		}
		ch := t.changedLocked()
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, 0, backendError(ctx.Err())
		}
	}
}

// labelScan is the state of a label build: the pages read, and the index they
// build, which replaces the current one once the build is complete.
type labelScan struct {
	scanState[struct{}]
	idx *labelIndex
}

// startLabelsLocked starts a build of the label index: until it ends, List serves
// selectors by scanning.
func (t *tracker) startLabelsLocked() {
	t.lscan = &labelScan{idx: &labelIndex{}}
	t.signalLocked()
}

// labelEventLocked applies an object's watch event to the label index, or to the
// build in progress.
func (t *tracker) labelEventLocked(be backend.Event) {
	key := be.KV.Key
	if t.lscan == nil {
		if be.Type == backend.EventDelete {
			t.setLabelsLocked(key, "", false)
			return
		}
		info := t.infoOfEvent(be)
		if info == nil {
			t.setLabelsLocked(key, "", false)
			return
		}
		if old, had := t.labels.labelsAt(key); had {
			if enc, ok := relabel(old, info.labels); ok {
				if enc != old {
					t.setLabelsLocked(key, enc, true)
				}
				return
			}
		}
		t.setLabelsLocked(key, labelsOf(info.labels), true)
		return
	}
	at, ok := t.lscan.covered(key)
	if !ok || be.Revision <= at {
		if be.Type == backend.EventPut {
			t.take(key, be.KV.Value) // the page that covers it reads it
		}
		return
	}
	if be.Type == backend.EventDelete {
		t.lscan.idx.remove(key)
		return
	}
	if info := t.infoOfEvent(be); info != nil {
		t.lscan.idx.set(key, labelsOfInfo(info))
	} else {
		t.lscan.idx.remove(key)
	}
}

func labelsOfInfo(info *objInfo) string {
	if info == nil {
		return ""
	}
	return labelsOf(info.labels)
}

// labelStep reads the next page of the label build, and installs the new index once
// it is complete and the watch has caught up with it. It runs on the loop's goroutine.
func (t *tracker) labelStep(ctx context.Context) error {
	t.mu.Lock()
	sc := t.lscan
	t.mu.Unlock()
	if sc == nil || sc.done {
		t.finishLabels()
		return nil
	}
	res, err := t.s.b.Range(ctx, backend.RangeOptions{Prefix: "/", Start: sc.cursor, Limit: labelPage})
	if err != nil {
		return err
	}
	type found struct {
		key     string
		modRev  int64
		info    *objInfo
		missing bool
	}
	var repair []found
	t.mu.Lock()
	if t.lscan != sc {
		t.mu.Unlock()
		return nil // a rebuild started another build meanwhile
	}
	sc.pages = append(sc.pages, scanPage{lo: sc.cursor, rev: res.Revision})
	sc.top = max(sc.top, res.Revision)
	for _, kv := range res.KVs {
		info := t.s.infoOf(kv.Key, kv.Value)
		if info == nil {
			continue
		}
		sc.idx.set(kv.Key, labelsOf(info.labels))
		if info.relevant() && t.objs[kv.Key] == nil {
			repair = append(repair, found{key: kv.Key, modRev: kv.ModRevision, info: info})
		}
	}
	if !res.More || len(res.KVs) == 0 {
		sc.done = true
	} else {
		sc.cursor = res.KVs[len(res.KVs)-1].Key + "\x00"
	}
	t.mu.Unlock()
	for _, f := range repair {
		if err := t.repairRecord(ctx, f.key, f.modRev, res.Revision, f.info); err != nil {
			return err
		}
	}
	t.finishLabels()
	return nil
}

// finishLabels installs the built label index once every page is read and the index
// has reached the newest page's revision.
func (t *tracker) finishLabels() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finishLabelsLocked()
}

func (t *tracker) finishLabelsLocked() {
	sc := t.lscan
	if sc == nil || !sc.done || t.rev < sc.top {
		return
	}
	t.labels = sc.idx
	t.lscan = nil
	t.signalLocked()
}

// building reports whether the label build has pages left to read.
func (t *tracker) building() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lscan != nil && !t.lscan.done
}

// objectCount is the number of objects the label index holds; while it is built
// after open, the number seen so far.
func (t *tracker) objectCountLocked() int {
	n := t.labels.len()
	if t.lscan != nil {
		n = max(n, t.lscan.idx.len())
	}
	return n
}
