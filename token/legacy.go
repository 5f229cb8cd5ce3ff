package token

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// AdoptLegacyHashes moves the secrets of AccessKeys stored by older servers, which
// kept "sha256:<hex>" in spec.keyHash, into this package's records, and clears
// spec.keyHash; it returns how many keys it moved. The hash is the one [SecretName]
// uses, so the keys' secrets keep working. A key whose hash another key holds already
// is left as it is and reported in the error (joined, one per key); so is a keyHash of
// another form. A host runs it once at start, after building the store with the
// [AccessKeyAdmission]; running it again finds nothing to do.
func AdoptLegacyHashes(ctx context.Context, s *store.Store) (int, error) {
	var list resource.AccessKeyList
	if err := s.List(ctx, &list, store.ListOptions{}); err != nil {
		return 0, err
	}
	kind, ok := s.Scheme().KindFor(resource.GroupVersion, resource.KindAccessKey)
	if !ok {
		return 0, errors.New("token: the store's scheme does not know AccessKey")
	}
	n := 0
	var errs []error
	for i := range list.Items {
		if list.Items[i].Spec.KeyHash == "" {
			continue
		}
		moved, err := adoptOne(ctx, s, kind, list.Items[i].Name)
		if err != nil {
			errs = append(errs, err)
		}
		if moved {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// adoptOne moves the keyHash of the key name into the records, in one transaction.
func adoptOne(ctx context.Context, s *store.Store, kind *resource.KindInfo, name string) (bool, error) {
	moved := false
	err := s.Txn(ctx, store.TxnOptions{}, func(tx *store.Tx) error {
		moved = false
		k := &resource.AccessKey{}
		if found, err := getIfExists(tx, name, k); err != nil || !found {
			return err
		}
		digest, ok := strings.CutPrefix(k.Spec.KeyHash, "sha256:")
		if raw, err := hex.DecodeString(digest); !ok || err != nil || len(raw) != 32 {
			if k.Spec.KeyHash == "" {
				return nil
			}
			return errors.New("token: access key " + clip(name) + ": spec.keyHash is not \"sha256:<hex>\"")
		}
		if !k.IsTerminating() {
			if err := bindSecret(tx, kind, k, "sha256-"+strings.ToLower(digest)); err != nil {
				return err
			}
		}
		k.Spec.KeyHash = ""
		moved = true
		return tx.Update(k, store.UpdateOptions{})
	})
	return moved, err
}
