package schema

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// widget is a host kind for the admission tests.
type widget struct {
	resource.TypeMeta   `json:",inline"`
	resource.ObjectMeta `json:"metadata"`
	Spec                map[string]any `json:"spec,omitempty"`
}

func badToken() *resource.DirectClusterEndpointToken {
	tok := &resource.DirectClusterEndpointToken{}
	tok.Name = "tok"
	tok.Spec.Scope = &resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{{Verbs: []string{"get", "get*"}}}}
	return tok
}

func TestAdmitter(t *testing.T) {
	scheme := resource.NewScheme()
	tokenKind, ok := scheme.KindFor(resource.GroupVersion, resource.KindDirectClusterEndpointToken)
	require.True(t, ok)
	instanceKind, _ := scheme.KindFor(resource.GroupVersion, resource.KindVirtualClusterInstance)
	ctx := context.Background()
	a := NewAdmitter(nil)

	good := fullObjects()[resource.KindDirectClusterEndpointToken]
	writes := []struct {
		name string
		req  store.AdmissionRequest
	}{
		{"create", store.AdmissionRequest{Operation: store.OperationCreate, Kind: tokenKind}},
		{"update", store.AdmissionRequest{Operation: store.OperationUpdate, Kind: tokenKind, OldObject: good}},
		{"status update", store.AdmissionRequest{Operation: store.OperationUpdate, Kind: tokenKind, Subresource: "status", OldObject: good}},
		{"dry-run create", store.AdmissionRequest{Operation: store.OperationCreate, Kind: tokenKind, DryRun: true}},
		{"dry-run update", store.AdmissionRequest{Operation: store.OperationUpdate, Kind: tokenKind, DryRun: true, OldObject: good}},
	}
	for _, w := range writes {
		t.Run("accepts a valid object on "+w.name, func(t *testing.T) {
			req := w.req
			req.Object = good
			require.NoError(t, a.Validate(ctx, &req))
		})
		t.Run("refuses an invalid object on "+w.name, func(t *testing.T) {
			req := w.req
			req.Object = badToken()
			causes := causesOf(t, a.Validate(ctx, &req))
			require.Equal(t, []string{"spec.scope.rules[0].verbs[1]"}, fields(causes))
		})
	}
	t.Run("refuses with the request's kind in the error", func(t *testing.T) {
		inst := &resource.VirtualClusterInstance{}
		inst.Name, inst.Namespace = "vc", "P_A"
		err := a.Validate(ctx, &store.AdmissionRequest{Operation: store.OperationCreate, Kind: instanceKind, Object: inst})
		require.Equal(t, []string{"metadata.namespace"}, fields(causesOf(t, err)))
		require.Contains(t, err.Error(), `VirtualClusterInstance.management.service "vc" is invalid`)
	})
	t.Run("finds the kind from the object when the request has none", func(t *testing.T) {
		tok := badToken()
		tok.Kind, tok.APIVersion = resource.KindDirectClusterEndpointToken, resource.GroupVersion
		causesOf(t, a.Validate(ctx, &store.AdmissionRequest{Operation: store.OperationCreate, Object: tok}))
	})
	t.Run("lets deletes through", func(t *testing.T) {
		require.NoError(t, a.Validate(ctx, &store.AdmissionRequest{Operation: store.OperationDelete, Kind: tokenKind, OldObject: good}))
		require.NoError(t, a.Validate(ctx, &store.AdmissionRequest{Operation: store.OperationDelete, Kind: tokenKind, Object: badToken()}))
	})
	t.Run("lets kinds without a schema through", func(t *testing.T) {
		w := &widget{TypeMeta: resource.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}}
		w.Name = "NOT A NAME"
		info := &resource.KindInfo{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets"}
		require.NoError(t, a.Validate(ctx, &store.AdmissionRequest{Operation: store.OperationCreate, Kind: info, Object: w}))
	})
	t.Run("lets a nil request through", func(t *testing.T) {
		require.NoError(t, a.Validate(ctx, nil))
	})
	t.Run("validates a host kind once its schema is registered", func(t *testing.T) {
		reg := NewRegistry()
		hook := NewAdmitter(reg)
		info := &resource.KindInfo{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets"}
		w := &widget{Spec: map[string]any{"size": 0}}
		w.Name = "w"
		req := &store.AdmissionRequest{Operation: store.OperationCreate, Kind: info, Object: w}
		require.NoError(t, hook.Validate(ctx, req))
		require.NoError(t, reg.Register(widgetGVK, []byte(widgetSchema)))
		causes := causesOf(t, hook.Validate(ctx, req))
		require.Equal(t, []string{"spec.size"}, fields(causes))
	})
	t.Run("honours a cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := a.Validate(cctx, &store.AdmissionRequest{Operation: store.OperationCreate, Kind: tokenKind, Object: good})
		require.ErrorIs(t, err, context.Canceled)
	})
}
