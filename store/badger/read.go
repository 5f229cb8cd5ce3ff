package badger

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	dgbadger "github.com/dgraph-io/badger/v4"

	"github.com/management-service/mgmt/store/backend"
)

// ctxCheckEvery is how many keys a Range reads between two looks at its context.
const ctxCheckEvery = 256

// Get returns key as of revision rev (0: current). It returns
// [backend.ErrKeyNotFound] when the key does not exist then,
// [backend.ErrCompacted] when rev is older than the compaction point and
// [backend.ErrFutureRevision] when rev is newer than the current revision. A read at
// the current revision is two badger lookups (where the version is, then the
// version); a read at a past one may also look through the key's history.
func (b *Backend) Get(ctx context.Context, key string, rev int64) (backend.KV, error) {
	if key == "" {
		return backend.KV{}, fmt.Errorf("%w: empty key", backend.ErrInvalidArgument)
	}
	if rev < 0 {
		return backend.KV{}, fmt.Errorf("%w: negative revision %d", backend.ErrInvalidArgument, rev)
	}
	if err := b.enter(ctx); err != nil {
		return backend.KV{}, err
	}
	defer b.ops.RUnlock()
	txn := b.db.NewTransaction(false)
	defer txn.Discard()
	var v *version
	var err error
	if rev == 0 {
		v, err = loadCurrent(txn, key)
	} else {
		cur, err := readRevision(txn)
		if err != nil {
			return backend.KV{}, errInternal(err)
		}
		if err := b.checkRevision(rev, cur); err != nil {
			return backend.KV{}, err
		}
		v, err = versionAt(txn, key, rev)
	}
	if err != nil {
		return backend.KV{}, errInternal(err)
	}
	if v == nil {
		if rev == 0 {
			return backend.KV{}, fmt.Errorf("%w: %q", backend.ErrKeyNotFound, key)
		}
		return backend.KV{}, fmt.Errorf("%w: %q at revision %d", backend.ErrKeyNotFound, key, rev)
	}
	if err := b.published(ctx, v.modRev); err != nil {
		return backend.KV{}, err
	}
	return v.kv(key), nil
}

// GetHead returns key's current version without its value (KV.Value is nil): one
// badger lookup, of c/ only. It returns [backend.ErrKeyNotFound] when the key does
// not exist. It implements [backend.HeadGetter].
func (b *Backend) GetHead(ctx context.Context, key string) (backend.KV, error) {
	if key == "" {
		return backend.KV{}, fmt.Errorf("%w: empty key", backend.ErrInvalidArgument)
	}
	if err := b.enter(ctx); err != nil {
		return backend.KV{}, err
	}
	defer b.ops.RUnlock()
	txn := b.db.NewTransaction(false)
	defer txn.Discard()
	v, err := getCurrent(txn, key)
	if err != nil {
		return backend.KV{}, errInternal(err)
	}
	if v == nil {
		return backend.KV{}, fmt.Errorf("%w: %q", backend.ErrKeyNotFound, key)
	}
	if err := b.published(ctx, v.modRev); err != nil {
		return backend.KV{}, err
	}
	return backend.KV{Key: key, CreateRevision: v.createRev, ModRevision: v.modRev}, nil
}

// checkRevision checks that rev is readable in a snapshot at revision cur: not
// above it, not below the compaction point. The caller looks at the compaction
// point after it took the snapshot: a compaction raises it before it deletes
// anything, so a snapshot that passes the check still holds every version rev needs.
func (b *Backend) checkRevision(rev, cur int64) error {
	if rev > cur {
		return fmt.Errorf("%w: revision %d, current %d", backend.ErrFutureRevision, rev, cur)
	}
	if c := b.compactedLoad(); rev < c {
		return fmt.Errorf("%w: revision %d, oldest kept %d", backend.ErrCompacted, rev, c)
	}
	return nil
}

// versionAt returns the version of key at revision rev, nil when it did not exist
// then. The value is a copy.
func versionAt(txn *dgbadger.Txn, key string, rev int64) (*version, error) {
	v, err := getCurrent(txn, key)
	if err != nil {
		return nil, err
	}
	if v != nil && v.modRev <= rev {
		return versionExact(txn, key, v.modRev)
	}
	it := txn.NewIterator(dgbadger.IteratorOptions{Prefix: historyKeyPrefix(key)})
	defer it.Close()
	it.Seek(historyKey(key, rev)) // the newest version at or before rev
	if !it.Valid() {
		return nil, nil
	}
	return historyItem(it.Item(), true)
}

// historyItem decodes the version an h/ item holds; nil for a tombstone.
func historyItem(item *dgbadger.Item, copyValue bool) (*version, error) {
	_, rev, err := parseHistoryKey(item.Key())
	if err != nil {
		return nil, err
	}
	var v version
	err = item.Value(func(val []byte) error {
		var err error
		v, err = decodeHistory(val, rev, copyValue)
		return err
	})
	if err != nil || v.tombstone {
		return nil, err
	}
	return &v, nil
}

// Range returns the keys selected by opts in byte order of key, all read from one
// badger snapshot. A read at the current revision scans the current versions only;
// one at a past revision merges them with the history. Errors are those of
// [Backend.Get], and [backend.ErrInvalidArgument] for a negative Limit or Revision or
// a Start outside the Prefix.
func (b *Backend) Range(ctx context.Context, opts backend.RangeOptions) (backend.RangeResult, error) {
	switch {
	case opts.Limit < 0:
		return backend.RangeResult{}, fmt.Errorf("%w: negative limit %d", backend.ErrInvalidArgument, opts.Limit)
	case opts.Revision < 0:
		return backend.RangeResult{}, fmt.Errorf("%w: negative revision %d", backend.ErrInvalidArgument, opts.Revision)
	case opts.Start != "" && !strings.HasPrefix(opts.Start, opts.Prefix):
		return backend.RangeResult{}, fmt.Errorf("%w: start %q is outside prefix %q", backend.ErrInvalidArgument, opts.Start, opts.Prefix)
	}
	if err := b.enter(ctx); err != nil {
		return backend.RangeResult{}, err
	}
	defer b.ops.RUnlock()
	txn := b.db.NewTransaction(false)
	defer txn.Discard()
	cur, err := readRevision(txn)
	if err != nil {
		return backend.RangeResult{}, errInternal(err)
	}
	at := cur
	if opts.Revision != 0 {
		if err := b.checkRevision(opts.Revision, cur); err != nil {
			return backend.RangeResult{}, err
		}
		at = opts.Revision
	}
	from := opts.Start
	if from == "" {
		from = opts.Prefix
	}
	res := backend.RangeResult{Revision: at}
	if at == cur {
		err = rangeCurrent(ctx, txn, opts, from, &res)
	} else {
		err = rangePast(ctx, txn, opts, from, at, &res)
	}
	if err != nil {
		return backend.RangeResult{}, err
	}
	if err := b.published(ctx, res.Revision); err != nil {
		return backend.RangeResult{}, err
	}
	return res, nil
}

// rangeCurrent reads the current versions of the keys under opts.Prefix from from:
// it walks c/, which names the keys that exist and their current revision, and h/
// beside it for the values. Both are in key order, so the h/ iterator usually finds
// the version it needs where it stands; it seeks only past older versions.
func rangeCurrent(ctx context.Context, txn *dgbadger.Txn, opts backend.RangeOptions, from string, res *backend.RangeResult) error {
	cit := txn.NewIterator(dgbadger.IteratorOptions{Prefix: currentKey(opts.Prefix)})
	defer cit.Close()
	hit := txn.NewIterator(dgbadger.IteratorOptions{Prefix: historyScanPrefix(opts.Prefix)})
	defer hit.Close()
	var want []byte
	for cit.Seek(currentKey(from)); cit.Valid(); cit.Next() {
		if opts.Limit > 0 && len(res.KVs) == opts.Limit {
			res.More = true
			break
		}
		item := cit.Item()
		key := string(item.Key()[len(prefixCurrent):])
		var v version
		err := item.Value(func(val []byte) error {
			var err error
			v, err = decodeCurrent(val)
			return err
		})
		if err != nil {
			return errInternal(err)
		}
		want = appendHistoryKey(want[:0], key, v.modRev)
		if !hit.Valid() || !bytes.Equal(hit.Item().Key(), want) {
			hit.Seek(want)
			if !hit.Valid() || !bytes.Equal(hit.Item().Key(), want) {
				return errInternal(fmt.Errorf("%w: no version of %q at revision %d", ErrCorrupt, key, v.modRev))
			}
		}
		hv, err := historyItem(hit.Item(), true)
		if err == nil && hv == nil {
			err = fmt.Errorf("%w: the current version of %q (revision %d) is a deletion", ErrCorrupt, key, v.modRev)
		}
		if err != nil {
			return errInternal(err)
		}
		hit.Next()
		res.KVs = append(res.KVs, hv.kv(key))
		if len(res.KVs)%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// rangePast reads the keys under opts.Prefix from from as they were at revision at:
// it walks h/, which holds every version in key order and, for each key, newest
// first, and takes for each key its newest version at or before at.
func rangePast(ctx context.Context, txn *dgbadger.Txn, opts backend.RangeOptions, from string, at int64, res *backend.RangeResult) error {
	hit := txn.NewIterator(dgbadger.IteratorOptions{Prefix: historyScanPrefix(opts.Prefix)})
	defer hit.Close()
	seen := 0
	for hit.Seek(historyKeyPrefix(from)); hit.Valid(); {
		if seen++; seen%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		key, rev, err := parseHistoryKey(hit.Item().Key())
		if err != nil {
			return errInternal(err)
		}
		if rev > at {
			// Every version of key here is too new: go to the newest at or before
			// at, which may belong to a later key.
			hit.Seek(historyKey(key, at))
			continue
		}
		found, err := historyItem(hit.Item(), true)
		if err != nil {
			return errInternal(err)
		}
		hit.Seek(historyNextKey(key))
		if found == nil {
			continue
		}
		if opts.Limit > 0 && len(res.KVs) == opts.Limit {
			res.More = true
			break
		}
		res.KVs = append(res.KVs, found.kv(key))
	}
	return nil
}
