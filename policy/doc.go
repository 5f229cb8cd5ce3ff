// Package policy decides what an access key or a DirectClusterEndpointToken may do: it
// evaluates a request against an [resource.AccessKeyScope] and says which entry of the
// scope allowed it, or why nothing did. It is pure: it imports only the resource
// package and the standard library, and it never looks at a raw URL.
//
// A scope only narrows. Whatever it allows, the subject must still have the right to do
// (the caller checks that separately); a scope never grants more.
//
// # Using it
//
// The caller authenticates the request, routes it, validates the names in it and then
// builds a [Request] from the parts it matched. [Evaluate] decides it against a scope;
// a server that evaluates many requests against one scope uses [Compile] once and
// [Compiled.Evaluate] per request, which makes no allocation. [Compiled.Explain] gives
// the full account of a denial for the message of a 403. [Validate] checks a scope when
// it is written (422 with field paths), and [Covers] tells a token issuer whether a
// requested scope stays within the caller's (403 naming what does not).
//
// # Requests
//
// A request has a verb, then either resource attributes (API group, resource,
// subresource, name, namespace) or a non-resource path, and a request target with the
// fields that target needs:
//
//	Target                 what it is                                    fields
//	Management             the management API itself                     Project, when the request is about a project
//	Cluster                a connected cluster                           Cluster
//	VirtualCluster         a legacy virtual cluster, by host namespace   VirtualCluster, VirtualClusterNamespace
//	ProjectSpace           a space of a project                          Project, Space
//	ProjectVirtualCluster  a virtual cluster of a project                Project, VirtualCluster (VirtualClusterNamespace optional)
//
// For Management requests the caller sets Project when the request concerns one
// project: a request for the Project object "a" (and its subresources, such as
// projects/a/migratevirtualclusterinstance) has Project "a"; a request in the project's
// namespace ("p-a" with the default prefix) has Project "a". The caller knows the
// configured namespace prefix; the engine does not guess it. [Request.Validate] checks
// that the fields fit together (for example that a namespace "p-b" does not come with
// Project "a"), that no field is "*", and that a non-resource path is canonical (no
// "//", ".", "..", trailing "/", '%', ';', '#' or NUL). A malformed request is denied by
// every scope, nil included, so that an encoding trick can never reach a prefix match.
//
// # Decisions
//
// A nil scope allows every well-formed request. A scope that is not nil allows a
// request when one of its entries does; projects, spaces, virtualClusters, rules and
// allowServiceCli are alternatives. A scope with no entries allows nothing (so does
// `scope: {}` in JSON: write no scope for "no restriction"). An invalid scope allows
// nothing. Matching is exact and case-sensitive; "*" is a wildcard only as a whole
// value and only where this documentation says so.
//
// # projects
//
// An entry {project: P} allows every request about project P:
//
//   - Management requests whose Project is P: the Project object P itself with any
//     verb and any subresource (get, update, delete, migratevirtualclusterinstance into
//     P, ...), and every request in P's namespace (its VirtualClusterInstances and
//     anything else there, collections included);
//   - ProjectSpace and ProjectVirtualCluster requests whose Project is P: every space
//     and every virtual cluster of P.
//
// It allows nothing else: not the list of all projects, not other projects, not
// Cluster or VirtualCluster requests, no non-resource path. The entry {project: "*"}
// allows every request about any project (every request whose Project is set), and in
// addition the requests about all projects at once: any verb on the projects
// collection (list, watch, create, deletecollection of projects; no name, no
// namespace) and on the virtualclusterinstances and spaceinstances collections across
// all namespaces.
//
// # spaces and virtualClusters
//
// An entry {project: P, virtualCluster: V} allows:
//
//   - ProjectVirtualCluster requests with Project P and VirtualCluster V: any request
//     to that virtual cluster;
//   - Management requests on the VirtualClusterInstance V in P's namespace (Project P,
//     resource virtualclusterinstances of the management group, Name V): any verb, and
//     any of its subresources.
//
// With virtualCluster "*" it allows the same for every virtual cluster of P, and, on
// the management side, any request on the virtualclusterinstances of P's namespace,
// collections included (list, watch, create). A named entry never allows a request
// without a name (list, create), since in a Kubernetes-style request the name of a
// create is not known to authorization. It allows nothing about the project itself.
//
// An entry {project: P, space: S} is the same for ProjectSpace requests with Space S,
// and for the instance objects of the resource "spaceinstances" of the management
// group (a kind this library does not define; a host that registers it gets the same
// rules as for virtual cluster instances). The project of a spaces or virtualClusters
// entry must be one project: "*" there is invalid.
//
// # allowServiceCli
//
// allowServiceCli: true allows exactly these Management requests, all read-only except
// the last:
//
//   - get of the non-resource paths /version, /api, /api/<version>, /apis,
//     /apis/<group> and /apis/<group>/<version> (discovery), nothing below them;
//   - get, list and watch of projects (the main resource, no subresource) and of
//     virtualclusterinstances (no subresource) whose Project is a project the scope
//     names in projects, spaces or virtualClusters. A list or watch of projects is
//     about one project only when it carries that name (a metadata.name field
//     selector, which the caller puts in Name); the unrestricted list of projects is
//     allowed only by a projects entry "*";
//   - create of directclusterendpointtokens (cluster-scoped). The request body is not
//     the engine's to see: the token issuer must check the requested scope with
//     Covers(caller's scope, requested scope), which keeps the token within the same
//     scope.
//
// # rules (deprecated)
//
// A rule allows a request when every field that is set matches; an empty list means
// "every" where the spec says so:
//
//   - verbs: the request's verb is in the list; empty means every verb ("*" is
//     invalid: it is not a wildcard here).
//   - resources and namespaces: when either is set the rule matches resource requests
//     only. namespaces: the request's namespace is in the list; "" stands for
//     cluster-scoped resources and for requests across all namespaces (which also
//     have no namespace); empty means every namespace. resources: one entry must have
//     the request's API group ("" is the core group) and either an empty resources
//     list (every resource and subresource of the group) or a resource string that
//     matches: "name" matches the resource name without a subresource (so "pods" does
//     not match "pods/log"); "name/sub" matches that subresource; "*" matches every
//     resource and subresource of the group; "name/*" matches every subresource of
//     name but not name itself (list both "name" and "name/*" for both; this is
//     stricter than Kubernetes' audit policy, where "pods/*" also matches "pods");
//     "*/sub" matches the subresource sub of every resource.
//   - resourceNames: the request's name is in the list; empty means every name, and a
//     request without a name (a list or a create) never matches a non-empty list. It
//     requires resources.
//   - nonResourceURLs: when set (and resources and namespaces are not) the rule matches
//     non-resource requests only, whose path is in the list: "*" (or "/*") matches every
//     path, "/a/b" matches exactly that path, and "/a/*" matches every path below
//     "/a/" but not "/a" itself. "*" is allowed only as the whole last step: "/a*"
//     and "/*/b" are invalid, so "/healthz*" can never match "/healthzfoo".
//   - a rule with none of resources, namespaces and nonResourceURLs matches resource
//     and non-resource requests alike.
//   - requestTargets: the request's target is in the list; empty means every target.
//   - cluster: when set, the rule matches only Cluster requests to that cluster.
//   - virtualClusters: when set, the rule matches only VirtualCluster and
//     ProjectVirtualCluster requests whose VirtualCluster and VirtualClusterNamespace
//     match one entry, an empty name or namespace matching every value. The spec says
//     this field "applies only to virtual cluster requests"; this package reads it the
//     way the spec reads cluster, so that a rule restricted to some virtual clusters
//     never opens the management API or other clusters.
//
// # Covers
//
// [Covers] (outer, inner) is true when outer allows every request inner allows; it is
// checked piece by piece and an enumeration never covers a wildcard. A nil outer
// covers everything; a nil inner is covered only by a nil outer or by an outer that
// allows every request. See [Covers] for the details.
package policy
