package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/badger"
	"github.com/management-service/mgmt/store/memdb"
)

// Object name prefixes: the objects a get reads (seeded), the one an update
// rewrites, the ones a create adds, and the seeded objects of the list workloads.
const (
	prefixGet    = "get-"
	prefixUpdate = "upd-"
	prefixCreate = "new-"
	prefixList   = "vci-"
	getSeed      = 100 // objects a get picks from, as in store/bench_test.go
)

// Column names: the contenders.
const (
	colOursMem      = "ours, memdb"
	colOursBSync    = "ours, badger sync on"
	colOursBNoSync  = "ours, badger sync off"
	colFakeDefault  = "fake, default tracker"
	colFakeDefaultU = "fake, default, unstructured"
	colFakeDefaultC = "fake, default, ConfigMap"
	colFakePlain    = "fake, plain tracker"
	colFakePlainU   = "fake, plain, unstructured"
	colRawMem       = "raw go-memdb"
	colRawMemScan   = "raw go-memdb, scan"
	colRawBSync     = "raw badger sync on"
	colRawBNoSync   = "raw badger sync off"
)

// Row names: the operations.
const (
	rowCreate     = "create"
	rowGet        = "get"
	rowUpdate     = "update"
	rowList       = "list all"
	rowSelect     = "list, label selector matching 1%"
	rowWriters    = "concurrent writers"
	rowCreateSync = "create, badger"
	rowUpdateSync = "update, badger"

	rowScaleGet    = "scaling: get"
	rowScaleUpdate = "scaling: update"
	rowScaleCreate = "scaling: create"
	rowScaleSelect = "scaling: label-selector list (1%)"
	colScaleSmall  = "ours, memdb, small store"
	colScaleLarge  = "ours, memdb, large store"
)

// oursEnv holds our stores: one per backend for the single-object workloads, and
// two memdb stores seeded for the lists.
type oursEnv struct {
	mem, memSmall, memLarge *store.Store
	bSync, bNoSync          *store.Store
	closers                 []func()
}

func (e *oursEnv) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
}

func newOursEnv(ctx context.Context, cfg *config) (*oursEnv, error) {
	e := &oursEnv{}
	newMem := func() (*store.Store, error) {
		be := memdb.New(memdb.Options{})
		s, err := store.New(be, store.Options{})
		if err != nil {
			return nil, err
		}
		e.closers = append(e.closers, func() { _ = s.Close(); _ = be.Close() })
		return s, nil
	}
	newBadger := func(noSync bool) (*store.Store, error) {
		dir, err := cfg.tempDir("ours-badger")
		if err != nil {
			return nil, err
		}
		be, err := badger.Open(dir, badger.Options{NoSync: noSync})
		if err != nil {
			return nil, fmt.Errorf("open badger: %w", err)
		}
		s, err := store.New(be, store.Options{})
		if err != nil {
			_ = be.Close()
			return nil, err
		}
		e.closers = append(e.closers, func() { _ = s.Close(); _ = be.Close() })
		return s, nil
	}
	var err error
	if e.mem, err = newMem(); err != nil {
		return nil, err
	}
	if e.memSmall, err = newMem(); err != nil {
		return nil, err
	}
	if e.memLarge, err = newMem(); err != nil {
		return nil, err
	}
	if e.bSync, err = newBadger(false); err != nil {
		return nil, err
	}
	if e.bNoSync, err = newBadger(true); err != nil {
		return nil, err
	}
	for _, s := range []*store.Store{e.mem, e.bSync, e.bNoSync} {
		if err := oursSeed(ctx, s, prefixGet, getSeed); err != nil {
			return nil, err
		}
		if err := s.Create(ctx, oursInstance(prefixUpdate, 0), store.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	if err := oursSeed(ctx, e.memSmall, prefixList, cfg.small); err != nil {
		return nil, err
	}
	if err := oursSeed(ctx, e.memLarge, prefixList, cfg.large); err != nil {
		return nil, err
	}
	return e, nil
}

func oursSeed(ctx context.Context, s *store.Store, prefix string, n int) error {
	for i := 0; i < n; i++ {
		if err := s.Create(ctx, oursInstance(prefix, i), store.CreateOptions{}); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	return nil
}

// oursCreate creates new objects, built untimed.
func oursCreate(ctx context.Context, s *store.Store, row, col string) *bench {
	var objs []*resource.VirtualClusterInstance
	next := 0
	return &bench{row: row, col: col, allocs: true,
		prepare: func(n int) {
			objs = objs[:0]
			for i := 0; i < n; i++ {
				objs = append(objs, oursInstance(prefixCreate, next))
				next++
			}
		},
		run: func(n int) error {
			for _, o := range objs {
				if err := s.Create(ctx, o, store.CreateOptions{}); err != nil {
					return err
				}
			}
			return nil
		}}
}

func oursGet(ctx context.Context, s *store.Store, row, col string) *bench {
	return oursGetNamed(ctx, s, row, col, seedNames(prefixGet, getSeed))
}

// oursGetNamed reads the named objects in turn.
func oursGetNamed(ctx context.Context, s *store.Store, row, col string, names []string) *bench {
	out := &resource.VirtualClusterInstance{}
	return &bench{row: row, col: col, allocs: true, run: func(n int) error {
		for i := 0; i < n; i++ {
			name := names[i%len(names)]
			if err := s.Get(ctx, benchNamespace, name, out, store.GetOptions{}); err != nil {
				return err
			}
			if out.Name != name {
				return fmt.Errorf("got %q, want %q", out.Name, name)
			}
		}
		return nil
	}}
}

// oursUpdate rewrites one object with a new display name each time.
func oursUpdate(ctx context.Context, s *store.Store, row, col string) (*bench, error) {
	return oursUpdateNamed(ctx, s, row, col, objName(prefixUpdate, 0))
}

// oursUpdateNamed rewrites the named object with a new display name each time.
func oursUpdateNamed(ctx context.Context, s *store.Store, row, col, name string) (*bench, error) {
	obj := &resource.VirtualClusterInstance{}
	if err := s.Get(ctx, benchNamespace, name, obj, store.GetOptions{}); err != nil {
		return nil, err
	}
	names := displayNames()
	k := 0
	return &bench{row: row, col: col, allocs: true, run: func(n int) error {
		for i := 0; i < n; i++ {
			obj.Spec.DisplayName = names[k%len(names)]
			k++
			if err := s.Update(ctx, obj, store.UpdateOptions{}); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}

func oursList(ctx context.Context, s *store.Store, row, col string, opts store.ListOptions, want int) *bench {
	return &bench{row: row, col: col, allocs: true, run: func(n int) error {
		for i := 0; i < n; i++ {
			list := &resource.VirtualClusterInstanceList{}
			if err := s.List(ctx, list, opts); err != nil {
				return err
			}
			if len(list.Items) != want {
				return fmt.Errorf("listed %d, want %d", len(list.Items), want)
			}
		}
		return nil
	}}
}

// concurrent runs op for i in [0, n) spread over writers goroutines.
func concurrent(writers, n int, op func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var first error
	var once sync.Once
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := op(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// oursWriters creates new objects from cfg.writers goroutines.
func oursWriters(ctx context.Context, s *store.Store, row, col string, writers int) *bench {
	var objs []*resource.VirtualClusterInstance
	next := 0
	return &bench{row: row, col: col,
		prepare: func(n int) {
			objs = objs[:0]
			for i := 0; i < n; i++ {
				objs = append(objs, oursInstance("w-", next))
				next++
			}
		},
		run: func(n int) error {
			return concurrent(writers, n, func(i int) error {
				return s.Create(ctx, objs[i], store.CreateOptions{})
			})
		}}
}

func seedNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = objName(prefix, i)
	}
	return out
}

// displayNames are the values the updates cycle through (precomputed, so that no
// contender pays for formatting them).
func displayNames() []string {
	out := make([]string, 1024)
	for i := range out {
		out[i] = fmt.Sprintf("Renamed %d", i)
	}
	return out
}
