package httpapi

import (
	"fmt"
	"net/http"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/schema"
	"github.com/management-service/mgmt/store"
)

// serveResource runs the verb of a resource request.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, ri *route) {
	// Answer 406 before doing anything that writes.
	if _, err := responseType(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	var err error
	switch ri.verb {
	case "get":
		err = s.get(w, r, ri)
	case "list":
		err = s.list(w, r, ri)
	case "watch":
		err = s.watch(w, r, ri)
	case "create":
		err = s.create(w, r, ri)
	case "update":
		err = s.update(w, r, ri)
	case "patch":
		err = s.patch(w, r, ri)
	case "delete":
		err = s.delete(w, r, ri)
	case "deletecollection":
		err = s.deleteCollection(w, r, ri)
	default:
		err = methodNotAllowed(ri.kind, ri.verb)
	}
	if err != nil {
		s.writeError(w, r, err)
	}
}

func (ri *route) writeOptions() store.WriteOptions {
	return store.WriteOptions{DryRun: ri.opts.dryRun, FieldManager: ri.opts.fieldManager, User: ri.user}
}

// checkVisible answers a request about one object the caller may not see
// (Decision.Visible) exactly as a request about a missing one. It returns the uid of
// the object it checked ("" when there was nothing to check), for a precondition.
func (s *Server) checkVisible(r *http.Request, ri *route) (string, error) {
	if ri.decision.Visible == nil {
		return "", nil
	}
	obj := ri.res.kind.New()
	if err := s.store.Get(r.Context(), ri.namespace, ri.name, obj, store.GetOptions{}); err != nil {
		return "", err
	}
	if !ri.visible(obj) {
		return "", resource.NewNotFound(ri.res.kind, ri.name)
	}
	return string(obj.GetObjectMeta().UID), nil
}

// filterList drops the items of list the caller may not see (Decision.Visible).
func filterList(ri *route, list resource.ObjectList) {
	if ri.decision.Visible == nil {
		return
	}
	keep := make([]resource.Object, 0, list.Len())
	for i := 0; i < list.Len(); i++ {
		if it := list.Item(i); ri.visible(it) {
			keep = append(keep, it)
		}
	}
	_ = list.SetItems(keep) // the items came from the list: of its type
	// What is left out is not counted either.
	list.GetListMeta().RemainingItemCount = nil
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, ri *route) error {
	k := ri.kind
	obj := k.New()
	if err := s.store.Get(r.Context(), ri.namespace, ri.name, obj, store.GetOptions{ResourceVersion: ri.opts.resourceVersion}); err != nil {
		return err
	}
	if !ri.visible(obj) {
		return resource.NewNotFound(k, ri.name)
	}
	setTypeMeta(obj, k)
	s.writeObject(w, r, ri, http.StatusOK, obj)
	return nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, ri *route) error {
	k := ri.kind
	list := k.NewList()
	lo := ri.opts.list
	lo.Namespace = ri.namespace
	raw, err := s.store.ListRaw(r.Context(), list, lo)
	if err != nil {
		return err
	}
	filterList(ri, list)
	setListTypeMeta(list, k)
	if t, err := responseType(r); err == nil && t.as == "" && t.mediaType == resource.MediaTypeJSON {
		// Plain JSON is written from the bytes the store read, not encoded again.
		body, err := store.AppendListJSON(nil, list, raw)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", resource.MediaTypeJSON)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return nil
	}
	s.writeObject(w, r, ri, http.StatusOK, list)
	return nil
}

// checkBodyNamespace applies the namespace of the URL to a decoded body: a
// namespace left out is the URL's, one that differs is 400, as kube-apiserver answers.
func checkBodyNamespace(ri *route, obj resource.Object) error {
	m := obj.GetObjectMeta()
	if !ri.namespaced {
		return nil
	}
	if m.Namespace == "" {
		m.Namespace = ri.namespace
	} else if m.Namespace != ri.namespace {
		return resource.NewBadRequest(fmt.Sprintf(
			"the namespace of the provided object (%s) does not match the namespace sent on the request (%s)",
			m.Namespace, ri.namespace))
	}
	return nil
}

// decodeBody reads the object of a create or update from the body, in the URL's
// namespace (checkBodyNamespace), and sets the Warning headers of the fields it
// dropped (fieldValidation Warn).
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, ri *route) (resource.Object, error) {
	obj, warnings, err := s.decodeObject(r, ri.kind, ri.opts.fieldValidation)
	if err != nil {
		return nil, err
	}
	if ri.opts.fieldValidation == store.FieldValidationWarn {
		addWarnings(w, warnings)
	}
	if err := checkBodyNamespace(ri, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, ri *route) error {
	k := ri.kind
	obj, err := s.decodeBody(w, r, ri)
	if err != nil {
		return err
	}
	ctx := r.Context()
	create := ri.res.create
	name := ""
	if ri.sub != nil {
		create, name = ri.sub.Create, ri.name
	}
	if create != nil {
		res, err := create(ctx, &CreateRequest{Kind: k, Object: obj, Name: name, Namespace: ri.namespace,
			Write: ri.writeOptions()})
		if err != nil {
			return err
		}
		setTypeMeta(res, k)
		s.writeObject(w, r, ri, http.StatusCreated, res)
		return nil
	}
	if err := s.store.Create(ctx, obj, store.CreateOptions{WriteOptions: ri.writeOptions()}); err != nil {
		return err
	}
	setTypeMeta(obj, k)
	s.writeObject(w, r, ri, http.StatusCreated, obj)
	return nil
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, ri *route) error {
	k := ri.kind
	obj, err := s.decodeBody(w, r, ri)
	if err != nil {
		return err
	}
	if m := obj.GetObjectMeta(); m.Name != ri.name {
		return resource.NewBadRequest(fmt.Sprintf(
			"the name of the object (%s) does not match the name on the URL (%s)", m.Name, ri.name))
	}
	if _, err := s.checkVisible(r, ri); err != nil {
		return err
	}
	opts := store.UpdateOptions{WriteOptions: ri.writeOptions()}
	if ri.subresource == "status" {
		err = s.store.UpdateStatus(r.Context(), obj, opts)
	} else {
		err = s.store.Update(r.Context(), obj, opts)
	}
	if err != nil {
		return err
	}
	setTypeMeta(obj, k)
	s.writeObject(w, r, ri, http.StatusOK, obj)
	return nil
}

func (s *Server) patch(w http.ResponseWriter, r *http.Request, ri *route) error {
	k := ri.kind
	ct := r.Header.Get("Content-Type")
	pt := mediaTypeOf(ct)
	switch pt {
	case store.PatchTypeMerge, store.PatchTypeJSON, store.PatchTypeStrategic:
		if err := forceOnlyForApply(r, ri); err != nil {
			return err
		}
	case store.PatchTypeApply:
		return s.apply(w, r, ri) // server-side apply (apply.go)
	default:
		return resource.NewStatusError(resource.ReasonUnsupportedMediaType, fmt.Sprintf(
			"the body of the request was in an unknown format (%q) - accepted media types include: "+
				"application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, "+
				"application/apply-patch+yaml", ct))
	}
	body, err := s.readBody(r)
	if err != nil {
		return err
	}
	if _, err := s.checkVisible(r, ri); err != nil {
		return err
	}
	obj := k.New()
	m := obj.GetObjectMeta()
	m.Name, m.Namespace = ri.name, ri.namespace
	var warnings []string
	po := store.PatchOptions{WriteOptions: ri.writeOptions(), Subresource: ri.subresource,
		FieldValidation: ri.opts.fieldValidation, Warn: func(m string) { warnings = append(warnings, m) },
		StrategicMerge: s.strategicMerge}
	if err := s.store.Patch(r.Context(), obj, pt, body, po); err != nil {
		return err
	}
	addWarnings(w, warnings)
	setTypeMeta(obj, k)
	s.writeObject(w, r, ri, http.StatusOK, obj)
	return nil
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, ri *route) error {
	k := ri.kind
	body, err := s.readBody(r)
	if err != nil {
		return err
	}
	opts, orphan, err := ri.deleteOptionsFrom(body, r.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	uid, err := s.checkVisible(r, ri)
	if err != nil {
		return err
	}
	if uid != "" && opts.Preconditions.UID == nil {
		// Delete the object that was checked, not one made since under its name.
		opts.Preconditions.UID = &uid
	}
	obj := k.New()
	m := obj.GetObjectMeta()
	m.Name, m.Namespace = ri.name, ri.namespace
	removed, err := s.store.Delete(r.Context(), obj, opts)
	if err != nil {
		return err
	}
	if removed {
		// What kube-apiserver answers for a custom resource that is gone.
		s.writeObject(w, r, ri, http.StatusOK, resource.Status{
			TypeMeta: resource.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   resource.StatusSuccess,
			Details:  &resource.StatusDetails{Name: ri.name, Group: k.Group, Kind: k.Resource, UID: obj.GetObjectMeta().UID},
		})
		return nil
	}
	// Only marked for deletion: the object, with its deletionTimestamp. 202 when the
	// client asked for cascading deletion with the deprecated orphanDependents=false.
	code := http.StatusOK
	if orphan != nil && !*orphan {
		code = http.StatusAccepted
	}
	setTypeMeta(obj, k)
	s.writeObject(w, r, ri, code, obj)
	return nil
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, ri *route) error {
	k := ri.kind
	if ri.decision.Visible != nil {
		return resource.NewForbidden(k, "", "deletecollection is not allowed where the caller sees only some of the objects: delete them one by one")
	}
	body, err := s.readBody(r)
	if err != nil {
		return err
	}
	opts, _, err := ri.deleteOptionsFrom(body, r.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	list := k.NewList()
	lo := ri.opts.list
	lo.Namespace = ri.namespace
	if _, err := s.store.DeleteCollection(r.Context(), list, lo, opts); err != nil {
		return err
	}
	setListTypeMeta(list, k)
	s.writeObject(w, r, ri, http.StatusOK, list)
	return nil
}

// strategicMerge applies a strategic merge patch with the merge rules of the kind's
// JSON Schema (its x-kubernetes-patch-merge-key and x-kubernetes-patch-strategy).
func (s *Server) strategicMerge(k *resource.KindInfo, original, patch []byte) ([]byte, error) {
	reg := s.cfg.Schemas
	if reg == nil {
		reg = schema.NewRegistry()
	}
	return reg.StrategicMergePatch(k.GVK(), original, patch)
}
