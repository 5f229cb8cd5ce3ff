package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// options are the query parameters of a resource request, parsed.
type options struct {
	dryRun       bool
	fieldManager string
	// fieldValidation is Strict, Warn (the default, as in kube-apiserver) or Ignore.
	fieldValidation string
	resourceVersion string
	list            store.ListOptions
	allowBookmarks  bool
	initialEvents   bool
	watchTimeout    time.Duration
	// nameSelector is the metadata.name a list or watch is pinned to by its field
	// selector, for authorization.
	nameSelector string
	// delete options from the query (the body may add to them).
	gracePeriod       *int64
	propagationPolicy string
}

// optionsKind names the options kind of a verb in 422 errors, as kube-apiserver does
// ("CreateOptions.meta.k8s.io").
func optionsKind(verb string) *resource.KindInfo {
	kind := map[string]string{
		"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions",
		"delete": "DeleteOptions", "deletecollection": "DeleteOptions",
		"list": "ListOptions", "watch": "ListOptions", "get": "GetOptions",
	}[verb]
	return &resource.KindInfo{Group: "meta.k8s.io", Version: "v1", Kind: kind}
}

// parseQuery reads the query parameters the verb uses. Parameters a verb does not use
// are ignored, as kube-apiserver ignores them.
func (ri *route) parseQuery(r *http.Request, defaultManager string) error {
	if ri.nonResource != "" {
		return nil
	}
	q := r.URL.Query()
	o := &ri.opts
	o.resourceVersion = q.Get("resourceVersion")
	var errs resource.ErrorList
	dryRun := func() {
		for _, v := range q["dryRun"] {
			if v != "All" {
				errs = append(errs, resource.NotSupported(resource.NewPath("dryRun"), v, []string{"All"}))
			}
			o.dryRun = true
		}
	}
	switch ri.verb {
	case "create", "update", "patch":
		// In kube-apiserver's order: fieldManager, dryRun, fieldValidation.
		o.fieldManager = q.Get("fieldManager")
		if o.fieldManager != "" {
			errs = append(errs, resource.ValidateFieldManager(o.fieldManager, resource.NewPath("fieldManager"))...)
		} else {
			o.fieldManager = defaultManager
		}
		dryRun()
		switch v := q.Get("fieldValidation"); v {
		case "":
			o.fieldValidation = store.FieldValidationWarn
		case store.FieldValidationStrict, store.FieldValidationWarn, store.FieldValidationIgnore:
			o.fieldValidation = v
		default:
			errs = append(errs, resource.NotSupported(resource.NewPath("fieldValidation"), v,
				[]string{"", store.FieldValidationIgnore, store.FieldValidationStrict, store.FieldValidationWarn}))
		}
	case "delete", "deletecollection":
		dryRun()
		if v := q.Get("gracePeriodSeconds"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return resource.NewBadRequest(fmt.Sprintf("invalid gracePeriodSeconds %q", v))
			}
			o.gracePeriod = &n
		}
		o.propagationPolicy = q.Get("propagationPolicy")
	}
	if len(errs) > 0 {
		return resource.NewInvalid(optionsKind(ri.verb), "", errs)
	}
	switch ri.verb {
	case "list", "watch", "deletecollection":
		return o.parseList(q, ri.verb, ri.res.kind.Namespaced)
	}
	return nil
}

// parseList reads the options of a list, watch or deletecollection. A field selector
// on metadata.namespace of a cluster-scoped kind is 400, as kube-apiserver answers
// for a cluster-scoped custom resource.
func (o *options) parseList(q url.Values, verb string, namespaced bool) error {
	l := &o.list
	l.LabelSelector = q.Get("labelSelector")
	l.FieldSelector = q.Get("fieldSelector")
	l.Continue = q.Get("continue")
	l.ResourceVersion = q.Get("resourceVersion")
	l.ResourceVersionMatch = q.Get("resourceVersionMatch")
	if v := q.Get("limit"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return resource.NewBadRequest(fmt.Sprintf("invalid limit %q: must be a non-negative integer", v))
		}
		l.Limit = n
	}
	if l.FieldSelector != "" {
		fs, err := resource.ParseFieldSelector(l.FieldSelector)
		if err != nil {
			return err
		}
		if v, ok := fs.RequiredValue(resource.FieldMetadataName); ok {
			o.nameSelector = v
		}
		for _, req := range fs.Requirements() {
			if req.Field == resource.FieldMetadataNamespace && !namespaced {
				return resource.NewBadRequest("field label not supported: " + resource.FieldMetadataNamespace)
			}
		}
	}
	if verb != "watch" {
		return nil
	}
	var err error
	if o.allowBookmarks, err = boolParam(q, "allowWatchBookmarks"); err != nil {
		return err
	}
	if o.initialEvents, err = boolParam(q, "sendInitialEvents"); err != nil {
		return err
	}
	o.watchTimeout = DefaultWatchTimeout
	if v := q.Get("timeoutSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return resource.NewBadRequest(fmt.Sprintf("invalid timeoutSeconds %q", v))
		}
		if n > 0 {
			o.watchTimeout = min(time.Duration(n)*time.Second, MaxWatchTimeout)
		}
	}
	return nil
}

// boolParam reads a boolean query parameter as kube-apiserver does: "true" or "1"
// (any case for true/false), "false", "0" or absent.
func boolParam(q url.Values, name string) (bool, error) {
	v := q.Get(name)
	switch strings.ToLower(v) {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	}
	return false, resource.NewBadRequest(fmt.Sprintf("invalid %s %q: must be true or false", name, v))
}

// deleteOptions is the DeleteOptions body of a delete (meta.k8s.io/v1), as kubectl and
// client-go send it.
type deleteOptions struct {
	Kind               string `json:"kind,omitempty"`
	APIVersion         string `json:"apiVersion,omitempty"`
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
	Preconditions      *struct {
		UID             *string `json:"uid,omitempty"`
		ResourceVersion *string `json:"resourceVersion,omitempty"`
	} `json:"preconditions,omitempty"`
	OrphanDependents  *bool    `json:"orphanDependents,omitempty"`
	PropagationPolicy *string  `json:"propagationPolicy,omitempty"`
	DryRun            []string `json:"dryRun,omitempty"`
}

// deleteOptionsFrom merges the query's delete options with a DeleteOptions body, when
// there is one. It returns the options and orphanDependents, when the body set it.
func (ri *route) deleteOptionsFrom(body []byte, contentType string) (store.DeleteOptions, *bool, error) {
	o := ri.opts
	do := store.DeleteOptions{
		WriteOptions:       store.WriteOptions{DryRun: o.dryRun, User: ri.user},
		GracePeriodSeconds: o.gracePeriod,
		PropagationPolicy:  o.propagationPolicy,
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return do, nil, nil
	}
	data := body
	mt := mediaTypeOf(contentType)
	switch mt {
	case resource.MediaTypeJSON:
	case "", resource.MediaTypeYAML, "text/yaml", "application/x-yaml":
		if mt != "" || !looksLikeJSON(body) {
			j, err := yaml.YAMLToJSONStrict(body)
			if err != nil {
				return do, nil, resource.NewBadRequest(fmt.Sprintf("the DeleteOptions body is malformed: %v", err))
			}
			data = j
		}
	default:
		return do, nil, resource.NewUnsupportedMediaType(contentType)
	}
	var d deleteOptions
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return do, nil, resource.NewBadRequest(fmt.Sprintf("the DeleteOptions body is malformed: %v", err))
	}
	if dec.More() {
		return do, nil, resource.NewBadRequest("the DeleteOptions body holds more than one object")
	}
	if d.Kind != "" && d.Kind != "DeleteOptions" {
		return do, nil, resource.NewBadRequest(fmt.Sprintf("the body of a delete must be DeleteOptions, not %q", d.Kind))
	}
	switch d.APIVersion {
	case "", "v1", "meta.k8s.io/v1", resource.GroupVersion:
	default:
		return do, nil, resource.NewBadRequest(fmt.Sprintf("DeleteOptions of apiVersion %q are not supported", d.APIVersion))
	}
	var errs resource.ErrorList
	for _, v := range d.DryRun {
		if v != "All" {
			errs = append(errs, resource.NotSupported(resource.NewPath("dryRun"), v, []string{"All"}))
		}
		do.DryRun = true
	}
	if d.OrphanDependents != nil && d.PropagationPolicy != nil {
		errs = append(errs, resource.Invalid(resource.NewPath("propagationPolicy"), *d.PropagationPolicy,
			"orphanDependents and propagationPolicy cannot both be set"))
	}
	if len(errs) > 0 {
		return do, nil, resource.NewInvalid(optionsKind("delete"), "", errs)
	}
	if d.GracePeriodSeconds != nil {
		do.GracePeriodSeconds = d.GracePeriodSeconds
	}
	if d.PropagationPolicy != nil {
		do.PropagationPolicy = *d.PropagationPolicy
	}
	if d.OrphanDependents != nil {
		// The deprecated form of propagationPolicy.
		do.PropagationPolicy = store.DeletePropagationBackground
		if *d.OrphanDependents {
			do.PropagationPolicy = store.DeletePropagationOrphan
		}
	}
	if d.Preconditions != nil {
		do.Preconditions.UID = d.Preconditions.UID
		do.Preconditions.ResourceVersion = d.Preconditions.ResourceVersion
	}
	return do, d.OrphanDependents, nil
}
