package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// apply serves a PATCH with Content-Type application/apply-patch+yaml: server-side
// apply (store.Apply) of the body, YAML or JSON, with the query parameters
// fieldManager (required: no User-Agent stands in for it), force, dryRun and
// fieldValidation. Unknown fields are 400 under Strict; under Warn (the default)
// they are dropped with one Warning header each, under Ignore dropped silently. A
// created object is answered with 201, as kube-apiserver does.
func (s *Server) apply(w http.ResponseWriter, r *http.Request, ri *route) error {
	k := ri.kind
	if ri.res.create != nil || ri.sub != nil {
		// Objects made by a create hook (tokens, moves) are never made by apply.
		return methodNotAllowed(k, "apply")
	}
	body, err := s.readBody(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	force, err := boolParam(q, "force")
	if err != nil {
		return err
	}
	config, err := yaml.YAMLToJSON(body)
	if err != nil {
		return resource.NewBadRequest(fmt.Sprintf("the apply configuration is not valid YAML or JSON: %v", err)).WithCause(err)
	}
	if v := ri.opts.fieldValidation; v != store.FieldValidationStrict {
		var unknown []string
		if config, unknown, err = dropUnknownFields(config, reflect.TypeOf(k.New())); err != nil {
			return err
		}
		if v != store.FieldValidationIgnore {
			msgs := make([]string, len(unknown))
			for i, f := range unknown {
				msgs[i] = "unknown field \"" + f + "\""
			}
			addWarnings(w, msgs)
		}
	}
	if _, err := s.checkVisible(r, ri); err != nil {
		return err
	}
	obj := k.New()
	m := obj.GetObjectMeta()
	m.Name, m.Namespace = ri.name, ri.namespace
	wo := ri.writeOptions()
	wo.FieldManager = q.Get("fieldManager")
	created, err := s.store.Apply(r.Context(), obj, config, store.ApplyOptions{WriteOptions: wo, Force: force, Subresource: ri.subresource})
	if err != nil {
		return err
	}
	setTypeMeta(obj, k)
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	s.writeObject(w, r, ri, code, obj)
	return nil
}

// forceOnlyForApply refuses the force parameter on a patch that is not an apply,
// as kube-apiserver does (422 on PatchOptions).
func forceOnlyForApply(r *http.Request, ri *route) error {
	if _, ok := r.URL.Query()["force"]; !ok {
		return nil
	}
	return resource.NewInvalid(optionsKind(ri.verb), "", resource.ErrorList{
		resource.Forbidden(resource.NewPath("force"), "may not be specified for non-apply patch")})
}

// dropUnknownFields removes from the JSON object config the members that the Go type
// t (a pointer to the kind's struct) does not declare, and returns their paths
// (e.g. "spec.colour"), sorted.
func dropUnknownFields(config []byte, t reflect.Type) ([]byte, []string, error) {
	var v any
	if err := json.Unmarshal(config, &v); err != nil {
		return nil, nil, resource.NewBadRequest(fmt.Sprintf("the apply configuration is not valid JSON: %v", err)).WithCause(err)
	}
	var unknown []string
	prune(v, t, "", &unknown)
	if len(unknown) == 0 {
		return config, nil, nil
	}
	sort.Strings(unknown)
	out, err := json.Marshal(v)
	if err != nil {
		return nil, nil, resource.NewInternalError(err)
	}
	return out, unknown, nil
}

// prune drops the members of v unknown to t, recording their paths under path.
func prune(v any, t reflect.Type, path string, unknown *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := jsonFields(t)
		for name, val := range m {
			ft, ok := fields[name]
			if !ok {
				delete(m, name)
				*unknown = append(*unknown, joinPath(path, name))
				continue
			}
			prune(val, ft, joinPath(path, name), unknown)
		}
	case reflect.Slice, reflect.Array:
		if l, ok := v.([]any); ok && t.Elem().Kind() != reflect.Uint8 {
			for i, e := range l {
				prune(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", unknown)
			}
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok {
			for name, e := range m {
				prune(e, t.Elem(), joinPath(path, name), unknown)
			}
		}
	}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// jsonFields maps the JSON names of a struct's fields (embedded inline structs
// included) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, t := range jsonFields(ft) {
					out[n] = t
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
