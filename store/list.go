package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store/backend"
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
	start := ""
	var rev int64
	switch {
	case opts.Continue != "":
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return resource.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		tok, err := decodeContinue(opts.Continue, prefix)
		if err != nil {
			return err
		}
		rev, start = tok.RV, tok.Start
	default:
		switch opts.ResourceVersionMatch {
		case "":
		case ResourceVersionMatchNotOlderThan, ResourceVersionMatchExact:
			if opts.ResourceVersion == "" {
				return resource.NewInvalid(k, "", resource.ErrorList{resource.Forbidden(
					resource.NewPath("resourceVersionMatch"), "resourceVersionMatch is forbidden unless resourceVersion is provided")})
			}
		default:
			return resource.NewInvalid(k, "", resource.ErrorList{resource.NotSupported(
				resource.NewPath("resourceVersionMatch"), opts.ResourceVersionMatch,
				[]string{ResourceVersionMatchExact, ResourceVersionMatchNotOlderThan})})
		}
		n, err := parseRV(opts.ResourceVersion)
		if err != nil {
			return err
		}
		if opts.ResourceVersionMatch == ResourceVersionMatchExact {
			if n == 0 {
				return resource.NewInvalid(k, "", resource.ErrorList{resource.Forbidden(
					resource.NewPath("resourceVersionMatch"), "resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"0\"")})
			}
			if err := s.waitForRevision(ctx, n); err != nil {
				return err
			}
			rev = n
		} else if err := s.waitForRevision(ctx, n); err != nil {
			return err
		}
	}

	var items []resource.Object
	limit := int(opts.Limit)
	next := ""
	if label, value, ok := f.labels.RequiredEquals(); ok && limit == 0 && opts.Continue == "" && rev == 0 {
		// A selector that requires label=value is served from the label index: only
		// the objects carrying it are read, at the index's revision, which is at
		// least the store's revision when the list began.
		cur, err := s.b.Revision(ctx)
		if err != nil {
			return backendError(err)
		}
		keys, at, err := s.track.keysWithLabel(ctx, prefix, label, value, cur)
		if err != nil {
			return err
		}
		for _, key := range keys {
			kv, err := s.b.Get(ctx, key, at)
			if errors.Is(err, backend.ErrKeyNotFound) {
				continue
			}
			if err != nil {
				return backendError(err)
			}
			obj, err := s.decode(k, kv.Key, kv.ModRevision, kv.Value, kv.ModRevision)
			if err != nil {
				return err
			}
			if f.matches(obj) {
				items = append(items, obj)
			}
		}
		return s.fillList(list, k, items, at, "")
	}
	for {
		chunk := 0
		if limit > 0 {
			chunk = limit - len(items)
			if !f.empty() && chunk < 64 {
				chunk = 64
			}
		}
		res, err := s.b.Range(ctx, backend.RangeOptions{Prefix: prefix, Start: start, Limit: chunk, Revision: rev})
		if err != nil {
			return backendError(err)
		}
		rev = res.Revision
		full := false
		for i, kv := range res.KVs {
			obj, err := s.decode(k, kv.Key, kv.ModRevision, kv.Value, kv.ModRevision)
			if err != nil {
				return err
			}
			if !f.matches(obj) {
				continue
			}
			items = append(items, obj)
			if limit > 0 && len(items) == limit {
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
	return s.fillList(list, k, items, rev, next)
}

// fillList puts the items, kind and list metadata into list.
func (s *Store) fillList(list resource.ObjectList, k *resource.KindInfo, items []resource.Object, rev int64, next string) error {
	if err := list.SetItems(items); err != nil {
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
