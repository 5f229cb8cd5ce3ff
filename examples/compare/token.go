package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
	"github.com/management-service/mgmt/store/memdb"
	"github.com/management-service/mgmt/token"
)

// Tokens: verification runs here, through the public API (token.Verifier.Verify,
// offline) against go-jose's own parse, signature check and claims validation of
// the same token into structs of the same claims. Signing has no public entry point
// without the store write of the record (Issuer.Issue), so the sign ratio comes
// from the token package's own paired benchmark (BenchmarkPaired, which alternates
// ours and go-jose in one loop), run as a subprocess in the root module.

const tokenIssuer = "https://mgmt.example.com/kubernetes/management"

// Columns of the token rows.
const (
	colTokenOurs   = "ours"
	colGoJose      = "go-jose"
	rowVerify      = "token verify, EdDSA, in process"
	rowTokenPaired = "token sign and verify, EdDSA, paired"
)

// tenEntryScope is a ten-entry scope: 3 projects, 3 spaces, 4 virtual clusters, and
// allowServiceCli.
func tenEntryScope() *resource.AccessKeyScope {
	s := &resource.AccessKeyScope{AllowServiceCli: true}
	for i := 0; i < 10; i++ {
		proj := fmt.Sprintf("team-%02d", i)
		switch {
		case i < 3:
			s.Projects = append(s.Projects, resource.AccessKeyScopeProject{Project: proj})
		case i < 6:
			s.Spaces = append(s.Spaces, resource.AccessKeyScopeSpace{Project: proj, Space: fmt.Sprintf("space-%02d", i)})
		default:
			s.VirtualClusters = append(s.VirtualClusters, resource.AccessKeyScopeVirtualCluster{Project: proj, VirtualCluster: fmt.Sprintf("vcluster-%02d", i)})
		}
	}
	return s
}

// joseManagement and joseScope are the private claim as a go-jose user would
// declare it.
type joseManagement struct {
	UID   string     `json:"uid"`
	Name  string     `json:"name"`
	Kind  string     `json:"kind"`
	Gen   int64      `json:"gen"`
	Rec   string     `json:"rec"`
	Scope *joseScope `json:"scope"`
}

type joseScope struct {
	AllowServiceCli bool                          `json:"allowServiceCli,omitempty"`
	Projects        []string                      `json:"projects,omitempty"`
	Spaces          []string                      `json:"spaces,omitempty"`
	VirtualClusters []string                      `json:"virtualClusters,omitempty"`
	Rules           []resource.AccessKeyScopeRule `json:"rules,omitempty"`
}

// tokenEnv issues one token with a ten-entry scope through the public API.
type tokenEnv struct {
	tok      string
	verifier *token.Verifier
	public   any
	close    func()
}

func newTokenEnv(ctx context.Context) (*tokenEnv, error) {
	be := memdb.New(memdb.Options{})
	s, err := store.New(be, store.Options{})
	if err != nil {
		return nil, err
	}
	e := &tokenEnv{close: func() { _ = s.Close(); _ = be.Close() }}
	keys, err := token.NewKeySet(token.KeySetOptions{Algorithm: token.EdDSA}, nil)
	if err != nil {
		e.close()
		return nil, err
	}
	iss, err := token.NewIssuer(s, keys, token.IssuerOptions{Issuer: tokenIssuer})
	if err != nil {
		e.close()
		return nil, err
	}
	caller := token.Caller{Kind: "User", Name: "alice", UID: "6f1d2c4e-8a2b-4c3d-9e0f-1a2b3c4d5e6f", TokenGeneration: 1,
		Scope: tenEntryScope()}
	out, err := iss.Issue(ctx, &resource.DirectClusterEndpointToken{}, caller, token.IssueOptions{})
	if err != nil {
		e.close()
		return nil, fmt.Errorf("issue: %w", err)
	}
	e.tok = out.Status.Token
	if e.verifier, err = token.NewVerifier(keys, token.VerifierOptions{Issuer: tokenIssuer}); err != nil {
		e.close()
		return nil, err
	}
	e.public = keys.SigningKey().Public()
	return e, nil
}

// tokenVerifyFuncs returns ours and go-jose's verification of the same token.
func tokenVerifyFuncs(ctx context.Context, e *tokenEnv) (func() error, func() error, error) {
	c, err := e.verifier.Verify(ctx, e.tok)
	if err != nil {
		return nil, nil, err
	}
	if n := len(c.Management.Scope.Projects) + len(c.Management.Scope.Spaces) + len(c.Management.Scope.VirtualClusters); n != 10 {
		return nil, nil, fmt.Errorf("token scope has %d entries, want 10", n)
	}
	algs := []jose.SignatureAlgorithm{jose.EdDSA}
	exp := jwt.Expected{Issuer: tokenIssuer, Time: time.Now()}
	joseVerify := func() error {
		tok, err := jwt.ParseSigned(e.tok, algs)
		if err != nil {
			return err
		}
		var std jwt.Claims
		var priv struct {
			MS *joseManagement `json:"management.service"`
		}
		if err := tok.Claims(e.public, &std, &priv); err != nil {
			return err
		}
		if priv.MS == nil || priv.MS.Scope == nil || len(priv.MS.Scope.Projects) != 3 {
			return errors.New("go-jose: claims not decoded")
		}
		return std.ValidateWithLeeway(exp, time.Minute)
	}
	if err := joseVerify(); err != nil {
		return nil, nil, err
	}
	ours := func() error {
		_, err := e.verifier.Verify(ctx, e.tok)
		return err
	}
	return ours, joseVerify, nil
}

// pairedResult is the median of the token package's paired benchmark for one
// operation: ours and go-jose in µs/op, and their ratio.
type pairedResult struct {
	ours, jose, ratio float64
	samples           int
}

// findRoot returns the root module's directory: cfg.root, or the parents of the
// working directory, whichever holds the module github.com/management-service/mgmt.
func findRoot(hint string) (string, error) {
	var cands []string
	if hint != "" {
		cands = append(cands, hint)
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			cands = append(cands, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, d := range cands {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && regexp.MustCompile(`(?m)^module github\.com/management-service/mgmt\s*$`).Match(b) {
			return d, nil
		}
	}
	return "", errors.New("the root module github.com/management-service/mgmt was not found (set -root)")
}

// runPaired runs the token package's BenchmarkPaired for EdDSA in the root module.
func runPaired(cfg *config) (map[string]pairedResult, string, error) {
	root, err := findRoot(cfg.root)
	if err != nil {
		return nil, "", err
	}
	args := []string{"test", "-run", "^$", "-bench", "^BenchmarkPaired$/^EdDSA$/",
		"-benchtime", cfg.tokenBenchtime, "-count", strconv.Itoa(cfg.count), "./token/"}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	res, err := parsePaired(out.String())
	return res, "go " + strings.Join(args, " "), err
}

// parsePaired reads the lines of BenchmarkPaired/EdDSA/{sign,verify} and returns the
// medians of their metrics.
func parsePaired(out string) (map[string]pairedResult, error) {
	type acc struct{ ours, jose, ratio []float64 }
	accs := map[string]*acc{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkPaired/EdDSA/") {
			continue
		}
		op := strings.TrimPrefix(f[0], "BenchmarkPaired/EdDSA/")
		if i := strings.LastIndexByte(op, '-'); i > 0 {
			op = op[:i]
		}
		a := accs[op]
		if a == nil {
			a = &acc{}
			accs[op] = a
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ours-µs/op":
				a.ours = append(a.ours, v)
			case "go-jose-µs/op":
				a.jose = append(a.jose, v)
			case "ratio":
				a.ratio = append(a.ratio, v)
			}
		}
	}
	res := map[string]pairedResult{}
	for _, op := range []string{"sign", "verify"} {
		a := accs[op]
		if a == nil || len(a.ratio) == 0 {
			return nil, fmt.Errorf("no BenchmarkPaired/EdDSA/%s result in the output:\n%s", op, out)
		}
		res[op] = pairedResult{ours: median(a.ours), jose: median(a.jose), ratio: median(a.ratio), samples: len(a.ratio)}
	}
	return res, nil
}
