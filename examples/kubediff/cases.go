package main

import (
	"fmt"
	"sync"
	"time"
)

var (
	casesOnce sync.Once
	allCases  []Case
)

// Cases returns every case, in the order they run: the numbered items of issue 21
// first, then strategic merge patch, discovery, the review APIs, server-side apply
// (issue 22) and the core semantics.
func Cases() []Case {
	casesOnce.Do(func() {
		for _, group := range [][]Case{
			statusCases(), fieldValidationCases(), acceptCases(), bookmarkCases(), remainingCases(),
			managedFieldsCases(), finalizerFieldsCases(), foregroundCases(), smallCases(),
			smpCases(), discoveryCases(), reviewCases(), applyCases(), applyMergeCases(),
			createCases(), getListCases(), updateCases(), patchCases(), deleteCases(), watchCases(),
		} {
			allCases = append(allCases, group...)
		}
	})
	return allCases
}

// withVCI is the usual start of a case: the project and one instance {n}.
func withVCI(steps ...Step) []Step {
	return append([]Step{setupProject(), setupVCI("mk", "{n}", "")}, steps...)
}

// 1. PATCH …/status, and the status subresource.
func statusCases() []Case {
	a := "1"
	return []Case{
		{Name: "1-status/merge-patch", Area: a, Steps: withVCI(
			patch("patch", vci("{n}")+"/status", ctMerge, `{"status":{"phase":"Ready"}}`),
			get("get", vci("{n}")))},
		{Name: "1-status/json-patch", Area: a, Steps: withVCI(
			patch("patch", vci("{n}")+"/status", ctJSONP, `[{"op":"add","path":"/status","value":{"phase":"Ready","reason":"Up"}}]`),
			get("get", vci("{n}")))},
		{Name: "1-status/patch-ignores-spec", Area: a, Steps: withVCI(
			patch("patch", vci("{n}")+"/status", ctMerge, `{"spec":{"displayName":"Changed"},"status":{"phase":"Ready"}}`),
			get("get", vci("{n}")))},
		{Name: "1-status/put", Area: a, Steps: withVCI(
			put("put", vci("{n}")+"/status", vciBody("{n}", `{"metadata":{"resourceVersion":"{rv:mk}"},"status":{"phase":"Sleeping","message":"zz"}}`)),
			get("get", vci("{n}")))},
		{Name: "1-status/main-ignores-status", Area: a, Steps: withVCI(
			patch("patch", vci("{n}"), ctMerge, `{"spec":{"displayName":"Changed"},"status":{"phase":"Ready"}}`))},
		{Name: "1-status/create-drops-status", Area: a, Steps: []Step{setupProject(),
			post("create", vcis, vciBody("{n}", `{"status":{"phase":"Ready"}}`))}},
		{Name: "1-status/get-status", Area: a, Steps: withVCI(get("get", vci("{n}")+"/status"))},
		{Name: "1-status/stale-rv", Area: a, Steps: withVCI(
			patch("touch", vci("{n}"), ctMerge, `{"metadata":{"labels":{"x":"1"}}}`),
			patch("patch", vci("{n}")+"/status", ctMerge, `{"metadata":{"resourceVersion":"{rv:mk}"},"status":{"phase":"Ready"}}`))},
		{Name: "1-status/missing", Area: a, Steps: []Step{setupProject(),
			patch("patch", vci("nothere")+"/status", ctMerge, `{"status":{"phase":"Ready"}}`)}},
		{Name: "1-status/dry-run", Area: a, Steps: withVCI(
			withQuery(patch("patch", vci("{n}")+"/status", ctMerge, `{"status":{"phase":"Ready"}}`), "dryRun=All"),
			get("get", vci("{n}")))},
		{Name: "1-status/invalid-phase", Area: a, Steps: withVCI(
			patch("patch", vci("{n}")+"/status", ctMerge, `{"status":{"phase":"Bogus"}}`))},
		{Name: "1-status/project", Area: a, Steps: []Step{setupProject(),
			patch("patch", project("{p}")+"/status", ctMerge, `{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`)}},
		{Name: "1-status/field-manager", Area: a, Steps: withVCI(
			withQuery(patch("patch", vci("{n}")+"/status", ctMerge, `{"status":{"phase":"Failed","reason":"Broken"}}`), "fieldManager=controller"),
			patch("patch2", vci("{n}")+"/status", ctJSONP, `[{"op":"replace","path":"/status/phase","value":"Ready"}]`))},
		{Name: "1-status/discovery", Area: a, Steps: []Step{
			{Label: "discovery", Path: apiV1, Pick: pickResource("virtualclusterinstances/status")}}},
		{Name: "1-status/discovery-project", Area: a, Steps: []Step{
			{Label: "discovery", Path: apiV1, Pick: pickResource("projects/status")}}},
	}
}

// 2. fieldValidation: Strict, Warn (the default), Ignore, a bogus value.
func fieldValidationCases() []Case {
	a := "2"
	unknown := vciBody("{n}", `{"spec":{"foo":"bar"},"bogus":1}`)
	dup := `{"apiVersion":"management.service/v1","kind":"VirtualClusterInstance","metadata":{"name":"{n}","namespace":"{ns}","labels":{"` + projectLabel + `":"{p}"}},"spec":{"displayName":"a","displayName":"b"}}`
	yamlUnknown := "apiVersion: management.service/v1\nkind: VirtualClusterInstance\nmetadata:\n  name: {n}\n  namespace: {ns}\n  labels:\n    " + projectLabel + ": {p}\nspec:\n  displayName: yval\n  foo: bar\n"
	yamlDup := "apiVersion: management.service/v1\nkind: VirtualClusterInstance\nmetadata:\n  name: {n}\n  namespace: {ns}\n  labels:\n    " + projectLabel + ": {p}\nspec:\n  displayName: yval\n  displayName: zval\n"
	create := func(name, query, body string) Case {
		return Case{Name: name, Area: a, Steps: []Step{setupProject(), withQuery(post("create", vcis, body), query)}}
	}
	yamlCreate := func(name, query, body string) Case {
		c := create(name, query, body)
		c.Steps[1] = withHeader(c.Steps[1], "Content-Type", ctYAML)
		return c
	}
	return []Case{
		create("2-fv/unknown-default", "", unknown),
		create("2-fv/unknown-strict", "fieldValidation=Strict", unknown),
		create("2-fv/unknown-warn", "fieldValidation=Warn", unknown),
		create("2-fv/unknown-ignore", "fieldValidation=Ignore", unknown),
		create("2-fv/bogus-value", "fieldValidation=Bogus", vciBody("{n}", "")),
		create("2-fv/duplicate-default", "", dup),
		create("2-fv/duplicate-strict", "fieldValidation=Strict", dup),
		create("2-fv/duplicate-ignore", "fieldValidation=Ignore", dup),
		create("2-fv/metadata-unknown-strict", "fieldValidation=Strict", vciBody("{n}", `{"metadata":{"bogus":"x"}}`)),
		yamlCreate("2-fv/yaml-unknown-strict", "fieldValidation=Strict", yamlUnknown),
		yamlCreate("2-fv/yaml-unknown-warn", "", yamlUnknown),
		yamlCreate("2-fv/yaml-duplicate-warn", "", yamlDup),
		yamlCreate("2-fv/yaml-duplicate-strict", "fieldValidation=Strict", yamlDup),
		yamlCreate("2-fv/yaml-duplicate-ignore", "fieldValidation=Ignore", yamlDup),
		{Name: "2-fv/update-strict", Area: a, Steps: withVCI(
			withQuery(put("put", vci("{n}"), vciBody("{n}", `{"metadata":{"resourceVersion":"{rv:mk}"},"spec":{"foo":"bar"}}`)), "fieldValidation=Strict"))},
		{Name: "2-fv/update-warn", Area: a, Steps: withVCI(
			withQuery(put("put", vci("{n}"), vciBody("{n}", `{"metadata":{"resourceVersion":"{rv:mk}"},"spec":{"foo":"bar"}}`)), "fieldValidation=Warn"))},
		{Name: "2-fv/merge-patch-strict", Area: a, Steps: withVCI(
			withQuery(patch("patch", vci("{n}"), ctMerge, `{"spec":{"foo":"bar"}}`), "fieldValidation=Strict"))},
		{Name: "2-fv/merge-patch-default", Area: a, Steps: withVCI(
			patch("patch", vci("{n}"), ctMerge, `{"spec":{"foo":"bar"}}`))},
		{Name: "2-fv/merge-patch-ignore", Area: a, Steps: withVCI(
			withQuery(patch("patch", vci("{n}"), ctMerge, `{"spec":{"foo":"bar"}}`), "fieldValidation=Ignore"))},
		{Name: "2-fv/json-patch-strict", Area: a, Steps: withVCI(
			withQuery(patch("patch", vci("{n}"), ctJSONP, `[{"op":"add","path":"/spec/foo","value":"bar"}]`), "fieldValidation=Strict"))},
		{Name: "2-fv/status-patch-strict", Area: a, Steps: withVCI(
			withQuery(patch("patch", vci("{n}")+"/status", ctMerge, `{"status":{"foo":"bar"}}`), "fieldValidation=Strict"))},
	}
}

// 3. Accept: Table, PartialObjectMetadata(List), q-values.
func acceptCases() []Case {
	a := "3"
	two := func(steps ...Step) []Step {
		return append([]Step{setupProject(),
			setupVCI("mk", "{n}", `{"status":{"phase":"Ready"}}`),
			setupVCI("mk2", "{n}-b", `{"spec":{"clusterRef":{"cluster":"c2"}}}`)}, steps...)
	}
	acc := func(label, path, accept, query string) Step {
		return withQuery(withHeader(get(label, path), "Accept", accept), query)
	}
	return []Case{
		{Name: "3-accept/table-list", Area: a, Steps: two(acc("list", vcis, acceptTable, ""))},
		{Name: "3-accept/table-get", Area: a, Steps: two(acc("get", vci("{n}"), acceptTable, ""))},
		{Name: "3-accept/table-include-object", Area: a, Steps: two(acc("list", vcis, acceptTable, "includeObject=Object"))},
		{Name: "3-accept/table-include-none", Area: a, Steps: two(acc("list", vcis, acceptTable, "includeObject=None"))},
		{Name: "3-accept/table-project", Area: a, Steps: []Step{setupProject(),
			acc("list", projects, acceptTable, sel("labelSelector", "kd={p}"))}},
		{Name: "3-accept/table-v1beta1", Area: a, Steps: two(acc("list", vcis, "application/json;as=Table;v=v1beta1;g=meta.k8s.io", ""))},
		{Name: "3-accept/table-then-json", Area: a, Steps: two(acc("list", vcis, acceptTable+", application/json", ""))},
		{Name: "3-accept/pom-get", Area: a, Steps: two(acc("get", vci("{n}"), acceptPOM, ""))},
		{Name: "3-accept/pom-list", Area: a, Steps: two(acc("list", vcis, acceptPOML, ""))},
		{Name: "3-accept/pom-protobuf-first", Area: a, Steps: two(func() Step {
			s := acc("list", vcis, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", "")
			// kube-apiserver answers in protobuf, of which the suite reads the type:
			// the type is what is compared.
			s.Pick = pickKeys("apiVersion", "kind")
			return s
		}())},
		{Name: "3-accept/pom-list-as-object", Area: a, Steps: two(acc("get", vci("{n}"), acceptPOML, ""))},
		{Name: "3-accept/unsupported", Area: a, Steps: two(acc("get", vci("{n}"), "application/xml", ""))},
		{Name: "3-accept/yaml", Area: a, Steps: two(acc("get", vci("{n}"), ctYAML, ""))},
		{Name: "3-accept/table-watch", Area: a, Steps: []Step{setupProject(),
			withHeader(watch("watch", vcis, "", 1, setupVCI("mk", "{n}", "")), "Accept", acceptTable)}},
	}
}

// 4. Bookmarks.
func bookmarkCases() []Case {
	a := "4"
	return []Case{
		{Name: "4-bookmark/initial-events-end", Area: a, Steps: withVCI(
			watch("watch", vcis, "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", 2))},
		{Name: "4-bookmark/not-asked", Area: a, Steps: withVCI(
			watch("watch", vcis, "resourceVersion={rv:mk}", 1,
				patch("touch", vci("{n}"), ctMerge, `{"metadata":{"labels":{"x":"1"}}}`)))},
		// An idle store: nothing is written while the watch is open.
		{Name: "4-bookmark/idle", Area: a, Slow: true, Steps: withVCI(
			Step{Label: "watch", Path: vcis, Query: "watch=1&allowWatchBookmarks=true&resourceVersion={rv:mk}&" + sel("labelSelector", "none=none"),
				Watch: &WatchSpec{Events: 1, Within: 75 * time.Second}})},
		// A busy store whose events all miss the watch's selector: an object is
		// patched every 10 s for 70 s; a bookmark keeps the watcher's
		// resourceVersion recent.
		{Name: "4-bookmark/filtered-busy", Area: a, Slow: true, Steps: withVCI(
			Step{Label: "watch", Path: vcis, Query: "watch=1&allowWatchBookmarks=true&resourceVersion={rv:mk}&" + sel("labelSelector", "none=none"),
				Watch: &WatchSpec{Events: 1, Within: 10 * time.Second, Then: busyPatches(7, 10*time.Second)}})},
	}
}

// busyPatches patches the case's object n times, every d.
func busyPatches(n int, d time.Duration) []Step {
	var out []Step
	for i := 0; i < n; i++ {
		out = append(out, setup(after(d, patch(fmt.Sprintf("busy-%d", i), vci("{n}"), ctMerge, fmt.Sprintf(`{"spec":{"description":"%d"}}`, i)))))
	}
	return out
}

// 5. remainingItemCount.
func remainingCases() []Case {
	a := "5"
	three := func(steps ...Step) []Step {
		return append([]Step{setupProject(), setupVCI("a", "{n}-a", ""), setupVCI("b", "{n}-b", ""),
			setupVCI("c", "{n}-c", `{"metadata":{"labels":{"tier":"x"}}}`)}, steps...)
	}
	return []Case{
		{Name: "5-remaining/first-page", Area: a, Steps: three(withQuery(get("page1", vcis), "limit=1"))},
		{Name: "5-remaining/second-page", Area: a, Steps: three(setup(withQuery(get("page1", vcis), "limit=1")),
			withQuery(get("page2", vcis), "limit=1&continue={continue:page1}"))},
		{Name: "5-remaining/last-page", Area: a, Steps: three(setup(withQuery(get("page1", vcis), "limit=2")),
			withQuery(get("page2", vcis), "limit=2&continue={continue:page1}"))},
		{Name: "5-remaining/with-selector", Area: a, Steps: three(withQuery(get("page1", vcis), "limit=1&"+sel("labelSelector", projectLabel+"={p}")))},
		{Name: "5-remaining/exact-limit", Area: a, Steps: three(withQuery(get("page1", vcis), "limit=3"))},
	}
}

// 6. managedFields reset.
func managedFieldsCases() []Case {
	a := "6"
	return []Case{
		{Name: "6-mf/update-empty-entry-resets", Area: a, Steps: withVCI(
			put("put", vci("{n}"), vciBody("{n}", `{"metadata":{"resourceVersion":"{rv:mk}","managedFields":[{}]},"spec":{"displayName":"Changed"}}`)))},
		{Name: "6-mf/update-empty-list-ignored", Area: a, Steps: withVCI(
			put("put", vci("{n}"), vciBody("{n}", `{"metadata":{"resourceVersion":"{rv:mk}","managedFields":[]},"spec":{"displayName":"Changed"}}`)))},
		{Name: "6-mf/patch-empty-entry-resets", Area: a, Steps: withVCI(
			patch("patch", vci("{n}"), ctMerge, `{"metadata":{"managedFields":[{}]}}`))},
		{Name: "6-mf/patch-empty-list-ignored", Area: a, Steps: withVCI(
			patch("patch", vci("{n}"), ctMerge, `{"metadata":{"managedFields":[]},"spec":{"displayName":"Changed"}}`))},
		{Name: "6-mf/invalid-entry-ignored", Area: a, Steps: withVCI(
			patch("patch", vci("{n}"), ctMerge, `{"metadata":{"managedFields":[{"manager":"x","operation":"Bogus"}]},"spec":{"displayName":"Changed"}}`))},
		{Name: "6-mf/create-with-entry", Area: a, Steps: []Step{setupProject(),
			post("create", vcis, vciBody("{n}", `{"metadata":{"managedFields":[{"manager":"other","operation":"Update","apiVersion":"management.service/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:displayName":{}}}}]}}`))}},
		{Name: "6-mf/two-managers", Area: a, Steps: withVCI(
			withQuery(patch("patch", vci("{n}"), ctMerge, `{"spec":{"displayName":"Other"}}`), "fieldManager=other"),
			withQuery(patch("patch2", vci("{n}"), ctMerge, `{"spec":{"description":"d"}}`), "fieldManager=third"))},
	}
}

// 7. FieldsV1 of metadata.finalizers.
func finalizerFieldsCases() []Case {
	a := "7"
	return []Case{
		{Name: "7-finalizers/create", Area: a, Steps: []Step{setupProject(),
			post("create", vcis, vciBody("{n}", `{"metadata":{"finalizers":["example.com/f","example.com/g"]}}`))}},
		{Name: "7-finalizers/add", Area: a, Steps: withVCI(
			withQuery(patch("patch", vci("{n}"), ctJSONP, `[{"op":"add","path":"/metadata/finalizers","value":["example.com/f"]}]`), "fieldManager=fin"))},
		{Name: "7-finalizers/remove-one", Area: a, Steps: []Step{setupProject(),
			setupVCI("mk", "{n}", `{"metadata":{"finalizers":["example.com/f","example.com/g"]}}`),
			patch("patch", vci("{n}"), ctJSONP, `[{"op":"remove","path":"/metadata/finalizers/0"}]`)}},
	}
}

// 8. Foreground deletion, twice.
func foregroundCases() []Case {
	a := "8"
	fin := func(steps ...Step) []Step {
		return append([]Step{setupProject(), setupVCI("mk", "{n}", `{"metadata":{"finalizers":["example.com/f"]}}`)}, steps...)
	}
	return []Case{
		// The reference runs no garbage collector, ours does: the collector's
		// removal of foregroundDeletion (no dependents) is done by hand on both, after
		// a second, so that the second DELETE finds the same object on both.
		{Name: "8-foreground/delete-twice", Area: a, Steps: fin(
			del("delete", vci("{n}"), "propagationPolicy=Foreground"),
			setup(after(time.Second, patch("collected", vci("{n}"), ctMerge, `{"metadata":{"finalizers":["example.com/f"]}}`))),
			del("delete2", vci("{n}"), "propagationPolicy=Foreground"))},
		{Name: "8-foreground/background-then-foreground", Area: a, Steps: fin(
			del("delete", vci("{n}"), ""),
			del("delete2", vci("{n}"), "propagationPolicy=Foreground"))},
		{Name: "8-foreground/orphan", Area: a, Steps: fin(
			del("delete", vci("{n}"), "propagationPolicy=Orphan"))},
		{Name: "8-foreground/foreground-body", Area: a, Steps: fin(
			Step{Label: "delete", Method: "DELETE", Path: vci("{n}"), Body: `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}`})},
		{Name: "8-foreground/bogus-policy", Area: a, Steps: fin(
			del("delete", vci("{n}"), "propagationPolicy=Sideways"))},
	}
}

// 9. The smaller items.
func smallCases() []Case {
	a := "9"
	return []Case{
		{Name: "9-small/fieldselector-namespace-empty-cluster", Area: a, Steps: []Step{setupProject(),
			withQuery(get("list", projects), "fieldSelector="+urlq("metadata.namespace=")+"&"+sel("labelSelector", "kd={p}"))}},
		{Name: "9-small/fieldselector-namespace-value-cluster", Area: a, Steps: []Step{setupProject(),
			withQuery(get("list", projects), "fieldSelector="+urlq("metadata.namespace=x")+"&"+sel("labelSelector", "kd={p}"))}},
		{Name: "9-small/fieldselector-namespace-namespaced", Area: a, Steps: withVCI(
			withQuery(get("list", allVCIs), "fieldSelector="+urlq("metadata.namespace={ns}")))},
		{Name: "9-small/kind-of-other-endpoint", Area: a, Steps: []Step{setupProject(),
			post("create", vcis, mergeJSON(vciBody("{n}", ""), `{"kind":"Project"}`))}},
		{Name: "9-small/put-missing", Area: a, Steps: []Step{setupProject(),
			put("put", vci("{n}"), vciBody("{n}", ""))}},
		{Name: "9-small/put-missing-with-rv", Area: a, Steps: []Step{setupProject(),
			put("put", vci("{n}"), vciBody("{n}", `{"metadata":{"resourceVersion":"12"}}`))}},
		{Name: "9-small/dry-run-update-keeps-rv", Area: a, Steps: withVCI(
			withQuery(put("put", vci("{n}"), vciBody("{n}", `{"metadata":{"resourceVersion":"{rv:mk}"},"spec":{"displayName":"Dry"}}`)), "dryRun=All"))},
		{Name: "9-small/dry-run-patch-keeps-rv", Area: a, Steps: withVCI(
			withQuery(patch("patch", vci("{n}"), ctMerge, `{"spec":{"displayName":"Dry"}}`), "dryRun=All"))},
		{Name: "9-small/selector-gt", Area: a, Steps: withVCI(withQuery(get("list", vcis), sel("labelSelector", "a>1")))},
		{Name: "9-small/selector-lt", Area: a, Steps: withVCI(withQuery(get("list", vcis), sel("labelSelector", "a<1")))},
		{Name: "9-small/selector-gt-match", Area: a, Steps: []Step{setupProject(),
			setupVCI("mk", "{n}", `{"metadata":{"labels":{"a":"5"}}}`), setupVCI("mk2", "{n}-b", `{"metadata":{"labels":{"a":"0"}}}`),
			withQuery(get("list", vcis), sel("labelSelector", "a>1"))}},
		{Name: "9-small/accept-q-values", Area: a, Steps: withVCI(
			withHeader(get("get", vci("{n}")), "Accept", "application/yaml;q=0.9, application/json;q=0.1"))},
		{Name: "9-small/accept-q-values-json-first", Area: a, Steps: withVCI(
			withHeader(get("get", vci("{n}")), "Accept", "application/json;q=0.5, application/yaml"))},
		{Name: "9-small/accept-wildcard", Area: a, Steps: withVCI(
			withHeader(get("get", vci("{n}")), "Accept", "*/*"))},
	}
}

func urlq(s string) string { return sel("x", s)[2:] }

// Strategic merge patch: ours are built-in kinds (issue 21); kube-apiserver
// refuses it for CRDs.
func smpCases() []Case {
	a := "smp"
	return []Case{
		{Name: "smp/spec", Area: a, Steps: withVCI(patch("patch", vci("{n}"), ctSMP, `{"spec":{"displayName":"Changed"}}`))},
		{Name: "smp/labels", Area: a, Steps: withVCI(patch("patch", vci("{n}"), ctSMP, `{"metadata":{"labels":{"x":"y"}}}`))},
		{Name: "smp/project", Area: a, Steps: []Step{setupProject(),
			patch("patch", project("{p}"), ctSMP, `{"spec":{"description":"d"}}`)}},
	}
}

// Discovery: core group, group and resource lists, aggregated discovery.
func discoveryCases() []Case {
	a := "discovery"
	return []Case{
		// apiextensions-apiserver serves no core group; kube-apiserver does, and
		// clients (the Python client's DynamicClient) read it: its answer is stated.
		{Name: "discovery/api", Area: a, Steps: []Step{{Label: "api", Path: "/api", Pick: pickKeys("kind", "versions"),
			KubeAnswer: jsonView(200, `{"kind":"APIVersions","versions":["v1"]}`)}}},
		{Name: "discovery/api-v1", Area: a, Steps: []Step{{Label: "api-v1", Path: "/api/v1", Pick: pickKeys("kind", "groupVersion"),
			KubeAnswer: jsonView(200, `{"kind":"APIResourceList","groupVersion":"v1"}`)}}},
		{Name: "discovery/group", Area: a, Steps: []Step{{Label: "group", Path: "/apis/" + Group}}},
		{Name: "discovery/projects", Area: a, Steps: []Step{{Label: "v1", Path: apiV1, Pick: pickResource("projects")}}},
		{Name: "discovery/virtualclusterinstances", Area: a, Steps: []Step{{Label: "v1", Path: apiV1, Pick: pickResource("virtualclusterinstances")}}},
		{Name: "discovery/directclusterendpointtokens", Area: a, Steps: []Step{{Label: "v1", Path: apiV1, Pick: pickResource("directclusterendpointtokens")}}},
		{Name: "discovery/accesskeys", Area: a, Steps: []Step{{Label: "v1", Path: apiV1, Pick: pickResource("accesskeys")}}},
		{Name: "discovery/apis-has-group", Area: a, Steps: []Step{{Label: "apis", Path: "/apis", Pick: func(v any) any {
			m, _ := v.(map[string]any)
			groups, _ := m["groups"].([]any)
			for _, g := range groups {
				if gm, ok := g.(map[string]any); ok && gm["name"] == Group {
					return gm
				}
			}
			return map[string]any{"missing": Group}
		}}}},
		{Name: "discovery/aggregated", Area: a, Steps: []Step{{Label: "apis", Path: "/apis",
			Header: map[string]string{"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"},
			Pick: func(v any) any {
				m, _ := v.(map[string]any)
				items, _ := m["items"].([]any)
				for _, g := range items {
					if gm, ok := g.(map[string]any); ok {
						if md, ok := gm["metadata"].(map[string]any); ok && md["name"] == Group {
							return gm
						}
					}
				}
				return map[string]any{"kind": m["kind"], "missing": Group}
			}}}},
		{Name: "discovery/version", Area: a, Steps: []Step{{Label: "version", Path: "/version", Only: []string{"code", "contentType"}}}},
		{Name: "discovery/openapi-v3", Area: a, Steps: []Step{{Label: "openapi", Path: "/openapi/v3", Pick: func(v any) any {
			m, _ := v.(map[string]any)
			paths, _ := m["paths"].(map[string]any)
			_, ok := paths["apis/"+Group+"/"+Version]
			return map[string]any{"hasGroupVersion": ok, "hasPaths": len(paths) > 0}
		}}}},
	}
}

// SelfSubjectReview and SelfSubjectAccessReview (kubectl auth whoami / can-i):
// apiextensions-apiserver serves neither, so kube-apiserver's answer to the admin
// (allowed, a user name) is stated.
func reviewCases() []Case {
	a := "review"
	return []Case{
		{Name: "review/selfsubjectreview", Area: a, Steps: []Step{{Label: "review", Method: "POST",
			Path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
			Body: `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`,
			Pick: func(v any) any {
				m, _ := v.(map[string]any)
				st, _ := m["status"].(map[string]any)
				ui, _ := st["userInfo"].(map[string]any)
				name, _ := ui["username"].(string)
				return map[string]any{"kind": m["kind"], "hasUsername": name != ""}
			},
			KubeAnswer: jsonView(201, `{"kind":"SelfSubjectReview","hasUsername":true}`)}}},
		{Name: "review/selfsubjectaccessreview", Area: a, Steps: []Step{{Label: "review", Method: "POST",
			Path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"list","group":"management.service","resource":"projects"}}}`,
			Pick: func(v any) any {
				m, _ := v.(map[string]any)
				st, _ := m["status"].(map[string]any)
				return map[string]any{"kind": m["kind"], "allowed": st["allowed"]}
			},
			KubeAnswer: jsonView(201, `{"kind":"SelfSubjectAccessReview","allowed":true}`)}}},
	}
}

// Server-side apply basics (issue 22).
func applyCases() []Case {
	a := "apply"
	applyBody := func(name, spec string) string {
		return "apiVersion: management.service/v1\nkind: VirtualClusterInstance\nmetadata:\n  name: " + name +
			"\n  namespace: {ns}\n  labels:\n    " + projectLabel + ": {p}\nspec:\n" + spec
	}
	apply := func(label, manager, body string, extra string) Step {
		q := "fieldManager=" + manager
		if extra != "" {
			q += "&" + extra
		}
		return withQuery(patch(label, vci("{n}"), ctApply, body), q)
	}
	return []Case{
		{Name: "apply/create", Area: a, Steps: []Step{setupProject(),
			apply("apply", "a", applyBody("{n}", "  displayName: A\n"), "")}},
		{Name: "apply/reapply-same", Area: a, Steps: []Step{setupProject(),
			setup(apply("apply", "a", applyBody("{n}", "  displayName: A\n"), "")),
			apply("apply2", "a", applyBody("{n}", "  displayName: A\n"), "")}},
		{Name: "apply/conflict", Area: a, Steps: []Step{setupProject(),
			setup(apply("apply", "a", applyBody("{n}", "  displayName: A\n"), "")),
			apply("apply2", "b", applyBody("{n}", "  displayName: B\n"), "")}},
		{Name: "apply/force", Area: a, Steps: []Step{setupProject(),
			setup(apply("apply", "a", applyBody("{n}", "  displayName: A\n"), "")),
			apply("apply2", "b", applyBody("{n}", "  displayName: B\n"), "force=true")}},
		{Name: "apply/no-field-manager", Area: a, Steps: []Step{setupProject(),
			patch("apply", vci("{n}"), ctApply, applyBody("{n}", "  displayName: A\n"))}},
		{Name: "apply/remove-owned-field", Area: a, Steps: []Step{setupProject(),
			setup(apply("apply", "a", applyBody("{n}", "  displayName: A\n  description: D\n"), "")),
			apply("apply2", "a", applyBody("{n}", "  displayName: A\n"), "")}},
		{Name: "apply/after-update", Area: a, Steps: withVCI(
			apply("apply", "a", applyBody("{n}", "  description: D\n"), ""))},
		{Name: "apply/status", Area: a, Steps: withVCI(
			withQuery(patch("apply", vci("{n}")+"/status", ctApply,
				"apiVersion: management.service/v1\nkind: VirtualClusterInstance\nmetadata:\n  name: {n}\n  namespace: {ns}\nstatus:\n  phase: Ready\n"), "fieldManager=ctl"))},
		{Name: "apply/json-body", Area: a, Steps: []Step{setupProject(),
			apply("apply", "a", vciBody("{n}", ""), "")}},
		{Name: "apply/dry-run", Area: a, Steps: []Step{setupProject(),
			apply("apply", "a", applyBody("{n}", "  displayName: A\n"), "dryRun=All"),
			get("get", vci("{n}"))}},
	}
}

// Server-side apply: how lists merge, shared fields, and where Update and Apply
// managers meet.
func applyMergeCases() []Case {
	a := "apply"
	meta := "apiVersion: management.service/v1\nkind: VirtualClusterInstance\nmetadata:\n  name: {n}\n  namespace: {ns}\n"
	labels := "  labels:\n    " + projectLabel + ": {p}\n"
	apply := func(label, manager, body, extra string) Step {
		q := "fieldManager=" + manager
		if extra != "" {
			q += "&" + extra
		}
		return withQuery(patch(label, vci("{n}"), ctApply, body), q)
	}
	applyStatus := func(label, manager, body string) Step {
		return withQuery(patch(label, vci("{n}")+"/status", ctApply, meta+body), "fieldManager="+manager)
	}
	applyProject := func(label, manager, clusters string) Step {
		return withQuery(patch(label, project("{p}"), ctApply,
			"apiVersion: management.service/v1\nkind: Project\nmetadata:\n  name: {p}\nspec:\n  allowedClusters:\n"+clusters),
			"fieldManager="+manager)
	}
	fins := func(fs ...string) string {
		out := meta + labels + "  finalizers:\n"
		for _, f := range fs {
			out += "  - " + f + "\n"
		}
		return out
	}
	return []Case{
		// A list-map (x-kubernetes-list-map-keys: name) merges item by item.
		{Name: "apply/list-map-by-key", Area: a, Steps: []Step{setupProject(),
			applyProject("apply", "a", "  - name: c1\n"),
			applyProject("apply2", "b", "  - name: c2\n"),
			applyProject("apply3", "a", "  - name: c3\n")}},
		// A set (metadata.finalizers) merges value by value.
		{Name: "apply/set-finalizers", Area: a, Steps: withVCI(
			apply("apply", "a", fins("example.com/a"), ""),
			apply("apply2", "b", fins("example.com/b"), ""),
			apply("apply3", "a", fins(), ""),
			apply("apply4", "b", meta+labels, ""))},
		// Two managers apply the same value: they share it; when one drops it, it stays.
		{Name: "apply/shared-field", Area: a, Steps: []Step{setupProject(),
			setup(apply("apply", "a", meta+labels+"spec:\n  displayName: A\n", "")),
			apply("apply2", "b", meta+labels+"spec:\n  displayName: A\n", ""),
			apply("apply3", "a", meta+labels, ""),
			apply("apply4", "b", meta+labels, "")}},
		// An Update manager owns what it set: applying another value conflicts with it.
		{Name: "apply/after-update-conflict", Area: a, Steps: withVCI(
			setup(withQuery(patch("patch", vci("{n}"), ctMerge, `{"spec":{"displayName":"U"}}`), "fieldManager=upd")),
			apply("apply", "a", meta+labels+"spec:\n  displayName: A\n", ""),
			apply("apply2", "a", meta+labels+"spec:\n  displayName: A\n", "force=true"))},
		// An object whose managedFields were reset: the first apply gives what is set
		// to before-first-apply.
		{Name: "apply/reset-then-apply", Area: a, Steps: withVCI(
			patch("reset", vci("{n}"), ctMerge, `{"metadata":{"managedFields":[{}]}}`),
			apply("apply", "a", meta+labels+"spec:\n  description: D\n", ""),
			apply("apply2", "a", meta+labels+"spec:\n  displayName: A\n", ""))},
		// Status applied through the status subresource; the main resource ignores it.
		{Name: "apply/status-conditions", Area: a, Steps: withVCI(
			applyStatus("apply", "c1", "status:\n  conditions:\n  - type: Ready\n    status: \"True\"\n"),
			applyStatus("apply2", "c2", "status:\n  conditions:\n  - type: Synced\n    status: \"False\"\n    reason: Wait\n"),
			applyStatus("apply3", "c2", "status:\n  conditions:\n  - type: Ready\n    status: \"False\"\n"),
			applyStatus("apply4", "c1", "status:\n  phase: Ready\n"))},
		{Name: "apply/status-on-main-resource", Area: a, Steps: withVCI(
			apply("apply", "a", meta+labels+"spec:\n  description: D\nstatus:\n  phase: Ready\n", ""))},
		{Name: "apply/status-missing-object", Area: a, Steps: []Step{setupProject(),
			applyStatus("apply", "c1", "status:\n  phase: Ready\n")}},
	}
}

// Core semantics: create.
func createCases() []Case {
	a := "core"
	c := func(name, body string, extra ...Step) Case {
		return Case{Name: name, Area: a, Steps: append([]Step{setupProject(), post("create", vcis, body)}, extra...)}
	}
	return []Case{
		c("core/create", vciBody("{n}", ""), get("get", vci("{n}"))),
		{Name: "core/create-exists", Area: a, Steps: withVCI(post("create", vcis, vciBody("{n}", "")))},
		c("core/generate-name", vciBody("", `{"metadata":{"name":null,"generateName":"gen-"}}`)),
		c("core/no-name", vciBody("", `{"metadata":{"name":null}}`)),
		c("core/invalid-name", vciBody("Bad_Name", "")),
		c("core/name-too-long", vciBody("a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a123456789a1234", "")),
		c("core/create-with-rv", vciBody("{n}", `{"metadata":{"resourceVersion":"5"}}`)),
		c("core/create-with-uid", vciBody("{n}", `{"metadata":{"uid":"11111111-2222-3333-4444-555555555555"}}`)),
		c("core/create-generation-ignored", vciBody("{n}", `{"metadata":{"generation":7}}`)),
		c("core/namespace-mismatch", vciBody("{n}", `{"metadata":{"namespace":"elsewhere"}}`)),
		c("core/invalid-type", vciBody("{n}", `{"spec":{"parameters":5}}`)),
		c("core/missing-required", vciBody("{n}", `{"spec":{"templateRef":{"version":"1"}}}`)),
		c("core/pattern", vciBody("{n}", `{"spec":{"clusterRef":{"cluster":"UPPER_case"}}}`)),
		c("core/invalid-label", vciBody("{n}", `{"metadata":{"labels":{"bad key!":"v"}}}`)),
		c("core/invalid-label-value", vciBody("{n}", `{"metadata":{"labels":{"k":"bad value!"}}}`)),
		c("core/two-controllers", vciBody("{n}", `{"metadata":{"ownerReferences":[
			{"apiVersion":"v1","kind":"A","name":"a","uid":"u1","controller":true},
			{"apiVersion":"v1","kind":"B","name":"b","uid":"u2","controller":true}]}}`)),
		c("core/empty-body", ""),
		c("core/malformed-json", `{"apiVersion":`),
		c("core/wrong-apiversion", mergeJSON(vciBody("{n}", ""), `{"apiVersion":"other.example/v1"}`)),
		c("core/no-kind", mergeJSON(vciBody("{n}", ""), `{"kind":null,"apiVersion":null}`)),
		c("core/finalizers-and-annotations", vciBody("{n}", `{"metadata":{"finalizers":["example.com/f"],"annotations":{"a":"b"}}}`)),
		{Name: "core/create-yaml", Area: a, Steps: []Step{setupProject(),
			withHeader(post("create", vcis, "apiVersion: management.service/v1\nkind: VirtualClusterInstance\nmetadata:\n  name: {n}\n  namespace: {ns}\n  labels:\n    "+projectLabel+": {p}\nspec:\n  displayName: yval\n"), "Content-Type", ctYAML)}},
		{Name: "core/create-dry-run", Area: a, Steps: []Step{setupProject(),
			withQuery(post("create", vcis, vciBody("{n}", "")), "dryRun=All"),
			get("get", vci("{n}"))}},
		{Name: "core/create-project", Area: a, Steps: []Step{post("create", projects, projectBody("{p}", ""))}},
		{Name: "core/create-bad-content-type", Area: a, Steps: []Step{setupProject(),
			withHeader(post("create", vcis, vciBody("{n}", "")), "Content-Type", "text/plain")}},
	}
}

// Core semantics: get and list.
func getListCases() []Case {
	a := "core"
	labelled := func(steps ...Step) []Step {
		return append([]Step{setupProject(),
			setupVCI("a", "{n}-a", `{"metadata":{"labels":{"env":"prod","tier":"web"}}}`),
			setupVCI("b", "{n}-b", `{"metadata":{"labels":{"env":"dev"}}}`),
			setupVCI("c", "{n}-c", "")}, steps...)
	}
	ls := func(name, selector string) Case {
		return Case{Name: name, Area: a, Steps: labelled(withQuery(get("list", vcis), sel("labelSelector", selector)))}
	}
	return []Case{
		{Name: "core/get", Area: a, Steps: withVCI(get("get", vci("{n}")))},
		{Name: "core/get-missing", Area: a, Steps: []Step{setupProject(), get("get", vci("nothere"))}},
		// resourceVersion=0 reads kube-apiserver's watch cache, which may lag a
		// write by a moment: such reads (here, in core/list-rv0 and core/watch-rv0)
		// wait a second.
		{Name: "core/get-rv0", Area: a, Steps: withVCI(after(time.Second, withQuery(get("get", vci("{n}")), "resourceVersion=0")))},
		{Name: "core/get-other-namespace", Area: a, Steps: withVCI(get("get", apiV1+"/namespaces/p-elsewhere/virtualclusterinstances/{n}"))},
		{Name: "core/list-empty", Area: a, Steps: []Step{setupProject(), get("list", vcis)}},
		{Name: "core/list", Area: a, Steps: labelled(get("list", vcis))},
		ls("core/list-label-eq", "env=prod"),
		ls("core/list-label-neq", "env!=prod"),
		ls("core/list-label-in", "env in (prod,dev)"),
		ls("core/list-label-notin", "env notin (prod)"),
		ls("core/list-label-exists", "tier"),
		ls("core/list-label-not-exists", "!tier"),
		ls("core/list-label-and", "env=prod,tier=web"),
		ls("core/list-label-invalid", "env==="),
		{Name: "core/list-field-name", Area: a, Steps: labelled(withQuery(get("list", vcis), "fieldSelector="+urlq("metadata.name={n}-b")))},
		{Name: "core/list-field-unsupported", Area: a, Steps: labelled(withQuery(get("list", vcis), "fieldSelector="+urlq("spec.displayName=x")))},
		{Name: "core/list-limit-continue", Area: a, Steps: labelled(withQuery(get("page1", vcis), "limit=2"),
			withQuery(get("page2", vcis), "limit=2&continue={continue:page1}"))},
		{Name: "core/list-bad-continue", Area: a, Steps: labelled(withQuery(get("list", vcis), "limit=1&continue=notatoken"))},
		{Name: "core/list-rv0", Area: a, Steps: labelled(after(time.Second, withQuery(get("list", vcis), "resourceVersion=0")))},
		{Name: "core/list-rv-not-older-than", Area: a, Steps: labelled(withQuery(get("list", vcis), "resourceVersion={rv:c}&resourceVersionMatch=NotOlderThan"))},
		{Name: "core/list-rv-exact", Area: a, Steps: labelled(withQuery(get("list", vcis), "resourceVersion={rv:c}&resourceVersionMatch=Exact"))},
		{Name: "core/list-all-namespaces", Area: a, Steps: labelled(withQuery(get("list", allVCIs), sel("labelSelector", projectLabel+"={p}")))},
		{Name: "core/list-projects-by-label", Area: a, Steps: []Step{setupProject(), withQuery(get("list", projects), sel("labelSelector", "kd={p}"))}},
	}
}

// Core semantics: update (PUT).
func updateCases() []Case {
	a := "core"
	up := func(name, patchJSON, query string, extra ...Step) Case {
		return Case{Name: name, Area: a, Steps: withVCI(append([]Step{withQuery(put("put", vci("{n}"), vciBody("{n}", patchJSON)), query)}, extra...)...)}
	}
	return []Case{
		up("core/update", `{"metadata":{"resourceVersion":"{rv:mk}"},"spec":{"displayName":"Changed"}}`, ""),
		up("core/update-stale", `{"metadata":{"resourceVersion":"1"},"spec":{"displayName":"Changed"}}`, ""),
		up("core/update-no-rv", `{"spec":{"displayName":"Changed"}}`, ""),
		up("core/update-metadata-only", `{"metadata":{"resourceVersion":"{rv:mk}","labels":{"x":"y"}}}`, ""),
		up("core/update-no-change", `{"metadata":{"resourceVersion":"{rv:mk}"}}`, ""),
		up("core/update-uid-mismatch", `{"metadata":{"resourceVersion":"{rv:mk}","uid":"11111111-2222-3333-4444-555555555555"}}`, ""),
		up("core/update-uid-mismatch-no-rv", `{"metadata":{"uid":"11111111-2222-3333-4444-555555555555"}}`, ""),
		up("core/update-status-ignored", `{"metadata":{"resourceVersion":"{rv:mk}"},"status":{"phase":"Ready"}}`, ""),
		up("core/update-generation-ignored", `{"metadata":{"resourceVersion":"{rv:mk}","generation":9},"spec":{"displayName":"Changed"}}`, ""),
		up("core/update-dry-run", `{"metadata":{"resourceVersion":"{rv:mk}"},"spec":{"displayName":"Dry"}}`, "dryRun=All", get("get", vci("{n}"))),
		up("core/update-remove-label", `{"metadata":{"resourceVersion":"{rv:mk}","labels":{"`+projectLabel+`":"{p}","gone":null}},"spec":{"displayName":"Changed"}}`, ""),
		up("core/update-invalid", `{"metadata":{"resourceVersion":"{rv:mk}"},"spec":{"clusterRef":{"cluster":"NOT VALID"}}}`, ""),
		up("core/update-field-manager", `{"metadata":{"resourceVersion":"{rv:mk}"},"spec":{"description":"d"}}`, "fieldManager=editor"),
		{Name: "core/update-name-mismatch", Area: a, Steps: withVCI(put("put", vci("{n}"), vciBody("other", `{"metadata":{"resourceVersion":"{rv:mk}"}}`)))},
		{Name: "core/update-wrong-namespace-body", Area: a, Steps: withVCI(put("put", vci("{n}"), vciBody("{n}", `{"metadata":{"resourceVersion":"{rv:mk}","namespace":"elsewhere"}}`)))},
		{Name: "core/update-annotations", Area: a, Steps: withVCI(put("put", vci("{n}"), vciBody("{n}", `{"metadata":{"resourceVersion":"{rv:mk}","annotations":{"note":"hi"}}}`)))},
		{Name: "core/update-project", Area: a, Steps: []Step{setupProject(),
			put("put", project("{p}"), projectBody("{p}", `{"metadata":{"resourceVersion":"{rv:setup-project}"},"spec":{"displayName":"Renamed"}}`))}},
	}
}

// Core semantics: patch.
func patchCases() []Case {
	a := "core"
	p := func(name, ct, body, query string, extra ...Step) Case {
		return Case{Name: name, Area: a, Steps: withVCI(append([]Step{withQuery(patch("patch", vci("{n}"), ct, body), query)}, extra...)...)}
	}
	return []Case{
		p("core/patch-merge", ctMerge, `{"spec":{"displayName":"Changed"}}`, ""),
		p("core/patch-json", ctJSONP, `[{"op":"replace","path":"/spec/displayName","value":"Changed"}]`, ""),
		p("core/patch-json-test-fails", ctJSONP, `[{"op":"test","path":"/spec/displayName","value":"nope"}]`, ""),
		p("core/patch-json-bad-path", ctJSONP, `[{"op":"remove","path":"/spec/nothere"}]`, ""),
		p("core/patch-json-not-array", ctJSONP, `{"op":"remove"}`, ""),
		p("core/patch-invalid-json", ctMerge, `{"spec":`, ""),
		p("core/patch-stale-rv", ctMerge, `{"metadata":{"resourceVersion":"1"},"spec":{"displayName":"x"}}`, ""),
		p("core/patch-current-rv", ctMerge, `{"metadata":{"resourceVersion":"{rv:mk}"},"spec":{"displayName":"x"}}`, ""),
		p("core/patch-remove-label", ctMerge, `{"metadata":{"labels":{"`+projectLabel+`":null}}}`, ""),
		p("core/patch-unsupported-type", "text/plain", `{"spec":{"displayName":"x"}}`, ""),
		p("core/patch-invalid-result", ctMerge, `{"spec":{"clusterRef":{"cluster":"NOT VALID"}}}`, ""),
		p("core/patch-dry-run", ctMerge, `{"spec":{"displayName":"Dry"}}`, "dryRun=All", get("get", vci("{n}"))),
		p("core/patch-name-change", ctMerge, `{"metadata":{"name":"renamed"}}`, ""),
		p("core/patch-uid-change", ctMerge, `{"metadata":{"uid":"11111111-2222-3333-4444-555555555555"}}`, ""),
		p("core/patch-noop", ctMerge, `{}`, ""),
		p("core/patch-empty-body", ctMerge, ``, ""),
		p("core/patch-generation-ignored", ctMerge, `{"metadata":{"generation":42}}`, ""),
		{Name: "core/patch-missing", Area: a, Steps: []Step{setupProject(), patch("patch", vci("nothere"), ctMerge, `{"spec":{"displayName":"x"}}`)}},
	}
}

// Core semantics: delete and finalizers.
func deleteCases() []Case {
	a := "core"
	fin := func(steps ...Step) []Step {
		return append([]Step{setupProject(), setupVCI("mk", "{n}", `{"metadata":{"finalizers":["example.com/f"]}}`)}, steps...)
	}
	return []Case{
		{Name: "core/delete", Area: a, Steps: withVCI(del("delete", vci("{n}"), ""), get("get", vci("{n}")))},
		{Name: "core/delete-missing", Area: a, Steps: []Step{setupProject(), del("delete", vci("nothere"), "")}},
		{Name: "core/delete-finalizer-marks", Area: a, Steps: fin(del("delete", vci("{n}"), ""), get("get", vci("{n}")))},
		{Name: "core/delete-finalizer-then-remove", Area: a, Steps: fin(setup(del("delete", vci("{n}"), "")),
			patch("patch", vci("{n}"), ctMerge, `{"metadata":{"finalizers":null}}`), get("get", vci("{n}")))},
		{Name: "core/add-finalizer-while-deleting", Area: a, Steps: fin(setup(del("delete", vci("{n}"), "")),
			patch("patch", vci("{n}"), ctJSONP, `[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/late"}]`))},
		{Name: "core/update-while-deleting", Area: a, Steps: fin(setup(del("delete", vci("{n}"), "")),
			patch("patch", vci("{n}"), ctMerge, `{"spec":{"displayName":"Late"}}`))},
		{Name: "core/delete-precondition-uid", Area: a, Steps: withVCI(Step{Label: "delete", Method: "DELETE", Path: vci("{n}"),
			Body: `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"11111111-2222-3333-4444-555555555555"}}`})},
		{Name: "core/delete-precondition-rv", Area: a, Steps: withVCI(Step{Label: "delete", Method: "DELETE", Path: vci("{n}"),
			Body: `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"1"}}`})},
		{Name: "core/delete-precondition-ok", Area: a, Steps: withVCI(Step{Label: "delete", Method: "DELETE", Path: vci("{n}"),
			Body: `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"{uid:mk}","resourceVersion":"{rv:mk}"}}`})},
		{Name: "core/delete-dry-run", Area: a, Steps: withVCI(del("delete", vci("{n}"), "dryRun=All"), get("get", vci("{n}")))},
		{Name: "core/delete-grace-period", Area: a, Steps: withVCI(del("delete", vci("{n}"), "gracePeriodSeconds=30"), get("get", vci("{n}")))},
		{Name: "core/delete-twice-with-finalizer", Area: a, Steps: fin(setup(del("delete", vci("{n}"), "")), del("delete2", vci("{n}"), ""))},
		{Name: "core/deletecollection", Area: a, Steps: []Step{setupProject(),
			setupVCI("a", "{n}-a", `{"metadata":{"labels":{"drop":"yes"}}}`), setupVCI("b", "{n}-b", ""),
			del("delete", vcis, sel("labelSelector", "drop=yes")), get("list", vcis)}},
		{Name: "core/delete-project-marks", Area: a, Steps: []Step{setupProject(), del("delete", project("{p}"), "")}},
	}
}

// Core semantics: watch.
func watchCases() []Case {
	a := "core"
	return []Case{
		{Name: "core/watch-sequence", Area: a, Steps: []Step{setupProject(), setup(get("list", vcis)),
			watch("watch", vcis, "resourceVersion={rv:list}", 3,
				setupVCI("mk", "{n}", ""),
				patch("patch", vci("{n}"), ctMerge, `{"spec":{"displayName":"Changed"}}`),
				del("delete", vci("{n}"), ""))}},
		{Name: "core/watch-label-selector", Area: a, Steps: []Step{setupProject(), setup(get("list", vcis)),
			watch("watch", vcis, "resourceVersion={rv:list}&"+sel("labelSelector", "w=1"), 2,
				setupVCI("mk", "{n}", `{"metadata":{"labels":{"w":"1"}}}`),
				setupVCI("mk2", "{n}-b", ""),
				patch("patch", vci("{n}"), ctMerge, `{"metadata":{"labels":{"w":"2"}}}`))}},
		{Name: "core/watch-rv0", Area: a, Steps: withVCI(after(time.Second, watch("watch", vcis, "resourceVersion=0", 1)))},
		{Name: "core/watch-no-rv", Area: a, Steps: withVCI(watch("watch", vcis, "", 1))},
		{Name: "core/watch-field-selector", Area: a, Steps: []Step{setupProject(), setup(get("list", vcis)),
			watch("watch", vcis, "resourceVersion={rv:list}&fieldSelector="+urlq("metadata.name={n}"), 1,
				setupVCI("mk2", "{n}-b", ""), setupVCI("mk", "{n}", ""))}},
		{Name: "core/watch-status-patch", Area: a, Steps: withVCI(watch("watch", vcis, "resourceVersion={rv:mk}", 1,
			patch("patch", vci("{n}")+"/status", ctMerge, `{"status":{"phase":"Ready"}}`)))},
		{Name: "core/watch-finalizer-delete", Area: a, Steps: []Step{setupProject(),
			setupVCI("mk", "{n}", `{"metadata":{"finalizers":["example.com/f"]}}`),
			watch("watch", vcis, "resourceVersion={rv:mk}", 3,
				del("delete", vci("{n}"), ""),
				patch("patch", vci("{n}"), ctMerge, `{"metadata":{"finalizers":null}}`))}},
		{Name: "core/watch-dry-run-silent", Area: a, Steps: withVCI(watch("watch", vcis, "resourceVersion={rv:mk}", 1,
			withQuery(patch("patch", vci("{n}"), ctMerge, `{"spec":{"displayName":"Dry"}}`), "dryRun=All"),
			patch("patch2", vci("{n}"), ctMerge, `{"spec":{"displayName":"Real"}}`)))},
		{Name: "core/watch-timeout", Area: a, Steps: withVCI(Step{Label: "watch", Path: vcis, Query: "watch=1&resourceVersion={rv:mk}&timeoutSeconds=1",
			Watch: &WatchSpec{Events: 0, Within: 3 * time.Second}})},
		{Name: "core/watch-bad-rv", Area: a, Steps: withVCI(watch("watch", vcis, "resourceVersion=abc", 1))},
		{Name: "core/watch-single-object", Area: a, Steps: withVCI(watch("watch", vcis, "resourceVersion={rv:mk}&"+"fieldSelector="+urlq("metadata.name={n}"), 1,
			patch("patch", vci("{n}"), ctMerge, `{"spec":{"displayName":"Changed"}}`)))},
		{Name: "core/watch-all-namespaces", Area: a, Steps: withVCI(watch("watch", allVCIs, "resourceVersion={rv:mk}&"+sel("labelSelector", projectLabel+"={p}"), 1,
			patch("patch", vci("{n}"), ctMerge, `{"spec":{"displayName":"Changed"}}`)))},
	}
}

// jsonView is a stated answer: a code and a JSON body (already reduced).
func jsonView(code int, body string) map[string]any {
	return map[string]any{"code": code, "contentType": "application/json", "body": jsonBody([]byte(body))}
}
