package store

import (
	"context"
	"errors"
	"time"

	"github.com/management-service/mgmt/store/backend"
)

// Outcomes of a backend transaction, as [Observer.Commit] reports them.
const (
	// OutcomeCommitted is a transaction the backend applied.
	OutcomeCommitted = "committed"
	// OutcomeConflict is a transaction refused because something it read changed:
	// the write runs again, or ends in 409 Conflict after too many tries.
	OutcomeConflict = "conflict"
	// OutcomeError is a transaction the backend failed.
	OutcomeError = "error"
)

// Observer receives what the store measures, for a host's metrics. Its methods are
// called on the write path: they must be quick and safe for concurrent use.
type Observer interface {
	// Commit reports one transaction the store sent to the backend for a write: how
	// long the backend took and its outcome (OutcomeCommitted, OutcomeConflict or
	// OutcomeError).
	Commit(d time.Duration, outcome string)
}

// Stats is a snapshot of the store's size, for a host's metrics.
type Stats struct {
	// Objects is the number of objects stored, as of Revision.
	Objects int
	// Revision is the last revision the store has applied to its index.
	Revision int64
	// CompactRevision is the oldest revision the backend can still read and watch
	// from (0 when it does not say); Revision − CompactRevision is the length of the
	// history it keeps.
	CompactRevision int64
}

// Stats returns the store's size. It reads the backend's compaction point, the only
// part that may block.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	s.track.mu.Lock()
	st := Stats{Objects: s.track.objectCountLocked(), Revision: s.track.rev}
	s.track.mu.Unlock()
	if c, ok := s.b.(backend.Compactor); ok {
		rev, err := c.CompactRevision(ctx)
		if err != nil {
			return st, backendError(err)
		}
		st.CompactRevision = rev
	}
	return st, nil
}

// observeCommit reports a backend transaction to the Observer, if there is one.
func (s *Store) observeCommit(start time.Time, res backend.TxnResult, err error) {
	if s.opts.Observer == nil {
		return
	}
	outcome := OutcomeCommitted
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		outcome = OutcomeError
	case err != nil:
		return
	case !res.Succeeded:
		outcome = OutcomeConflict
	}
	s.opts.Observer.Commit(time.Since(start), outcome)
}
