package etcd

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/backend/backendkit"
)

// Txn applies t as one etcd transaction: each Compare is a comparison of the key's
// ModRevision (0 for an absent key), each Op a put or a delete, all at one new etcd
// revision when every comparison holds. When one does not, the transaction's else
// branch reads the compared keys in the same atomic step, to name the first
// comparison that failed. A transaction whose ops change nothing (no ops, or only
// deletes of absent keys) creates no revision. Values are copied into the request,
// so the caller may reuse its buffers once Txn returns.
//
// A transaction etcd refuses for its size fails with [ErrTooLarge]. When the
// context ends, or the connection breaks, while etcd has the request, the
// transaction may or may not have been applied: etcd cannot say.
func (b *Backend) Txn(ctx context.Context, t backend.Txn) (backend.TxnResult, error) {
	if err := backendkit.ValidateTxn(t, 0); err != nil {
		return backend.TxnResult{}, err
	}
	if err := b.check(ctx); err != nil {
		return backend.TxnResult{}, err
	}
	cmps := make([]clientv3.Cmp, len(t.Compares))
	reads := make([]clientv3.Op, len(t.Compares))
	for i, c := range t.Compares {
		k := b.key(c.Key)
		var rev int64 // absent
		if c.ModRevision > 0 {
			rev = c.ModRevision + b.base
		}
		if c.Prefix {
			// Every key under the prefix last written at or before the revision (an
			// empty range holds: etcd compares it as one key of revision 0).
			cmps[i] = clientv3.Compare(clientv3.ModRevision(k).WithPrefix(), "<", c.ModRevision+b.base+1)
			reads[i] = clientv3.OpGet(k, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(1),
				clientv3.WithSort(clientv3.SortByModRevision, clientv3.SortDescend))
			continue
		}
		cmps[i] = clientv3.Compare(clientv3.ModRevision(k), "=", rev)
		reads[i] = clientv3.OpGet(k, clientv3.WithKeysOnly())
	}
	ops := make([]clientv3.Op, len(t.Ops))
	for i, op := range t.Ops {
		if op.Delete {
			ops[i] = clientv3.OpDelete(b.key(op.Key))
		} else {
			ops[i] = clientv3.OpPut(b.key(op.Key), string(op.Value))
		}
	}
	resp, err := b.cli.Txn(ctx).If(cmps...).Then(ops...).Else(reads...).Commit()
	if err != nil {
		return backend.TxnResult{}, b.fail("txn", err)
	}
	res := backend.TxnResult{Succeeded: resp.Succeeded, Revision: resp.Header.Revision - b.base, FailedCompare: -1}
	b.seen(res.Revision)
	if !resp.Succeeded {
		res.FailedCompare = 0
		for i, c := range t.Compares {
			var rev int64
			if kvs := resp.Responses[i].GetResponseRange().GetKvs(); len(kvs) > 0 {
				rev = kvs[0].ModRevision - b.base
			}
			if (c.Prefix && rev > c.ModRevision) || (!c.Prefix && rev != c.ModRevision) {
				res.FailedCompare = i
				break
			}
		}
		return res, nil
	}
	return res, nil
}
