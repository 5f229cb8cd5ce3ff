package badger_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/badger"
)

// TestBank is REL-OCC-BANK: 1,000 accounts (Projects whose spec.description is the
// balance), 16 goroutines moving random amounts between two random accounts, each
// move one store transaction that reads both and updates both, while readers sum
// every balance from one List snapshot, at the latest revision and at a past one.
// The total never changes and no balance goes below zero: invariant violations
// must be 0. MGMT_BANK_DURATION (a Go duration, 60s by default) sets how long it runs.
func TestBank(t *testing.T) {
	duration := 60 * time.Second
	if v := os.Getenv("MGMT_BANK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "MGMT_BANK_DURATION=%q", v)
		duration = d
	}
	const (
		accounts = 1000
		initial  = 100
		movers   = 16
		readers  = 2
		total    = accounts * initial
	)
	b := open(t, t.TempDir(), badger.Options{})
	s, err := store.New(b, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	name := func(i int) string { return fmt.Sprintf("acct-%04d", i) }

	var seed sync.WaitGroup
	for g := range movers { // seeded concurrently: the commits are shared
		seed.Add(1)
		go func() {
			defer seed.Done()
			for i := g; i < accounts; i += movers {
				p := &resource.Project{ObjectMeta: resource.ObjectMeta{Name: name(i)}, Spec: resource.ProjectSpec{Description: strconv.Itoa(initial)}}
				assert.NoError(t, s.Create(ctx, p, store.CreateOptions{}))
			}
		}()
	}
	seed.Wait()
	require.False(t, t.Failed())

	var (
		transfers, skipped, gaveUp, reads, pastReads, violations atomic.Int64
		lastRV                                                   atomic.Int64
		stop                                                     = make(chan struct{})
		wg                                                       sync.WaitGroup
	)
	violation := func(format string, args ...any) {
		violations.Add(1)
		assert.Failf(t, "bank invariant violated", format, args...) // from the movers' and readers' goroutines too
	}
	sum := func(list *resource.ProjectList) (int, error) {
		n := 0
		for _, p := range list.Items {
			v, err := strconv.Atoi(p.Spec.Description)
			if err != nil {
				return 0, err
			}
			if v < 0 {
				return 0, fmt.Errorf("%s has balance %d", p.Name, v)
			}
			n += v
		}
		if len(list.Items) != accounts {
			return 0, fmt.Errorf("the list has %d accounts", len(list.Items))
		}
		return n, nil
	}
	for g := range movers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 77))
			for {
				select {
				case <-stop:
					return
				default:
				}
				from, to := rng.IntN(accounts), rng.IntN(accounts-1)
				if to >= from {
					to++
				}
				amount := 1 + rng.IntN(20)
				moved := false
				err := s.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
					a, c := &resource.Project{}, &resource.Project{}
					if err := tx.Get("", name(from), a); err != nil {
						return err
					}
					if err := tx.Get("", name(to), c); err != nil {
						return err
					}
					av, _ := strconv.Atoi(a.Spec.Description)
					cv, _ := strconv.Atoi(c.Spec.Description)
					moved = av >= amount
					if !moved {
						return nil
					}
					a.Spec.Description, c.Spec.Description = strconv.Itoa(av-amount), strconv.Itoa(cv+amount)
					if err := tx.Update(a, store.UpdateOptions{}); err != nil {
						return err
					}
					return tx.Update(c, store.UpdateOptions{})
				})
				switch {
				case errors.Is(err, resource.ErrConflict):
					gaveUp.Add(1) // too many retries in a row: nothing was written
				case err != nil:
					violation("transfer %s -> %s: %v", name(from), name(to), err)
					return
				case moved:
					transfers.Add(1)
				default:
					skipped.Add(1)
				}
			}
		}()
	}
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 78))
			for {
				select {
				case <-stop:
					return
				default:
				}
				list := &resource.ProjectList{}
				opts := store.ListOptions{}
				past := r == 1 && rng.IntN(2) == 0 && lastRV.Load() > 0
				if past { // a revision some transfers ago: served from the history
					opts = store.ListOptions{ResourceVersion: strconv.FormatInt(lastRV.Load(), 10), ResourceVersionMatch: store.ResourceVersionMatchExact}
				}
				if err := s.List(ctx, list, opts); err != nil {
					if past && errors.Is(err, resource.ErrExpired) {
						continue // compacted meanwhile
					}
					violation("list: %v", err)
					return
				}
				n, err := sum(list)
				switch {
				case err != nil:
					violation("snapshot at %s: %v", list.ResourceVersion, err)
				case n != total:
					violation("snapshot at %s sums to %d, want %d", list.ResourceVersion, n, total)
				}
				if past {
					pastReads.Add(1)
				} else {
					reads.Add(1)
					rv, _ := strconv.ParseInt(list.ResourceVersion, 10, 64)
					lastRV.Store(rv)
				}
			}
		}()
	}
	start := time.Now()
	timer := time.NewTimer(duration)
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)

	list := &resource.ProjectList{}
	require.NoError(t, s.List(context.Background(), list, store.ListOptions{}))
	n, err := sum(list)
	require.NoError(t, err)
	if n != total {
		violation("final sum %d, want %d", n, total)
	}
	batches, txns := badger.Batches(b)
	t.Logf("RESULT name=REL-OCC-BANK accounts=%d movers=%d readers=%d duration=%s transfers=%d txns_per_s=%.0f skipped_insufficient=%d gave_up_conflict=%d snapshot_reads=%d past_revision_reads=%d invariant_violations=%d backend_txns=%d badger_commits=%d",
		accounts, movers, readers, elapsed.Round(time.Second), transfers.Load(), float64(transfers.Load())/elapsed.Seconds(),
		skipped.Load(), gaveUp.Load(), reads.Load(), pastReads.Load(), violations.Load(), txns, batches)
	assert.Zero(t, violations.Load(), "invariant violations")
	assert.Positive(t, transfers.Load())
	assert.Positive(t, reads.Load())
}
