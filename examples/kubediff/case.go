package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Case is one request sequence sent to both servers.
type Case struct {
	// Name is "<area>/<what>", e.g. "status/merge-patch"; -case selects by it.
	Name string
	// Area is the numbered item of issue 21 the case covers ("1" ... "9"), or a name
	// ("discovery", "review", "smp", "apply", "core").
	Area string
	// Slow cases run only with -slow.
	Slow bool
	// Steps are sent in order.
	Steps []Step
}

// Step is one request. Its Path, Query, Body and Header values may hold
// placeholders: {p} (the case's project name), {ns} (that project's namespace),
// {n} (the case's object name), {rv:LABEL} and {uid:LABEL} (the resourceVersion
// and uid in the answer to the step labelled LABEL, on the same server), and
// {continue:LABEL} (its list's continue token).
type Step struct {
	// Label names the step in the report; unique within a case.
	Label string
	// Method is the HTTP method (GET if empty).
	Method string
	// Path is from the API root, e.g. /apis/management.service/v1/projects/{p}.
	Path string
	// Query is the raw query, without '?'.
	Query string
	// Header sets request headers (an empty value removes one).
	Header map[string]string
	// Body is sent as is.
	Body string
	// Setup steps prepare a case: their answers are not compared, but one of 400 or
	// above fails the case on that server.
	Setup bool
	// Wait pauses before the request.
	Wait time.Duration
	// Watch makes the request a watch: Then runs while it is open, and the events
	// received are the answer.
	Watch *WatchSpec
	// Only compares only these top-level parts of the view ("code", "body",
	// "warnings", "contentType", "events"); empty compares everything.
	Only []string
	// Pick, if set, reduces the decoded body before normalising (e.g. one resource
	// out of a discovery document).
	Pick func(any) any
	// KubeAnswer, if set, stands for the reference server's answer, which is then
	// not asked: for APIs a whole kube-apiserver serves and apiextensions-apiserver
	// does not (core discovery, the review APIs). It is written as the view of
	// kube-apiserver's documented answer, reduced by Pick as the other side is.
	KubeAnswer map[string]any
}

// WatchSpec is what a watch step waits for.
type WatchSpec struct {
	// Then are the requests made while the watch is open (their answers are
	// compared too, labelled after the watch step).
	Then []Step
	// Events stops collecting once this many have arrived.
	Events int
	// Within bounds the wait for them (3 s if zero).
	Within time.Duration
}

// Names are the object names of one case.
type Names struct {
	Project, Namespace, Object string
}

// namesFor gives case i its names: a project kd-<i>, its namespace p-kd-<i>, and
// objects o-<i>.
func namesFor(i int) Names {
	return Names{Project: fmt.Sprintf("kd-%d", i), Namespace: fmt.Sprintf("p-kd-%d", i), Object: fmt.Sprintf("o-%d", i)}
}

// StepResult is one compared answer.
type StepResult struct {
	Label string         `json:"label"`
	View  map[string]any `json:"view"`
	// Stated is true for a KubeAnswer: written down, not received.
	Stated bool `json:"stated,omitempty"`
}

// captured holds what later steps refer to, per step label.
type captured struct {
	rv, uid, cont map[string]string
}

var placeholder = regexp.MustCompile(`\{(rv|uid|continue):([A-Za-z0-9_.-]+)\}`)

func (c *captured) expand(s string, n Names) string {
	s = strings.NewReplacer("{p}", n.Project, "{ns}", n.Namespace, "{n}", n.Object).Replace(s)
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		sub := placeholder.FindStringSubmatch(m)
		switch sub[1] {
		case "rv":
			return c.rv[sub[2]]
		case "uid":
			return c.uid[sub[2]]
		default:
			return c.cont[sub[2]]
		}
	})
}

func (c *captured) record(label string, body []byte) {
	var m struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
			UID             string `json:"uid"`
			Continue        string `json:"continue"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &m) != nil {
		return
	}
	c.rv[label] = m.Metadata.ResourceVersion
	c.uid[label] = m.Metadata.UID
	c.cont[label] = m.Metadata.Continue
}

// RefusedError is a setup step one server refused: the case stops there on that
// server, and the refusal is the case's difference.
type RefusedError struct {
	Label string
	View  map[string]any
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("setup step %q refused: %s", e.Label, summary(e.View))
}

// Run sends a case's steps to one server and returns the normalised answers, and
// the views of its setup steps by label. An error is a *RefusedError, or a failure
// to talk to the server.
func (cs *Case) Run(ctx context.Context, t *Target, n Names, messages bool) ([]StepResult, map[string]map[string]any, error) {
	norm := NewNormalizer(messages)
	cap := &captured{rv: map[string]string{}, uid: map[string]string{}, cont: map[string]string{}}
	var out []StepResult
	setups := map[string]map[string]any{}
	err := runSteps(ctx, t, n, cs.Steps, norm, cap, &out, setups)
	return out, setups, err
}

func runSteps(ctx context.Context, t *Target, n Names, steps []Step, norm *Normalizer, cap *captured, out *[]StepResult, setups map[string]map[string]any) error {
	for _, s := range steps {
		if s.Wait > 0 {
			select {
			case <-time.After(s.Wait):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		method := s.Method
		if method == "" {
			method = "GET"
		}
		header := map[string]string{}
		for k, v := range s.Header {
			header[k] = cap.expand(v, n)
		}
		path, query, body := cap.expand(s.Path, n), cap.expand(s.Query, n), cap.expand(s.Body, n)
		var resp *Response
		if s.KubeAnswer != nil && t.Name == "kube" {
			*out = append(*out, StepResult{Label: s.Label, View: s.KubeAnswer, Stated: true})
			continue
		}
		if s.Watch != nil {
			w, r, err := t.StartWatch(ctx, path, query, header)
			if err != nil {
				return err
			}
			resp = r
			if w != nil {
				if err := runSteps(ctx, t, n, s.Watch.Then, norm, cap, out, setups); err != nil {
					w.Stop()
					return err
				}
				within := s.Watch.Within
				if within == 0 {
					within = 3 * time.Second
				}
				resp.Events = w.Collect(s.Watch.Events, within, 300*time.Millisecond)
				if resp.Events == nil {
					resp.Events = []Event{}
				}
				w.Stop()
			}
		} else {
			r, err := t.Do(ctx, method, path, query, header, body)
			if err != nil {
				return err
			}
			resp = r
			cap.record(s.Label, r.Body)
		}
		if s.Setup {
			// Setup answers are normalised all the same, so that the uids and
			// resourceVersions they hold are numbered alike on both servers.
			view := norm.View(resp)
			setups[s.Label] = view
			if resp.Code >= 400 {
				return &RefusedError{Label: s.Label, View: view}
			}
			continue
		}
		if s.Pick != nil && len(resp.Body) > 0 {
			if j := jsonBody(resp.Body); j != nil {
				if b, err := json.Marshal(s.Pick(j)); err == nil {
					resp = &Response{Code: resp.Code, Header: resp.Header, Body: b, Events: resp.Events}
				}
			}
		}
		view := norm.View(resp)
		if len(s.Only) > 0 {
			keep := map[string]any{}
			for _, k := range s.Only {
				if v, ok := view[k]; ok {
					keep[k] = v
				}
			}
			view = keep
		}
		*out = append(*out, StepResult{Label: s.Label, View: view})
	}
	return nil
}

// Compare diffs the two servers' answers to a case, step by step.
func Compare(kube, ours []StepResult) []Difference {
	var out []Difference
	for i := 0; i < len(kube) || i < len(ours); i++ {
		switch {
		case i >= len(kube):
			out = append(out, Difference{Path: ours[i].Label, Kube: Absent, Ours: render(ours[i].View)})
		case i >= len(ours):
			out = append(out, Difference{Path: kube[i].Label, Kube: render(kube[i].View), Ours: Absent})
		case render(kube[i].View["code"]) != render(ours[i].View["code"]):
			// Different codes: the bodies are different things (an object and a
			// Status); one difference says it all.
			k := summary(kube[i].View)
			if kube[i].Stated {
				k += " (stated: kube-apiserver's answer, not received)"
			}
			out = append(out, Difference{Path: kube[i].Label + ".code", Kube: k, Ours: summary(ours[i].View)})
		default:
			ds := Diff(kube[i].Label, kube[i].View, ours[i].View)
			if kube[i].Stated {
				for j := range ds {
					ds[j].Kube += " (stated: kube-apiserver's answer, not received)"
				}
			}
			out = append(out, ds...)
		}
	}
	return out
}

// summary describes an answer in one line: code, then the Status reason and causes
// or the object's kind, then the warnings.
func summary(v map[string]any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v", v["code"])
	if body, ok := v["body"].(map[string]any); ok {
		if body["kind"] == "Status" {
			fmt.Fprintf(&b, " %v", body["reason"])
			if d, ok := body["details"].(map[string]any); ok && d["causes"] != nil {
				fmt.Fprintf(&b, " causes=%s", render(d["causes"]))
			}
		} else if k, ok := body["kind"]; ok {
			fmt.Fprintf(&b, " %v", k)
		}
	} else if s, ok := v["body"].(string); ok {
		fmt.Fprintf(&b, " %s", s)
	}
	if ev, ok := v["events"].([]any); ok {
		fmt.Fprintf(&b, " %d events", len(ev))
	}
	if w, ok := v["warnings"]; ok {
		fmt.Fprintf(&b, " warnings=%s", render(w))
	}
	return b.String()
}
