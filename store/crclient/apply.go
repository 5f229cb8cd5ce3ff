package crclient

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// applyOpts are the options of one server-side apply, as the client's option types
// carry them.
type applyOpts struct {
	dryRun  []string
	manager string // required: no DefaultFieldManager for apply, as kube-apiserver
	force   *bool
}

func (o applyOpts) store(sub string) store.ApplyOptions {
	return store.ApplyOptions{WriteOptions: store.WriteOptions{DryRun: dryRun(o.dryRun), FieldManager: o.manager},
		Force: o.force != nil && *o.force, Subresource: sub}
}

// applyData runs a server-side apply of data (an apply configuration in JSON or
// YAML) to the object of kind k named namespace/name, and returns the stored
// result.
func (c *Client) applyData(ctx context.Context, k *kind, namespace, name string, data []byte, o applyOpts, sub string) (resource.Object, error) {
	config, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, toAPIError(resource.NewBadRequest(fmt.Sprintf("the apply configuration is not YAML or JSON: %v", err)))
	}
	target := k.info.New()
	tm := target.GetObjectMeta()
	tm.Name, tm.Namespace = name, namespace
	if _, err := c.store.Apply(ctx, target, config, o.store(sub)); err != nil {
		return nil, toAPIError(err)
	}
	return target, nil
}

// Apply is server-side apply ([store.Store.Apply]) of an apply configuration: a
// typed one from client-go's applyconfigurations, or client.ApplyConfigurationFromUnstructured.
// The field manager (client.FieldOwner) is required (422 Invalid otherwise, as
// kube-apiserver answers); client.ForceOwnership takes conflicting fields over
// instead of the 409 Conflict with one FieldManagerConflict cause per field;
// client.DryRunAll writes nothing. obj is filled with the result.
func (c *Client) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	o := (&client.ApplyOptions{}).ApplyOptions(opts)
	return c.applyConfiguration(ctx, obj, obj, applyOpts{dryRun: o.DryRun, manager: o.FieldManager, force: o.Force}, "")
}

// applyConfiguration applies body (the apply configuration sent) and fills obj with
// the result.
func (c *Client) applyConfiguration(ctx context.Context, obj, body runtime.ApplyConfiguration, o applyOpts, sub string) error {
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("crclient: marshal the apply configuration: %w", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return fmt.Errorf("crclient: the apply configuration: %w", err)
	}
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		return fmt.Errorf("crclient: the apply configuration's apiVersion: %w", err)
	}
	k, err := c.kinds.get(gv.WithKind(u.GetKind()))
	if err != nil {
		return err
	}
	out, err := c.applyData(ctx, k, u.GetNamespace(), u.GetName(), data, o, sub)
	if err != nil {
		return err
	}
	res := &unstructured.Unstructured{}
	if err := c.fromWrite(k, out, res); err != nil {
		return err
	}
	return fillApplyConfiguration(obj, res)
}

// fillApplyConfiguration replaces what obj holds with res.
func fillApplyConfiguration(obj runtime.ApplyConfiguration, res *unstructured.Unstructured) error {
	if u, ok := obj.(interface {
		SetUnstructuredContent(map[string]any)
	}); ok {
		u.SetUnstructuredContent(res.Object)
		return nil
	}
	data, err := res.MarshalJSON()
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("crclient: the apply configuration %T is not a non-nil pointer", obj)
	}
	v.Elem().Set(reflect.Zero(v.Elem().Type()))
	if err := json.Unmarshal(data, obj); err != nil {
		return fmt.Errorf("crclient: fill the apply configuration: %w", err)
	}
	return nil
}
