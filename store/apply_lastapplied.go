package store

import (
	"encoding/json"

	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/management-service/mgmt/resource"
)

// LastAppliedAnnotation is the annotation in which client-side "kubectl apply"
// keeps the configuration it applied last.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// kubectlManager is the field manager of "kubectl apply --server-side", the one
// manager for which, as in Kubernetes, a server-side apply takes over from
// client-side apply: conflicts on fields the last client-side apply set (to the
// values they still have) are not conflicts, and the last-applied annotation is kept
// in step with what was applied.
const kubectlManager = "kubectl"

// allowedByLastApplied returns the conflicts of cs that the object's last
// client-side apply (its LastAppliedAnnotation, in live) accounts for: the fields
// it set that still have the values it set. ok is false when there is no usable
// annotation.
func allowedByLastApplied(kt *kindType, k *resource.KindInfo, live *typed.TypedValue, annotations map[string]string, cs merge.Conflicts) (rest merge.Conflicts, ok bool) {
	last := annotations[LastAppliedAnnotation]
	if last == "" {
		return cs, false
	}
	v, err := decodeValue([]byte(last))
	if err != nil {
		return cs, false
	}
	m, _ := v.(map[string]any)
	if m == nil || m["apiVersion"] != k.APIVersion() {
		return cs, false
	}
	lastTV, err := kt.pt.FromUnstructured(m)
	if err != nil {
		return cs, false
	}
	set, err := lastTV.ToFieldSet()
	if err != nil {
		return cs, false
	}
	cmp, err := lastTV.Compare(live)
	if err != nil {
		return cs, false
	}
	allowed := set.Difference(cmp.Modified).Difference(cmp.Added).Difference(cmp.Removed)
	for _, c := range cs {
		if !allowed.Has(c.Path) {
			rest = append(rest, c)
		}
	}
	return rest, true
}

// syncLastApplied sets obj's LastAppliedAnnotation, when it has one, to the applied
// configuration cfg (without the annotation), as kube-apiserver does after
// "kubectl apply --server-side", so that a later client-side apply starts from it.
func syncLastApplied(obj resource.Object, cfg map[string]any) error {
	meta := obj.GetObjectMeta()
	if meta.Annotations[LastAppliedAnnotation] == "" {
		return nil
	}
	c := make(map[string]any, len(cfg))
	for k, v := range cfg {
		c[k] = v
	}
	if m, ok := cfg["metadata"].(map[string]any); ok {
		mc := make(map[string]any, len(m))
		for k, v := range m {
			mc[k] = v
		}
		if a, ok := m["annotations"].(map[string]any); ok {
			ac := make(map[string]any, len(a))
			for k, v := range a {
				if k != LastAppliedAnnotation {
					ac[k] = v
				}
			}
			mc["annotations"] = ac
			if len(ac) == 0 {
				delete(mc, "annotations")
			}
		}
		c["metadata"] = mc
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	annotations := make(map[string]string, len(meta.Annotations))
	for k, v := range meta.Annotations {
		annotations[k] = v
	}
	annotations[LastAppliedAnnotation] = string(b) + "\n"
	meta.Annotations = annotations
	return nil
}
