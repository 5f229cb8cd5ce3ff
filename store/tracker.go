package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/maphash"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
)

// tracker keeps an index of the metadata the store's background work needs (owner
// references, finalizers, deletion deadlines), derived from the stored state: a scan
// at start, then the backend's watch. Because it is derived from what is stored, the
// reaper and the garbage collector pick up their work again after a restart of a
// durable backend.
type tracker struct {
	s *Store

	mu         sync.Mutex
	objs       map[string]*objInfo            // key → metadata summary
	uidKey     map[string]string              // uid → key
	dependents map[string]map[string]struct{} // owner uid → dependent keys
	reap       map[string]time.Time           // key → deadline of a finalizer-free terminating object
	labels     map[string]map[string]struct{} // "label\x00value" → keys of the objects carrying it
	queue      map[string]struct{}            // keys the collector must look at
	rev        int64                          // last revision applied to the index
	busy       bool                           // the loop is working on the queue or reaping
	leading    bool                           // this store runs the reaper and the collector
	changed    chan struct{}                  // closed and dropped when rev or busy change (nil: nobody waits)
	kick       chan struct{}
	w          backend.Watcher

	// Summaries of this store's own writes, offered just before they commit so that
	// the loop need not decode the value again when the watch delivers it (the
	// watch is often quicker than the writer's return). A summary is a function of
	// the key and the stored bytes, so the loop takes one only for exactly the bytes
	// it was made from: a value written by another store on the same backend, or
	// one whose summary was dropped, is decoded.
	pmu     sync.Mutex
	seed    maphash.Seed
	pending map[pendingKey]pendingInfo // offered and not taken yet
}

// pendingKey finds an offer by key and a hash of the value, so that the offers of
// several writes of one key, made before the loop reaches the first, are all kept.
type pendingKey struct {
	key  string
	hash uint64
}

type pendingInfo struct {
	value []byte
	info  *objInfo
}

// maxPending bounds the offered summaries (a loop far behind the writers could
// otherwise hold many); beyond it an arbitrary one is dropped, and its value decoded
// when the watch delivers it.
const maxPending = 4096

type objInfo struct {
	kind       *resource.KindInfo
	key        string
	namespace  string
	name       string
	uid        string
	owners     []resource.OwnerReference
	finalizers []string
	deletion   *time.Time
	labels     map[string]string
}

// metaOnly decodes just the metadata of a stored object.
type metaOnly struct {
	Metadata resource.ObjectMeta `json:"metadata"`
}

func newTracker(ctx context.Context, s *Store) (*tracker, error) {
	t := &tracker{s: s, kick: make(chan struct{}, 1), leading: s.opts.Elector == nil,
		seed: maphash.MakeSeed(), pending: map[pendingKey]pendingInfo{}}
	if err := t.resync(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// resync rebuilds the index from a scan and restarts the watch after it.
func (t *tracker) resync(ctx context.Context) error {
	if t.w != nil {
		t.w.Stop()
		t.w = nil
	}
	objs := map[string]*objInfo{}
	var rev int64
	start := ""
	for {
		res, err := t.s.b.Range(ctx, backend.RangeOptions{Prefix: "/", Start: start, Limit: 1000, Revision: rev})
		if err != nil {
			return backendError(err)
		}
		rev = res.Revision
		for _, kv := range res.KVs {
			if info := t.s.infoOf(kv.Key, kv.Value); info != nil {
				objs[kv.Key] = info
			}
		}
		if !res.More || len(res.KVs) == 0 {
			break
		}
		start = res.KVs[len(res.KVs)-1].Key + "\x00"
	}
	w, err := t.s.b.Watch(ctx, backend.WatchOptions{Prefix: "/", StartRevision: rev + 1, ProgressNotify: true})
	if err != nil {
		return backendError(err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.w = w
	t.objs, t.uidKey = map[string]*objInfo{}, map[string]string{}
	t.dependents, t.reap, t.queue = map[string]map[string]struct{}{}, map[string]time.Time{}, map[string]struct{}{}
	t.labels = map[string]map[string]struct{}{}
	for key, info := range objs {
		t.setLocked(key, info)
	}
	t.rev = rev
	t.signalLocked()
	return nil
}

// offer gives the loop the summary of value, about to be written at key.
func (t *tracker) offer(key string, value []byte, info *objInfo) {
	pk := pendingKey{key: key, hash: maphash.Bytes(t.seed, value)}
	t.pmu.Lock()
	if _, ok := t.pending[pk]; !ok && len(t.pending) >= maxPending {
		for k := range t.pending {
			delete(t.pending, k)
			break
		}
	}
	t.pending[pk] = pendingInfo{value: value, info: info}
	t.pmu.Unlock()
}

// take returns the summary offered for exactly value at key, or nil.
func (t *tracker) take(key string, value []byte) *objInfo {
	pk := pendingKey{key: key, hash: maphash.Bytes(t.seed, value)}
	t.pmu.Lock()
	defer t.pmu.Unlock()
	p, ok := t.pending[pk]
	if !ok || !bytes.Equal(p.value, value) {
		return nil
	}
	delete(t.pending, pk)
	return p.info
}

// infoOf summarises a stored object; nil for keys of kinds the store does not know.
func (s *Store) infoOf(key string, value []byte) *objInfo {
	k := s.kindOfKey(key)
	if k == nil {
		return nil
	}
	var m metaOnly
	if err := json.Unmarshal(value, &m); err != nil {
		s.log.Error("store: unreadable object in storage", "key", key, "err", err)
		return nil
	}
	return summarize(k, key, &m.Metadata)
}

// summarize builds the summary of an object of kind k at key with metadata m. The
// summary shares m's lists and maps: m must not change afterwards.
func summarize(k *resource.KindInfo, key string, m *resource.ObjectMeta) *objInfo {
	info := &objInfo{kind: k, key: key, namespace: m.Namespace, name: m.Name,
		uid: m.UID, owners: m.OwnerReferences, finalizers: m.Finalizers, labels: m.Labels}
	if m.DeletionTimestamp != nil {
		d := m.DeletionTimestamp.Time
		info.deletion = &d
	}
	return info
}

// kindOfKey finds the kind whose key prefix key has.
func (s *Store) kindOfKey(key string) *resource.KindInfo {
	for _, k := range s.scheme.Kinds() {
		if strings.HasPrefix(key, keyPrefix(k)) {
			return k
		}
	}
	return nil
}

// setLocked puts (info != nil) or removes a key in the index and queues the work the
// change causes.
func (t *tracker) setLocked(key string, info *objInfo) {
	old := t.objs[key]
	// Most writes keep the labels: then the label index stays as it is.
	sameLabels := old != nil && info != nil && maps.Equal(old.labels, info.labels)
	if old != nil {
		for _, r := range old.owners {
			if d := t.dependents[r.UID]; d != nil {
				delete(d, key)
				if len(d) == 0 {
					delete(t.dependents, r.UID)
				}
			}
			// An owner waiting for its dependents may be free now.
			if ok := t.uidKey[r.UID]; ok != "" {
				t.queue[ok] = struct{}{}
			}
		}
		if info == nil || info.uid != old.uid {
			delete(t.uidKey, old.uid)
			for d := range t.dependents[old.uid] {
				t.queue[d] = struct{}{}
			}
		}
		for l, v := range old.labels {
			if sameLabels {
				break
			}
			if set := t.labels[l+"\x00"+v]; set != nil {
				delete(set, key)
				if len(set) == 0 {
					delete(t.labels, l+"\x00"+v)
				}
			}
		}
		delete(t.objs, key)
		delete(t.reap, key)
	}
	if info == nil {
		return
	}
	t.objs[key] = info
	for l, v := range info.labels {
		if sameLabels {
			break
		}
		set := t.labels[l+"\x00"+v]
		if set == nil {
			set = map[string]struct{}{}
			t.labels[l+"\x00"+v] = set
		}
		set[key] = struct{}{}
	}
	t.uidKey[info.uid] = key
	for _, r := range info.owners {
		d := t.dependents[r.UID]
		if d == nil {
			d = map[string]struct{}{}
			t.dependents[r.UID] = d
		}
		d[key] = struct{}{}
	}
	if len(info.owners) > 0 {
		t.queue[key] = struct{}{}
	}
	if info.deletion != nil {
		if len(info.finalizers) == 0 {
			t.reap[key] = *info.deletion
		}
		for _, f := range info.finalizers {
			if f == FinalizerOrphan || f == FinalizerForegroundDeletion {
				t.queue[key] = struct{}{}
			}
		}
		for d := range t.dependents[info.uid] {
			t.queue[d] = struct{}{}
		}
	}
}

// campaign runs e's elections until ctx ends, and switches the reaper and the
// collector on while this store leads.
func (t *tracker) campaign(ctx context.Context, e Elector) {
	for ctx.Err() == nil {
		lost, err := e.Campaign(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			t.s.log.Warn("store: leader election failed; trying again", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		t.s.log.Info("store: leading the background work")
		t.mu.Lock()
		t.leading = true
		// What the previous leader left undone: look at every object again.
		for key, info := range t.objs {
			if len(info.owners) > 0 || info.deletion != nil {
				t.queue[key] = struct{}{}
			}
		}
		t.signalLocked()
		t.mu.Unlock()
		t.notify()
		select {
		case <-lost:
		case <-ctx.Done():
		}
		t.mu.Lock()
		t.leading = false
		t.signalLocked()
		t.mu.Unlock()
		t.s.log.Info("store: no longer leading the background work")
	}
}

// Leading reports whether this store runs the reaper and the garbage collector: always
// without an [Options.Elector], else while the elector names it the leader.
func (s *Store) Leading() bool {
	s.track.mu.Lock()
	defer s.track.mu.Unlock()
	return s.track.leading
}

func (t *tracker) signalLocked() {
	// Only a waiter needs a channel (changedLocked makes one): most changes have
	// none to wake.
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
}

// changedLocked returns a channel that is closed at the next change of rev or busy.
func (t *tracker) changedLocked() <-chan struct{} {
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return t.changed
}

// notify wakes the loop.
func (t *tracker) notify() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// run applies watch events to the index, reaps expired grace periods and collects
// garbage until ctx ends.
func (t *tracker) run(ctx context.Context) {
	var timer <-chan time.Time
	var timerAt time.Time
	for {
		t.work(ctx)
		// Arm a timer for the earliest deadline still in the future.
		t.mu.Lock()
		var next time.Time
		for _, d := range t.reap {
			if next.IsZero() || d.Before(next) {
				next = d
			}
		}
		t.mu.Unlock()
		if !next.IsZero() && (timer == nil || next.Before(timerAt)) {
			timerAt = next
			timer = t.s.clock.After(next.Sub(t.s.clock.Now()))
		}
		select {
		case <-ctx.Done():
			t.w.Stop()
			return
		case <-t.kick:
		case <-timer:
			timer = nil
		case be, ok := <-t.w.Events():
			if !ok {
				err := t.w.Err()
				if ctx.Err() != nil {
					return
				}
				if errors.Is(err, backend.ErrClosed) {
					t.s.log.Info("store: backend closed; background work stops")
					<-ctx.Done()
					return
				}
				t.s.log.Warn("store: tracker watch ended; rescanning", "err", err)
				if err := t.resync(ctx); err != nil {
					t.s.log.Error("store: tracker rescan failed", "err", err)
					select {
					case <-ctx.Done():
						return
					case <-t.s.clock.After(time.Second):
					}
				}
				continue
			}
			t.apply(be)
		}
	}
}

// apply applies one event and every event already waiting.
func (t *tracker) apply(be backend.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		switch be.Type {
		case backend.EventPut:
			info := t.take(be.KV.Key, be.KV.Value)
			if info == nil {
				info = t.s.infoOf(be.KV.Key, be.KV.Value)
			}
			t.setLocked(be.KV.Key, info)
		case backend.EventDelete:
			t.setLocked(be.KV.Key, nil)
			t.s.cache.drop(be.KV.Key)
		}
		if be.Revision > t.rev {
			t.rev = be.Revision
		}
		select {
		case next, ok := <-t.w.Events():
			if !ok {
				t.signalLocked()
				return
			}
			be = next
			continue
		default:
		}
		break
	}
	t.signalLocked()
}

// catchUp applies watch events until the index has seen revision rev, so that a
// decision of the collector never rests on an index older than the state it reads.
// It runs on the loop's goroutine, the only reader of the watch.
func (t *tracker) catchUp(ctx context.Context, rev int64) {
	for {
		t.mu.Lock()
		done := t.rev >= rev
		t.mu.Unlock()
		if done {
			return
		}
		select {
		case be, ok := <-t.w.Events():
			if !ok {
				return
			}
			t.apply(be)
		case <-ctx.Done():
			return
		}
	}
}

// work reaps what is due and runs the collector over the queue.
func (t *tracker) work(ctx context.Context) {
	t.mu.Lock()
	t.busy = true
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.busy = false
		t.signalLocked()
		t.mu.Unlock()
	}()
	now := t.s.clock.Now()
	t.mu.Lock()
	if !t.leading {
		// The leader does this work; a store that becomes leader looks at every
		// object again.
		clear(t.queue)
		t.mu.Unlock()
		return
	}
	var due []string
	for key, d := range t.reap {
		if !now.Before(d) {
			due = append(due, key)
		}
	}
	t.mu.Unlock()
	for _, key := range due {
		if err := t.s.reapKey(ctx, key); err != nil && ctx.Err() == nil {
			t.s.log.Error("store: reaper", "key", key, "err", err)
		}
	}
	for i := 0; i < 10000; i++ {
		t.mu.Lock()
		var key string
		for k := range t.queue {
			key = k
			break
		}
		if key != "" {
			delete(t.queue, key)
		}
		t.mu.Unlock()
		if key == "" || ctx.Err() != nil {
			return
		}
		if err := t.s.collect(ctx, key); err != nil && ctx.Err() == nil {
			t.s.log.Error("store: garbage collector", "key", key, "err", err)
		}
	}
}

// Settle waits until the store's background work has caught up: every write up to
// now is in its index, grace periods that have run out by the store's clock are
// reaped, and garbage collection has nothing left to do. Tests call it after a delete
// or a step of a fake clock to observe the outcome deterministically. On a store that
// is not [Store.Leading], it waits for the index only: the leader does the rest.
func (s *Store) Settle(ctx context.Context) error {
	for i := 0; ; i++ {
		rev, err := s.b.Revision(ctx)
		if err != nil {
			return backendError(err)
		}
		// Wait until the index has seen rev.
		for {
			t := s.track
			t.mu.Lock()
			caught := t.rev >= rev
			ch := t.changedLocked()
			t.mu.Unlock()
			if caught {
				break
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return backendError(ctx.Err())
			}
		}
		// Let the loop run its work once more, then check that nothing changed.
		s.track.notify()
		for {
			t := s.track
			t.mu.Lock()
			idle := !t.busy && len(t.queue) == 0 && (!t.leading || !t.dueLocked(s.clock.Now()))
			ch := t.changedLocked()
			t.mu.Unlock()
			if idle {
				break
			}
			s.track.notify()
			select {
			case <-ch:
			case <-ctx.Done():
				return backendError(ctx.Err())
			}
		}
		after, err := s.b.Revision(ctx)
		if err != nil {
			return backendError(err)
		}
		if after == rev {
			return nil
		}
	}
}

// keysWithLabel waits until the index has seen revision minRev, then returns, sorted,
// the keys under prefix whose objects carry label=value at the index's revision, and
// that revision. Reading those keys at that revision gives a consistent list.
func (t *tracker) keysWithLabel(ctx context.Context, prefix, label, value string, minRev int64) ([]string, int64, error) {
	for {
		t.mu.Lock()
		if t.rev >= minRev {
			var keys []string
			for k := range t.labels[label+"\x00"+value] {
				if strings.HasPrefix(k, prefix) {
					keys = append(keys, k)
				}
			}
			rev := t.rev
			t.mu.Unlock()
			sort.Strings(keys)
			return keys, rev, nil
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

func (t *tracker) dueLocked(now time.Time) bool {
	for _, d := range t.reap {
		if !now.Before(d) {
			return true
		}
	}
	return false
}

// reapKey removes a terminating object without finalizers whose grace period is over.
func (s *Store) reapKey(ctx context.Context, key string) error {
	_, err := s.runTxn(ctx, false, func(tx *Tx) error {
		e, err := tx.get(key)
		if err != nil || e.value == nil {
			return err
		}
		k := s.kindOfKey(key)
		if k == nil {
			return nil
		}
		cur, err := s.decode(k, key, e.rev, e.value, e.rev)
		if err != nil {
			return err
		}
		m := cur.GetObjectMeta()
		if m.DeletionTimestamp == nil || len(m.Finalizers) > 0 || s.clock.Now().Before(m.DeletionTimestamp.Time) {
			return nil
		}
		_, err = tx.remove(k, key, e, cur, k.New())
		return err
	})
	return err
}
