package token

import (
	"context"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// Benchmarks: ours side by side with go-jose's own JWT builder and parser, for the same
// key, the same header (kid, typ) and the same claims (a ten-entry scope), in one run:
//
//	go test -run '^$' -bench . -benchmem -count 5 ./token/
//
// "ours" signs with Issuer's signing path (claims encoding + go-jose signer) and
// verifies with Verifier.Verify (offline: header checks, go-jose parse and signature,
// claims checks). "go-jose" is jwt.Signed(...).Claims(std).Claims(private).Serialize()
// and jwt.ParseSigned + Claims(key, &std, &private) + ValidateWithLeeway. Issue
// includes the store write of the record (memdb) and is shown for scale.
// BenchmarkPaired alternates ours and go-jose inside one loop and reports the ratio;
// on a shared machine it is the figure to read.

type benchSetup struct {
	e      *env
	k      *Key
	claims *Claims
	tok    string
	signer jose.Signer
	std    jwt.Claims
	priv   struct {
		MS *outManagement `json:"management.service"`
	}
	now time.Time
}

func newBenchSetup(b *testing.B, alg Algorithm) *benchSetup {
	e := newEnv(b, &envOptions{keys: KeySetOptions{Algorithm: alg}})
	c := alice()
	c.Scope = tenEntryScopes()["mixed, with allowServiceCli"]
	out, err := e.issuer.Issue(context.Background(), dcet(0, nil), c, IssueOptions{})
	require.NoError(b, err)
	cl, err := e.offline.Verify(context.Background(), out.Status.Token)
	require.NoError(b, err)
	k := e.keys.SigningKey()
	s := &benchSetup{e: e, k: k, claims: cl, tok: out.Status.Token, now: e.f.Clock.Now()}
	s.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: jose.JSONWebKey{Key: k.private, KeyID: k.id}},
		(&jose.SignerOptions{}).WithType(TokenType))
	require.NoError(b, err)
	s.std = jwt.Claims{Issuer: cl.Issuer, Subject: cl.Subject, ID: cl.ID,
		IssuedAt: jwt.NewNumericDate(cl.IssuedAt), NotBefore: jwt.NewNumericDate(cl.NotBefore), Expiry: jwt.NewNumericDate(cl.Expiry)}
	m := cl.Management
	s.priv.MS = &outManagement{UID: m.UID, Name: m.Name, Kind: m.Kind, Gen: m.Generation, Rec: m.Record, Scope: encodeScope(m.Scope)}
	return s
}

func BenchmarkSign(b *testing.B) {
	for _, alg := range []Algorithm{EdDSA, ES256} {
		s := newBenchSetup(b, alg)
		b.Run(string(alg)+"/ours", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sign(s.k, s.claims); err != nil {
					require.NoError(b, err) // only on failure: b.Helper is not free in the timed loop
				}
			}
		})
		b.Run(string(alg)+"/go-jose", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := jwt.Signed(s.signer).Claims(s.std).Claims(s.priv).Serialize(); err != nil {
					require.NoError(b, err)
				}
			}
		})
	}
}

func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	for _, alg := range []Algorithm{EdDSA, ES256} {
		s := newBenchSetup(b, alg)
		b.Run(string(alg)+"/ours", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.e.offline.Verify(ctx, s.tok); err != nil {
					require.NoError(b, err)
				}
			}
		})
		b.Run(string(alg)+"/go-jose", func(b *testing.B) {
			b.ReportAllocs()
			algs := []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)}
			exp := jwt.Expected{Issuer: testIssuer, Time: s.now}
			for b.Loop() {
				tok, err := jwt.ParseSigned(s.tok, algs)
				if err != nil {
					require.NoError(b, err)
				}
				var std jwt.Claims
				var priv struct {
					MS *inManagement `json:"management.service"`
				}
				if err := tok.Claims(s.k.public, &std, &priv); err != nil {
					require.NoError(b, err)
				}
				if err := std.ValidateWithLeeway(exp, time.Minute); err != nil {
					require.NoError(b, err)
				}
			}
		})
		b.Run(string(alg)+"/ours-online", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.e.online.Verify(ctx, s.tok); err != nil {
					require.NoError(b, err)
				}
			}
		})
	}
}

func BenchmarkIssue(b *testing.B) {
	ctx := context.Background()
	for _, alg := range []Algorithm{EdDSA, ES256} {
		s := newBenchSetup(b, alg)
		c := alice()
		c.Scope = tenEntryScopes()["mixed, with allowServiceCli"]
		for _, dry := range []bool{false, true} {
			name := string(alg) + "/store"
			if dry {
				name = string(alg) + "/dry-run"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				opts := IssueOptions{WriteOptions: store.WriteOptions{DryRun: dry}}
				for b.Loop() {
					if _, err := s.e.issuer.Issue(ctx, &resource.DirectClusterEndpointToken{}, c, opts); err != nil {
						require.NoError(b, err)
					}
				}
			})
		}
	}
}

// BenchmarkVerify_reject: how fast hostile input is refused.
func BenchmarkVerify_reject(b *testing.B) {
	ctx := context.Background()
	s := newBenchSetup(b, EdDSA)
	parts := strings.Split(s.tok, ".")
	for name, tok := range map[string]string{
		"8MiB-dots":      strings.Repeat(".", 8<<20),
		"bad-header":     "!!!!." + parts[1] + "." + parts[2],
		"alg-none":       b64(`{"alg":"none"}`) + "." + parts[1] + ".",
		"unknown-kid":    b64(`{"alg":"EdDSA","kid":"x","typ":"dcet+jwt"}`) + "." + parts[1] + "." + parts[2],
		"bad-signature":  parts[0] + "." + parts[1] + "." + strings.Repeat("A", 86),
		"deep-json-head": b64(`{"alg":"EdDSA","x":`+strings.Repeat("[", 360)+strings.Repeat("]", 360)+`}`) + "." + parts[1] + "." + parts[2],
		"big-header":     b64(`{"alg":"EdDSA","x":`+strings.Repeat("[", 2500)+strings.Repeat("]", 2500)+`}`) + "." + parts[1] + "." + parts[2],
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.e.offline.Verify(ctx, tok); err == nil {
					require.FailNow(b, "accepted")
				}
			}
		})
	}
}

// BenchmarkPaired times ours and go-jose alternately inside one loop, so that both see
// the same load on a shared, noisy machine, and reports each one's time per operation
// and their ratio (ours ÷ go-jose), the figure the performance target is about.
func BenchmarkPaired(b *testing.B) {
	ctx := context.Background()
	for _, alg := range []Algorithm{EdDSA, ES256} {
		s := newBenchSetup(b, alg)
		algs := []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)}
		exp := jwt.Expected{Issuer: testIssuer, Time: s.now}
		ops := map[string][2]func(b *testing.B){
			"sign": {
				func(b *testing.B) {
					if _, err := sign(s.k, s.claims); err != nil {
						require.NoError(b, err)
					}
				},
				func(b *testing.B) {
					if _, err := jwt.Signed(s.signer).Claims(s.std).Claims(s.priv).Serialize(); err != nil {
						require.NoError(b, err)
					}
				},
			},
			"verify": {
				func(b *testing.B) {
					if _, err := s.e.offline.Verify(ctx, s.tok); err != nil {
						require.NoError(b, err)
					}
				},
				func(b *testing.B) {
					tok, err := jwt.ParseSigned(s.tok, algs)
					if err != nil {
						require.NoError(b, err)
					}
					var std jwt.Claims
					var priv struct {
						MS *inManagement `json:"management.service"`
					}
					if err := tok.Claims(s.k.public, &std, &priv); err != nil {
						require.NoError(b, err)
					}
					if err := std.ValidateWithLeeway(exp, time.Minute); err != nil {
						require.NoError(b, err)
					}
				},
			},
		}
		for _, op := range []string{"sign", "verify"} {
			fns := ops[op]
			b.Run(string(alg)+"/"+op, func(b *testing.B) {
				var ours, theirs time.Duration
				n := 0
				for b.Loop() {
					t0 := time.Now()
					fns[0](b)
					t1 := time.Now()
					fns[1](b)
					t2 := time.Now()
					ours += t1.Sub(t0)
					theirs += t2.Sub(t1)
					n++
				}
				b.ReportMetric(float64(ours.Microseconds())/float64(n), "ours-µs/op")
				b.ReportMetric(float64(theirs.Microseconds())/float64(n), "go-jose-µs/op")
				b.ReportMetric(float64(ours)/float64(theirs), "ratio")
			})
		}
	}
}
