package crclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/resource/jsonscan"
)

// kindOf returns the kind of obj, an object (not a list).
func (c *Client) kindOf(obj runtime.Object) (*kind, error) {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return nil, err
	}
	return c.kinds.get(gvk)
}

// kindOfList returns the kind of the items of list.
func (c *Client) kindOfList(list runtime.Object) (*kind, error) {
	gvk, err := apiutil.GVKForObject(list, c.scheme)
	if err != nil {
		return nil, err
	}
	item, ok := strings.CutSuffix(gvk.Kind, "List")
	if !ok {
		return nil, fmt.Errorf("crclient: %T is not a list: its kind is %q", list, gvk.Kind)
	}
	return c.kinds.get(gvk.GroupVersion().WithKind(item))
}

// toStore converts the user's obj into a new object of the store's kind k: the
// metadata field by field, the rest through JSON.
func (c *Client) toStore(k *kind, obj runtime.Object) (resource.Object, error) {
	var data []byte
	var err error
	var meta *metav1.ObjectMeta
	if u, ok := obj.(*unstructured.Unstructured); ok {
		data, err = json.Marshal(u.Object)
	} else if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && !v.IsNil() && objectMetaField(v.Type().Elem()) != nil {
		idx := objectMetaField(v.Type().Elem())
		meta = v.Elem().FieldByIndex(idx).Addr().Interface().(*metav1.ObjectMeta)
		// A typed kind of the store's takes the other fields through a mapper
		// when there is one (mapper.go): what the JSON below would give.
		if out := k.info.New(); !isRaw(out) && mapObject(out, obj) {
			*out.GetObjectMeta() = toStoreMeta(meta)
			tm := out.GetTypeMeta()
			tm.Kind, tm.APIVersion = k.info.Kind, k.info.APIVersion()
			return out, nil
		}
		// A shallow copy without metadata is encoded; the metadata is converted.
		cp := reflect.New(v.Type().Elem())
		cp.Elem().Set(v.Elem())
		cp.Elem().FieldByIndex(idx).SetZero()
		data, err = json.Marshal(cp.Interface())
	} else {
		data, err = json.Marshal(obj)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the %s cannot be encoded: %v", k.gvk.Kind, err))
	}
	out := k.info.New()
	if r, ok := out.(*resource.RawObject); ok {
		if meta == nil || !splitMembers(r, data) {
			err = r.UnmarshalJSON(data) // json.Unmarshal would check data once more first
		}
	} else {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the %s does not decode as one: %v", k.gvk.Kind, err))
	}
	if meta != nil {
		*out.GetObjectMeta() = toStoreMeta(meta)
	}
	tm := out.GetTypeMeta()
	tm.Kind, tm.APIVersion = k.info.Kind, k.info.APIVersion()
	return out, nil
}

// splitMembers fills r, a new generic object, with the members of data, json.Marshal's
// encoding of a typed object whose metadata was left empty (it is converted on its
// own): what r.UnmarshalJSON would give, without checking and copying data again
// (json.Marshal's output is valid and compact, and data is the caller's own). It
// reports false, having changed nothing, when data is not as expected (an
// apiVersion or kind that is no string, metadata that is not empty); the caller
// then takes UnmarshalJSON, which answers as it always did.
func splitMembers(r *resource.RawObject, data []byte) bool {
	ok := true
	isObject := jsonscan.EachMember(data, func(rawKey, v []byte) bool {
		switch key := string(jsonscan.Unquote(rawKey)); key {
		case "apiVersion", "kind":
			ok = len(v) > 0 && v[0] == '"' // the caller sets both from the kind
		case "metadata":
			ok = string(v) == `{"creationTimestamp":null}` || string(v) == `{}`
		case "status":
		default:
			ok = len(v) > 0
		}
		return ok
	})
	if !ok || !isObject {
		return false
	}
	jsonscan.EachMember(data, func(rawKey, v []byte) bool {
		switch key := string(jsonscan.Unquote(rawKey)); key {
		case "apiVersion", "kind", "metadata":
		case "status":
			r.Status = v[:len(v):len(v)]
		default:
			if r.Fields == nil {
				r.Fields = make(map[string]json.RawMessage, 4)
			}
			r.Fields[key] = v[:len(v):len(v)]
		}
		return true
	})
	return true
}

// fromStore fills the user's dst with src, an object a read returned (and the
// client's own: it is changed), through the conversion cache.
func (c *Client) fromStore(k *kind, src resource.Object, dst runtime.Object) error {
	return c.convert(k, src, dst, true)
}

// fromWrite fills the user's dst with src, the result of a write. Its version is new:
// the cache has no conversion of it, and one is kept only once a read asks for it.
func (c *Client) fromWrite(k *kind, src resource.Object, dst runtime.Object) error {
	return c.convert(k, src, dst, false)
}

func (c *Client) convert(k *kind, src resource.Object, dst runtime.Object, cached bool) error {
	m := src.GetObjectMeta()
	key := convKey{gvk: k.gvk, namespace: m.Namespace, name: m.Name, t: reflect.TypeOf(dst)}
	if cached && c.conv.get(key, m.UID, m.ResourceVersion, dst) {
		return nil
	}
	if !c.returnManagedFields {
		m.ManagedFields = nil
	}
	keep := keepsTypeMeta(dst)
	if !keep {
		*src.GetTypeMeta() = resource.TypeMeta{}
	}
	// A typed dst takes the metadata field by field and the rest through JSON.
	var dstMeta *metav1.ObjectMeta
	saved := *m
	if _, u := dst.(*unstructured.Unstructured); !u {
		if v := reflect.ValueOf(dst); v.Kind() == reflect.Pointer && !v.IsNil() {
			if idx := objectMetaField(v.Type().Elem()); idx != nil {
				dstMeta = v.Elem().FieldByIndex(idx).Addr().Interface().(*metav1.ObjectMeta)
				*m = resource.ObjectMeta{}
			}
		}
	}
	if dstMeta != nil && !isRaw(src) {
		// A typed kind of the store's into a typed dst: through a mapper when there
		// is one (mapper.go), what the JSON below would give.
		reflect.ValueOf(dst).Elem().SetZero()
		if mapObject(dst, src) {
			*m = saved
			if keep {
				dst.GetObjectKind().SetGroupVersionKind(k.gvk)
			}
			fromStoreMeta(m, dstMeta)
			if cached {
				c.conv.put(key, m.UID, m.ResourceVersion, dst)
			}
			return nil
		}
	}
	var data []byte
	var err error
	if r, ok := src.(*resource.RawObject); ok && dstMeta != nil {
		data = membersJSON(r) // the metadata is converted on its own
	} else if ok {
		data, err = r.MarshalJSON() // json.Marshal would check and compact it once more
	} else {
		data, err = json.Marshal(src)
	}
	*m = saved
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if err := decodeInto(data, dst, keep, k.gvk); err != nil {
		return err
	}
	if dstMeta != nil {
		fromStoreMeta(m, dstMeta)
	}
	if cached {
		c.conv.put(key, m.UID, m.ResourceVersion, dst)
	}
	return nil
}

// membersJSON is r.MarshalJSON without the metadata, which is empty: its
// apiVersion and kind when set, the other members in key order, then its status.
func membersJSON(r *resource.RawObject) []byte {
	size := len(r.Status) + len(r.APIVersion) + len(r.Kind) + 48
	keys := make([]string, 0, len(r.Fields))
	for k, v := range r.Fields {
		keys = append(keys, k)
		size += len(k) + len(v) + 8
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, '{')
	member := func(key string, v []byte) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = jsonscan.AppendQuote(b, []byte(key))
		b = append(b, ':')
		if len(v) == 0 {
			v = []byte("null")
		}
		b = append(b, v...)
	}
	if r.APIVersion != "" {
		member("apiVersion", jsonscan.AppendQuote(nil, []byte(r.APIVersion)))
	}
	if r.Kind != "" {
		member("kind", jsonscan.AppendQuote(nil, []byte(r.Kind)))
	}
	for _, k := range keys {
		member(k, r.Fields[k])
	}
	if len(r.Status) > 0 {
		member("status", r.Status)
	}
	return append(b, '}')
}

// decodeInto replaces what dst holds with the JSON data.
func decodeInto(data []byte, dst runtime.Object, keepTypeMeta bool, gvk schema.GroupVersionKind) error {
	if d, ok := dst.(*unstructured.Unstructured); ok {
		d.Object = nil
		if err := d.UnmarshalJSON(data); err != nil {
			return apierrors.NewInternalError(err)
		}
		return nil
	}
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("crclient: %T must be a non-nil pointer", dst)
	}
	v.Elem().SetZero()
	if err := json.Unmarshal(data, dst); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("crclient: decode into %T: %w", dst, err))
	}
	if keepTypeMeta {
		dst.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return nil
}

// isRaw reports whether o is the generic object of a kind registered at run time.
func isRaw(o resource.Object) bool {
	_, ok := o.(*resource.RawObject)
	return ok
}

// fromStoreList fills the user's list with the store's list src: its items one by
// one (each through the conversion cache) and its list metadata.
func (c *Client) fromStoreList(k *kind, src resource.ObjectList, dst runtime.Object) error {
	itemsPtr, err := meta.GetItemsPtr(dst)
	if err != nil {
		return err
	}
	items := reflect.ValueOf(itemsPtr).Elem()
	if items.Kind() != reflect.Slice {
		return fmt.Errorf("crclient: the items of %T are not a slice", dst)
	}
	n := src.Len()
	out := reflect.MakeSlice(items.Type(), n, n)
	for i := 0; i < n; i++ {
		slot, ok := out.Index(i).Addr().Interface().(runtime.Object)
		if !ok {
			return fmt.Errorf("crclient: the items of %T are not runtime.Objects", dst)
		}
		if err := c.fromStore(k, src.Item(i), slot); err != nil {
			return err
		}
	}
	if n == 0 && items.IsNil() {
		out = reflect.MakeSlice(items.Type(), 0, 0)
	}
	items.Set(out)
	lm := src.GetListMeta()
	acc, err := meta.ListAccessor(dst)
	if err != nil {
		return err
	}
	acc.SetResourceVersion(lm.ResourceVersion)
	acc.SetContinue(lm.Continue)
	acc.SetRemainingItemCount(lm.RemainingItemCount)
	if keepsTypeMeta(dst) {
		dst.GetObjectKind().SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
	}
	return nil
}

// toAPIError turns the store's errors into apimachinery's StatusErrors, so that
// every apierrors.IsXxx answers as against kube-apiserver. Other errors pass as they
// are (they come from the client itself, before any request).
func toAPIError(err error) error {
	if err == nil {
		return nil
	}
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		return err
	}
	var se *resource.StatusError
	if !errors.As(err, &se) && resource.ReasonOf(err) == resource.ReasonUnknown {
		return err
	}
	st := resource.StatusOf(err)
	out := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: st.Message,
		Reason: metav1.StatusReason(st.Reason), Code: st.Code,
	}
	if d := st.Details; d != nil {
		out.Details = &metav1.StatusDetails{Name: d.Name, Group: d.Group, Kind: d.Kind,
			UID: types.UID(d.UID), RetryAfterSeconds: d.RetryAfterSeconds}
		for _, cs := range d.Causes {
			out.Details.Causes = append(out.Details.Causes, metav1.StatusCause{
				Type: metav1.CauseType(cs.Type), Message: cs.Message, Field: cs.Field})
		}
	}
	return &apierrors.StatusError{ErrStatus: out}
}

// newObject returns an empty object of the user's type for the kind k, as list
// items of list would be.
func (c *Client) newObject(k *kind, like runtime.Object) (runtime.Object, error) {
	switch like.(type) {
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		p := &metav1.PartialObjectMetadata{}
		p.SetGroupVersionKind(k.gvk)
		return p, nil
	}
	if keepsTypeMeta(like) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.gvk)
		return u, nil
	}
	return c.scheme.New(k.gvk)
}

// itemsOf returns the items of the user's list as objects.
func itemsOf(list runtime.Object) ([]runtime.Object, error) {
	return meta.ExtractList(list)
}
