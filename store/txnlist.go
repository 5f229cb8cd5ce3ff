package store

import (
	"slices"
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
)

// rangeGuard is a range a transaction listed: the commit holds only while nothing
// under prefix was created or changed after rev.
type rangeGuard struct {
	prefix string
	rev    int64
}

// List reads the objects of list's kind in opts.Namespace (every namespace when
// empty) that match opts.LabelSelector and opts.FieldSelector, as the transaction
// sees them (its own writes included), and makes the transaction depend on the whole
// range: when an object of the kind in that namespace is created or changed before
// the transaction commits, the transaction runs again. (An object deleted meanwhile
// does not make it run again.) Paging and resourceVersion options are not supported
// (400).
func (tx *Tx) List(list resource.ObjectList, opts ListOptions) error {
	s := tx.s
	k, err := s.scheme.KindOfList(list)
	if err != nil {
		return resource.NewBadRequest(err.Error()).WithCause(err)
	}
	if opts.Limit != 0 || opts.Continue != "" || opts.ResourceVersion != "" || opts.ResourceVersionMatch != "" {
		return resource.NewBadRequest("a list in a transaction reads the transaction's state: limit, continue and resourceVersion do not apply")
	}
	f, err := parseFilter(opts.LabelSelector, opts.FieldSelector)
	if err != nil {
		return err
	}
	if k.Namespaced && opts.Namespace != "" {
		if errs := resource.ValidateNamespaceName(opts.Namespace, resource.NewPath("metadata", "namespace")); len(errs) > 0 {
			return resource.NewInvalid(k, "", errs)
		}
	}
	prefix := nsPrefix(k, opts.Namespace)
	res, err := s.b.Range(tx.ctx, backend.RangeOptions{Prefix: prefix})
	if err != nil {
		return backendError(err)
	}
	tx.guards = append(tx.guards, rangeGuard{prefix: prefix, rev: res.Revision})
	kvs := tx.overlay(prefix, res.KVs)
	items := newListBuilder(s, k, list)
	for _, kv := range kvs {
		if _, err := items.add(kv, &f); err != nil {
			return err
		}
	}
	return items.fill(res.Revision, "")
}

// overlay lays the transaction's own view of the keys under prefix over kvs, read
// from the backend: what it wrote (or deleted) and what it read at another revision.
func (tx *Tx) overlay(prefix string, kvs []backend.KV) []backend.KV {
	var mine map[string]*txEntry
	for i, key := range tx.keys {
		if strings.HasPrefix(key, prefix) && (tx.vals[i].written || tx.vals[i].read) {
			if mine == nil {
				mine = map[string]*txEntry{}
			}
			mine[key] = tx.vals[i]
		}
	}
	if mine == nil {
		return kvs
	}
	out := make([]backend.KV, 0, len(kvs)+len(mine))
	for _, kv := range kvs {
		if _, ok := mine[kv.Key]; !ok {
			out = append(out, kv)
		}
	}
	for key, e := range mine {
		if e.value != nil {
			out = append(out, backend.KV{Key: key, Value: e.value, ModRevision: e.rev})
		}
	}
	slices.SortFunc(out, func(a, b backend.KV) int { return strings.Compare(a.Key, b.Key) })
	return out
}
