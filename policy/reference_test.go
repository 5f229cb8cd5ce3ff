package policy

import (
	"strings"

	"github.com/management-service/mgmt/resource"
)

// This file holds a second, deliberately naive implementation of the semantics in
// doc.go, written straight on the API types without compiling anything. The truth
// tables and the fuzzer compare the engine with it: two readings of the same text
// that must agree on every request.

func refAllows(scope *resource.AccessKeyScope, req Request) bool {
	if req.Validate() != nil {
		return false
	}
	if scope == nil {
		return true
	}
	if len(Validate(scope, resource.Path{})) > 0 {
		return false
	}
	return refAllowsValid(scope, req)
}

// refAllowsValid is refAllows for a non-nil scope known to be valid and a well-formed
// request.
func refAllowsValid(scope *resource.AccessKeyScope, req Request) bool {
	for _, p := range scope.Projects {
		if refProject(p.Project, req) {
			return true
		}
	}
	for _, s := range scope.Spaces {
		if refInstance(s.Project, s.Space, resource.RequestTargetProjectSpace, req.Space, resourceSpaceInstances, req) {
			return true
		}
	}
	for _, v := range scope.VirtualClusters {
		if refInstance(v.Project, v.VirtualCluster, resource.RequestTargetProjectVirtualCluster, req.VirtualCluster,
			resourceVirtualClusterInstances, req) {
			return true
		}
	}
	for i := range scope.Rules {
		if refRule(&scope.Rules[i], req) {
			return true
		}
	}
	return scope.AllowServiceCli && refServiceCli(scope, req)
}

func isProjectTarget(t resource.RequestTarget) bool {
	return t == resource.RequestTargetManagement || t == resource.RequestTargetProjectSpace ||
		t == resource.RequestTargetProjectVirtualCluster
}

func refProject(p string, req Request) bool {
	if p != "*" {
		return isProjectTarget(req.Target) && req.Project == p
	}
	if isProjectTarget(req.Target) && req.Project != "" {
		return true
	}
	collection := req.Target == resource.RequestTargetManagement && req.APIGroup == resource.Group &&
		req.Subresource == "" && req.Name == "" && req.Namespace == ""
	return collection && (req.Resource == "projects" || req.Resource == "virtualclusterinstances" ||
		req.Resource == "spaceinstances")
}

func refInstance(project, name string, target resource.RequestTarget, reqName, res string, req Request) bool {
	if req.Project != project {
		return false
	}
	if req.Target == target {
		return name == "*" || reqName == name
	}
	return req.Target == resource.RequestTargetManagement && req.APIGroup == resource.Group &&
		req.Resource == res && (name == "*" || req.Name == name)
}

func refRule(r *resource.AccessKeyScopeRule, req Request) bool {
	if len(r.RequestTargets) > 0 {
		found := false
		for _, t := range r.RequestTargets {
			if t == req.Target {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	if len(r.Verbs) > 0 && !refIn(r.Verbs, req.Verb) {
		return false
	}
	if r.Cluster != "" && (req.Target != resource.RequestTargetCluster || req.Cluster != r.Cluster) {
		return false
	}
	if len(r.VirtualClusters) > 0 {
		if req.Target != resource.RequestTargetVirtualCluster && req.Target != resource.RequestTargetProjectVirtualCluster {
			return false
		}
		found := false
		for _, v := range r.VirtualClusters {
			if (v.Name == "" || v.Name == req.VirtualCluster) && (v.Namespace == "" || v.Namespace == req.VirtualClusterNamespace) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	if len(r.Resources) > 0 || len(r.Namespaces) > 0 {
		if req.Resource == "" {
			return false
		}
		if len(r.Namespaces) > 0 && !refIn(r.Namespaces, req.Namespace) {
			return false
		}
		if len(r.Resources) > 0 {
			found := false
			for _, gr := range r.Resources {
				if gr.Group != req.APIGroup {
					continue
				}
				if len(gr.Resources) == 0 {
					found = true
				}
				for _, s := range gr.Resources {
					if refResource(s, req) {
						found = true
					}
				}
			}
			if !found {
				return false
			}
		}
		return len(r.ResourceNames) == 0 || refIn(r.ResourceNames, req.Name)
	}
	if len(r.NonResourceURLs) > 0 {
		if req.Resource != "" {
			return false
		}
		for _, u := range r.NonResourceURLs {
			if refURL(u, req.Path) {
				return true
			}
		}
		return false
	}
	return true
}

func refResource(s string, req Request) bool {
	combined := req.Resource
	if req.Subresource != "" {
		combined += "/" + req.Subresource
	}
	switch {
	case s == "*":
		return true
	case s == combined:
		return true
	case strings.HasPrefix(s, "*/"):
		return req.Subresource != "" && s[2:] == req.Subresource
	case strings.HasSuffix(s, "/*"):
		return req.Subresource != "" && s[:len(s)-2] == req.Resource
	}
	return false
}

func refURL(u, p string) bool {
	switch {
	case u == "*":
		return true
	case strings.HasSuffix(u, "/*"):
		return strings.HasPrefix(p, u[:len(u)-1])
	}
	return u == p
}

func refServiceCli(scope *resource.AccessKeyScope, req Request) bool {
	if req.Target != resource.RequestTargetManagement {
		return false
	}
	if req.Resource == "" {
		if req.Verb != "get" {
			return false
		}
		switch req.Path {
		case "/version", "/api", "/apis":
			return true
		}
		steps := strings.Split(req.Path, "/")[1:]
		for _, s := range steps {
			if s == "" {
				return false
			}
		}
		return (steps[0] == "api" && len(steps) == 2) || (steps[0] == "apis" && (len(steps) == 2 || len(steps) == 3))
	}
	if req.APIGroup != resource.Group || req.Subresource != "" {
		return false
	}
	if req.Verb == "create" && req.Resource == "directclusterendpointtokens" && req.Namespace == "" {
		return true
	}
	if !refIn([]string{"get", "list", "watch"}, req.Verb) || (req.Resource != "projects" && req.Resource != "virtualclusterinstances") {
		return false
	}
	if req.Project == "" {
		return false
	}
	for _, p := range scope.Projects {
		if p.Project == req.Project {
			return true
		}
	}
	for _, s := range scope.Spaces {
		if s.Project == req.Project {
			return true
		}
	}
	for _, v := range scope.VirtualClusters {
		if v.Project == req.Project {
			return true
		}
	}
	return false
}

func refIn(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}
