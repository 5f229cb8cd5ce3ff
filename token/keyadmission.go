package token

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/management-service/mgmt/policy"
	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// AccessKeyAdmission is the store admission of AccessKeys: it keeps their secrets and
// enforces who may write which key. Build it before the store and give the same value
// as a mutating and as a validating hook:
//
//	adm := token.NewAccessKeyAdmission()
//	opts := store.Options{Scheme: scheme,
//		Mutating:   []store.MutatingAdmitter{adm},
//		Validating: []store.ValidatingAdmitter{adm}}
//
// It reads the writer from the write's store.UserInfo ([IdentityOf]); a write without
// a UserInfo (the host's own, a seed file) is allowed everything, and a UserInfo that
// carries no [Identity] nothing. The package documentation lists the rules.
type AccessKeyAdmission struct{}

// NewAccessKeyAdmission returns the AccessKey admission hooks.
func NewAccessKeyAdmission() *AccessKeyAdmission { return &AccessKeyAdmission{} }

var (
	_ store.MutatingAdmitter   = (*AccessKeyAdmission)(nil)
	_ store.ValidatingAdmitter = (*AccessKeyAdmission)(nil)

	keyPath     = resource.NewPath("spec", "key")
	keyHashPath = resource.NewPath("spec", "keyHash")
	keyTTLPath  = resource.NewPath("spec", "ttl")
)

// leadManage opens every refusal of a key write: what the user can do about it.
const leadManage = "Your access key may not make this change to an access key."

// Admit is the mutating hook: on the create or update of an AccessKey it checks the
// writer's rights, validates spec.key and spec.ttl, moves the secret into the
// internal records through the write's transaction, and clears spec.key (and the
// unused spec.keyHash) from the object and from kubectl's last-applied annotation.
func (a *AccessKeyAdmission) Admit(_ context.Context, req *store.AdmissionRequest) error {
	if internalKind(req.Kind) {
		return refuseInternal(req)
	}
	ak, ok := req.Object.(*resource.AccessKey)
	if !ok || req.Subresource != "" || !isAccessKey(req.Kind) {
		return nil
	}
	var old *resource.AccessKey
	switch req.Operation {
	case store.OperationCreate:
	case store.OperationUpdate:
		if old, ok = req.OldObject.(*resource.AccessKey); !ok {
			return resource.NewInternalError(fmt.Errorf("token: update of an AccessKey without its stored object"))
		}
	default:
		return nil
	}
	id := IdentityOf(req.User)
	if req.User != nil && id == nil {
		return manageForbidden(req.Kind, ak.Name, "the request's caller carries no access key identity")
	}
	if old == nil && id != nil && !id.Unrestricted() && ak.Spec.Subject == "" && id.Key.Spec.Subject != "" {
		// A scoped caller's new key acts for the caller's own subject.
		ak.Spec.Subject = id.Key.Spec.Subject
	}
	if err := checkManage(req.Kind, id, old, ak); err != nil {
		return err
	}
	if errs := validateKeyWrite(old, ak); len(errs) > 0 {
		return resource.NewInvalid(req.Kind, ak.Name, errs)
	}
	if ak.Spec.Key != "" {
		if err := bindSecret(req.Tx, req.Kind, ak, SecretName(ak.Spec.Key)); err != nil {
			return err
		}
	}
	scrubLastApplied(&ak.ObjectMeta, ak.Spec.Key)
	ak.Spec.Key, ak.Spec.KeyHash = "", ""
	return nil
}

// Validate is the validating hook: on the delete of an AccessKey it checks the
// writer's rights and removes the key's secret records in the delete's transaction,
// so the secret stops authenticating at once, also when the delete only marks the key.
func (a *AccessKeyAdmission) Validate(_ context.Context, req *store.AdmissionRequest) error {
	if internalKind(req.Kind) {
		return refuseInternal(req)
	}
	if req.Operation != store.OperationDelete || !isAccessKey(req.Kind) || req.Subresource != "" {
		return nil
	}
	old, ok := req.OldObject.(*resource.AccessKey)
	if !ok {
		return nil
	}
	id := IdentityOf(req.User)
	if req.User != nil && id == nil {
		return manageForbidden(req.Kind, old.Name, "the request's caller carries no access key identity")
	}
	if err := checkManage(req.Kind, id, old, nil); err != nil {
		return err
	}
	return unbindSecret(req.Tx, old.Name)
}

func isAccessKey(k *resource.KindInfo) bool {
	return k != nil && k.Group == resource.Group && k.Kind == resource.KindAccessKey
}

func internalKind(k *resource.KindInfo) bool {
	return k != nil && k.Group == KeyGroup && (k.Kind == KindAccessKeySecret || k.Kind == KindAccessKeyBinding)
}

// refuseInternal refuses a write of a secret record that names a caller: only this
// package's hooks write them, with no caller, in the transaction of a key's write.
func refuseInternal(req *store.AdmissionRequest) error {
	if req.User == nil {
		return nil
	}
	return resource.NewForbidden(req.Kind, "", "Only the access key admission writes these records.")
}

func manageForbidden(k *resource.KindInfo, name, detail string) *resource.StatusError {
	e := resource.NewForbidden(k, name, detail)
	e.ErrStatus.Message = leadManage + " " + e.ErrStatus.Message
	return e
}

// checkManage applies the key-management rules to a write by id that turns old (nil:
// a create) into new (nil: a delete). See the package documentation.
func checkManage(k *resource.KindInfo, id *Identity, old, new *resource.AccessKey) error {
	if id == nil || id.Unrestricted() {
		return nil
	}
	name := ""
	if new != nil {
		name = new.Name
	} else if old != nil {
		name = old.Name
	}
	if id.scope == nil {
		return manageForbidden(k, name, "your access key's stored scope is invalid, so it allows nothing")
	}
	own := subjectID(id.Key)
	for _, side := range []struct {
		what string
		key  *resource.AccessKey
	}{{"stored", old}, {"new", new}} {
		if side.key == nil {
			continue
		}
		if s := subjectID(side.key); s != own {
			return manageForbidden(k, name, fmt.Sprintf(
				"the key's %s subject %s is not your key's subject %s; a scoped key manages only keys of its own subject",
				side.what, s, own))
		}
		if ok, gaps := coversKey(id.Key.Spec.Scope, side.key.Spec.Scope); !ok {
			return manageForbidden(k, name, fmt.Sprintf("the key's %s scope is not covered by your key's scope: %s",
				side.what, strings.Join(gaps, "; ")))
		}
	}
	if new == nil {
		return nil
	}
	if err := checkOwners(k, name, id.Key, old, new); err != nil {
		return err
	}
	var oldGen int64
	if old != nil {
		oldGen = old.Spec.TokenGeneration
	}
	if new.Spec.TokenGeneration != oldGen {
		return manageForbidden(k, name, fmt.Sprintf(
			"spec.tokenGeneration may be changed (from %d to %d) only by an access key without a scope", oldGen, new.Spec.TokenGeneration))
	}
	if !id.Expiry.IsZero() && (old == nil || old.Spec.TTL != new.Spec.TTL) {
		if exp := KeyExpiry(new); exp.IsZero() || exp.After(id.Expiry) {
			return manageForbidden(k, name, "the key would outlive your own access key, which expires at "+
				id.Expiry.UTC().Format("2006-01-02T15:04:05Z")+"; give it a shorter spec.ttl")
		}
	}
	return nil
}

// checkOwners keeps a scoped caller from naming another user or team as a key's
// owner: spec.user and spec.team of what it writes are unchanged, empty, or its own
// key's.
func checkOwners(k *resource.KindInfo, name string, caller, old, new *resource.AccessKey) error {
	var wasUser, wasTeam string
	if old != nil {
		wasUser, wasTeam = old.Spec.User, old.Spec.Team
	}
	for _, f := range []struct{ field, now, was, mine string }{
		{"spec.user", new.Spec.User, wasUser, caller.Spec.User},
		{"spec.team", new.Spec.Team, wasTeam, caller.Spec.Team},
	} {
		if f.now != "" && f.now != f.was && f.now != f.mine {
			return manageForbidden(k, name, fmt.Sprintf("%s %q is not your key's (%q)", f.field, f.now, f.mine))
		}
	}
	return nil
}

// subjectID is a key's subject with its kind, so that a key acting for itself never
// passes for a user of the same name.
func subjectID(k *resource.AccessKey) string {
	if k.Spec.Subject != "" {
		return SubjectKindUser + ":" + k.Spec.Subject
	}
	return SubjectKindAccessKey + ":" + k.Name
}

// coversKey is policy.Covers, except that a key without a scope (no restriction) is
// covered only by a caller without one, never by a scope that happens to allow every
// request.
func coversKey(outer, inner *resource.AccessKeyScope) (bool, []string) {
	if outer == nil {
		return true, nil
	}
	if inner == nil {
		return false, []string{"spec.scope: the key has no scope (no restriction), which only a key without a scope covers"}
	}
	ok, gaps := policy.Covers(outer, inner)
	parts := make([]string, len(gaps))
	for i, g := range gaps {
		parts[i] = g.String()
	}
	return ok, parts
}

// validateKeyWrite checks spec.key, spec.keyHash and spec.ttl of a write.
func validateKeyWrite(old, ak *resource.AccessKey) resource.ErrorList {
	var errs resource.ErrorList
	switch {
	case len(ak.Spec.Key) > MaxAccessKeyBytes:
		errs = append(errs, resource.TooLong(keyPath, "", MaxAccessKeyBytes))
	case old == nil && ak.Spec.Key == "":
		errs = append(errs, resource.Required(keyPath, "the secret of the access key (it is never stored or returned)"))
	case strings.ContainsAny(ak.Spec.Key, " \t\r\n"):
		errs = append(errs, resource.Invalid(keyPath, "", "must not contain white space: it is sent as a bearer token"))
	case old != nil && old.IsTerminating() && ak.Spec.Key != "":
		errs = append(errs, resource.Forbidden(keyPath, "the access key is being deleted; its secret cannot be changed"))
	}
	if ak.Spec.KeyHash != "" && (old == nil || ak.Spec.KeyHash != old.Spec.KeyHash) {
		errs = append(errs, resource.Forbidden(keyHashPath, "not used: the secret is kept by the server; send spec.key"))
	}
	switch {
	case ak.Spec.TTL < 0:
		errs = append(errs, resource.Invalid(keyTTLPath, ak.Spec.TTL, "must not be negative: seconds from creation, or 0 for no expiry"))
	case ak.Spec.TTL > MaxAccessKeyTTL:
		errs = append(errs, resource.Invalid(keyTTLPath, ak.Spec.TTL,
			fmt.Sprintf("must be at most %d seconds (100 years), or 0 for no expiry", MaxAccessKeyTTL)))
	}
	return errs
}

// bindSecret makes the secret whose record is secretName the one of ak, in the
// write's transaction: 409 when another key holds it; the key's previous secret
// record, if any, is removed.
func bindSecret(tx *store.Tx, kind *resource.KindInfo, ak *resource.AccessKey, secretName string) error {
	b := &AccessKeyBinding{}
	hasBinding, err := getIfExists(tx, ak.Name, b)
	if err != nil {
		return err
	}
	if hasBinding && b.Spec.Secret == secretName && b.Spec.UID == ak.UID {
		return nil // the same secret again: nothing to rotate
	}
	holder, err := liveKeyOf(tx, secretName)
	if err != nil {
		return err
	}
	if holder != nil {
		return resource.NewConflict(kind, ak.Name, "this secret is already in use by another access key; choose another secret")
	}
	if hasBinding {
		if err := dropSecretRecord(tx, b.Spec.Secret, ak.Name); err != nil {
			return err
		}
	}
	rec := &AccessKeySecret{}
	if _, err := upsert(tx, secretName, rec, func() { rec.Spec = AccessKeyRef{Name: ak.Name, UID: ak.UID} }); err != nil {
		return err
	}
	_, err = upsert(tx, ak.Name, b, func() { b.Spec = AccessKeyBindingSpec{Secret: secretName, UID: ak.UID} })
	return err
}

// unbindSecret removes the secret records of the key name, in tx.
func unbindSecret(tx *store.Tx, name string) error {
	b := &AccessKeyBinding{}
	found, err := getIfExists(tx, name, b)
	if err != nil || !found {
		return err
	}
	if err := dropSecretRecord(tx, b.Spec.Secret, name); err != nil {
		return err
	}
	_, err = tx.Delete(&AccessKeyBinding{ObjectMeta: resource.ObjectMeta{Name: name}}, store.DeleteOptions{})
	return err
}

// dropSecretRecord deletes the secret record secretName if it names the key keyName.
func dropSecretRecord(tx *store.Tx, secretName, keyName string) error {
	rec := &AccessKeySecret{}
	found, err := getIfExists(tx, secretName, rec)
	if err != nil || !found || rec.Spec.Name != keyName {
		return err
	}
	_, err = tx.Delete(&AccessKeySecret{ObjectMeta: resource.ObjectMeta{Name: secretName}}, store.DeleteOptions{})
	return err
}

// upsert reads the cluster-scoped object name into obj, lets set fill it, and writes
// it back (an update when it existed, a create otherwise).
func upsert(tx *store.Tx, name string, obj resource.Object, set func()) (bool, error) {
	found, err := getIfExists(tx, name, obj)
	if err != nil {
		return false, err
	}
	set()
	if found {
		return true, tx.Update(obj, store.UpdateOptions{})
	}
	obj.GetObjectMeta().Name = name
	return false, tx.Create(obj, store.CreateOptions{})
}

// scrubLastApplied removes spec.key (and spec.keyHash) from kubectl's
// last-applied-configuration annotation; an annotation that is not JSON, or that
// still holds the secret being written anywhere else, is dropped rather than kept
// with a secret.
func scrubLastApplied(m *resource.ObjectMeta, secret string) {
	v, ok := m.Annotations[AnnotationLastApplied]
	if !ok {
		return
	}
	defer func() {
		if secret != "" && strings.Contains(m.Annotations[AnnotationLastApplied], secret) {
			delete(m.Annotations, AnnotationLastApplied)
		}
	}()
	if !strings.Contains(v, `"key`) {
		return
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(v), &doc); err != nil {
		delete(m.Annotations, AnnotationLastApplied)
		return
	}
	spec, _ := doc["spec"].(map[string]any)
	_, hasKey := spec["key"]
	_, hasHash := spec["keyHash"]
	if !hasKey && !hasHash {
		return
	}
	delete(spec, "key")
	delete(spec, "keyHash")
	b, err := json.Marshal(doc)
	if err != nil {
		delete(m.Annotations, AnnotationLastApplied)
		return
	}
	m.Annotations[AnnotationLastApplied] = string(b) + "\n"
}
