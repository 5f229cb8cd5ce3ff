package token

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// The SEC-TOK-* cases of reliability-security §4.5. Each mints with the real issuer
// (or, where the case needs claims or headers the issuer never writes, with the real
// signing key through go-jose), changes the token, and checks the verifier's class.

// requireClass checks that err is a *VerifyError of class kind that maps to 401.
func requireClass(t testing.TB, err error, kind error) {
	t.Helper()
	require.Error(t, err)
	var ve *VerifyError
	require.True(t, errors.As(err, &ve), "%T: %v", err, err)
	require.Same(t, kind, ve.Kind, "got %v", err)
	require.ErrorIs(t, err, kind)
	if kind != ErrCheckFailed {
		require.ErrorIs(t, err, resource.ErrUnauthorized)
		require.EqualValues(t, 401, resource.StatusOf(err).Code)
		require.EqualValues(t, 401, StatusFor(err).ErrStatus.Code)
	}
}

// SEC-TOK-VALID
func TestSecTok_Valid(t *testing.T) {
	for _, alg := range []Algorithm{EdDSA, ES256} {
		t.Run(string(alg), func(t *testing.T) {
			e := newEnv(t, &envOptions{keys: KeySetOptions{Algorithm: alg}})
			tok := e.token()
			require.Less(t, len(tok), 1024)
			for _, v := range []*Verifier{e.offline, e.online} {
				c, err := v.Verify(context.Background(), tok)
				require.NoError(t, err)
				require.Equal(t, alg, c.Algorithm)
				require.Equal(t, alice().Scope, c.Scope())
			}
		})
	}
}

// SEC-TOK-NONE
func TestSecTok_AlgNone(t *testing.T) {
	e := newEnv(t, nil)
	kid := e.keys.SigningKey().ID()
	payload := string(e.claimsJSON(e.f.Clock.Now(), nil))
	for _, tok := range []string{
		handToken(`{"alg":"none","kid":"`+kid+`","typ":"dcet+jwt"}`, payload, ""),
		handToken(`{"alg":"none"}`, payload, ""),
		handToken(`{"alg":"None","kid":"`+kid+`","typ":"dcet+jwt"}`, payload, ""),
		handToken(`{"alg":"","kid":"`+kid+`","typ":"dcet+jwt"}`, payload, ""),
		handToken(`{"kid":"`+kid+`","typ":"dcet+jwt"}`, payload, ""),
		handToken(`{"alg":null,"kid":"`+kid+`","typ":"dcet+jwt"}`, payload, ""),
		handToken(`{"alg":"\u0045dDSA","kid":"`+kid+`","typ":"dcet+jwt"}`, payload, ""),
	} {
		_, err := e.offline.Verify(context.Background(), tok)
		requireClass(t, err, ErrAlgorithm)
	}
	// An allowed alg with an empty signature.
	_, err := e.offline.Verify(context.Background(), handToken(`{"alg":"EdDSA","kid":"`+kid+`","typ":"dcet+jwt"}`, payload, ""))
	requireClass(t, err, ErrSignature)
}

// SEC-TOK-ALG-CONFUSION: HS256 keyed with the public key (PEM, DER, JWK), RS256, ES384,
// ES256 with a foreign key, and an algorithm that does not match the kid's key.
func TestSecTok_AlgConfusion(t *testing.T) {
	ed := newEnv(t, nil)
	es := newEnv(t, &envOptions{keys: KeySetOptions{Algorithm: ES256}})
	ctx := context.Background()
	payload := ed.claimsJSON(ed.f.Clock.Now(), nil)
	edKey := ed.keys.SigningKey()
	der, err := x509.MarshalPKIXPublicKey(edKey.Public())
	require.NoError(t, err)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	jwkBytes, err := json.Marshal(edKey.jwk())
	require.NoError(t, err)

	forge := func(alg jose.SignatureAlgorithm, key any, kid string) string {
		t.Helper()
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
			(&jose.SignerOptions{}).WithType(TokenType))
		require.NoError(t, err)
		jws, err := s.Sign(payload)
		require.NoError(t, err)
		out, err := jws.CompactSerialize()
		require.NoError(t, err)
		return out
	}
	for name, secret := range map[string][]byte{"PEM": pemBytes, "DER": der, "JWK": jwkBytes, "raw": []byte(edKey.Public().(ed25519.PublicKey))} {
		for _, alg := range []jose.SignatureAlgorithm{jose.HS256, jose.HS384, jose.HS512} {
			if len(secret) < 64 && alg != jose.HS256 {
				continue // go-jose refuses HS384/HS512 keys shorter than the hash
			}
			t.Run(string(alg)+" keyed with the public key "+name, func(t *testing.T) {
				_, err := ed.offline.Verify(ctx, forge(alg, secret, edKey.ID()))
				requireClass(t, err, ErrAlgorithm)
			})
		}
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	foreignP256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	_, foreignEd, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	esKey := es.keys.SigningKey()

	for _, tc := range []struct {
		name string
		v    *Verifier
		tok  string
		want error
	}{
		{"RS256 with our kid", ed.offline, forge(jose.RS256, rsaKey, edKey.ID()), ErrAlgorithm},
		{"PS256 with our kid", ed.offline, forge(jose.PS256, rsaKey, edKey.ID()), ErrAlgorithm},
		{"ES384 with our kid", es.offline, forge(jose.ES384, p384, esKey.ID()), ErrAlgorithm},
		{"ES256 signed by a foreign key, our ES256 kid", es.offline, forge(jose.ES256, foreignP256, esKey.ID()), ErrSignature},
		{"EdDSA signed by a foreign key, our kid", ed.offline, forge(jose.EdDSA, foreignEd, edKey.ID()), ErrSignature},
		{"ES256 header naming our EdDSA key", ed.offline, forge(jose.ES256, foreignP256, edKey.ID()), ErrUnknownKey},
		{"EdDSA header naming our ES256 key", es.offline, forge(jose.EdDSA, foreignEd, esKey.ID()), ErrUnknownKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.v.Verify(ctx, tc.tok)
			requireClass(t, err, tc.want)
		})
	}
	t.Run("a verifier that allows only EdDSA refuses a genuine ES256 token", func(t *testing.T) {
		v, err := NewVerifier(es.keys, VerifierOptions{Issuer: testIssuer, Algorithms: []Algorithm{EdDSA}, Now: es.f.Clock.Now})
		require.NoError(t, err)
		_, err = v.Verify(ctx, es.token())
		requireClass(t, err, ErrAlgorithm)
	})
	t.Run("only EdDSA and ES256 can be allowed", func(t *testing.T) {
		_, err := NewVerifier(ed.keys, VerifierOptions{Issuer: testIssuer, Algorithms: []Algorithm{"HS256"}})
		require.Error(t, err)
		_, err = NewVerifier(ed.keys, VerifierOptions{Issuer: testIssuer, Algorithms: []Algorithm{"none"}})
		require.Error(t, err)
		_, err = NewVerifier(ed.keys, VerifierOptions{Issuer: testIssuer, Algorithms: []Algorithm{}})
		require.Error(t, err)
	})
}

const b64chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// SEC-TOK-TAMPER: every byte position, in header, payload and signature, replaced by
// another base64url character and by a character outside the alphabet; and a payload
// re-encoded with a wider scope, another aud or a later exp.
func TestSecTok_TamperEveryPosition(t *testing.T) {
	for _, alg := range []Algorithm{EdDSA, ES256} {
		t.Run(string(alg), func(t *testing.T) {
			e := newEnv(t, &envOptions{keys: KeySetOptions{Algorithm: alg}})
			ctx := context.Background()
			tok := e.token()
			_, err := e.offline.Verify(ctx, tok)
			require.NoError(t, err)
			dot1 := strings.IndexByte(tok, '.')
			dot2 := dot1 + 1 + strings.IndexByte(tok[dot1+1:], '.')
			checked := 0
			for i := 0; i < len(tok); i++ {
				var subs []byte
				if tok[i] == '.' {
					subs = []byte{'A', 'x'}
				} else {
					j := strings.IndexByte(b64chars, tok[i])
					subs = []byte{b64chars[(j+1)%64], b64chars[(j+33)%64], '*'}
				}
				for _, c := range subs {
					bad := tok[:i] + string(c) + tok[i+1:]
					_, err := e.offline.Verify(ctx, bad)
					require.Error(t, err, "position %d -> %q", i, c)
					var ve *VerifyError
					require.True(t, errors.As(err, &ve))
					switch {
					case i < dot1: // header: any class but a verdict on claims
						require.NotContains(t, []error{ErrExpired, ErrNotYetValid, ErrIssuer, ErrAudience, ErrMissingClaim, ErrRevoked}, ve.Kind, "position %d", i)
					case i > dot1 && i < dot2, i > dot2:
						require.Contains(t, []error{ErrSignature, ErrMalformed}, ve.Kind, "position %d -> %q: %v", i, c, err)
					}
					checked++
				}
			}
			t.Logf("RESULT tamper alg=%s positions=%d mutations=%d accepted=0", alg, len(tok), checked)

			// Re-encoded payloads: valid base64 and JSON, claims a forger would want.
			parts := strings.Split(tok, ".")
			var claims map[string]any
			raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
			require.NoError(t, json.Unmarshal(raw, &claims))
			for name, mut := range map[string]func(m map[string]any){
				"scope *": func(m map[string]any) {
					m[ClaimName].(map[string]any)["scope"] = map[string]any{"projects": []string{"*"}}
				},
				"no scope": func(m map[string]any) { delete(m[ClaimName].(map[string]any), "scope") },
				"aud":      func(m map[string]any) { m["aud"] = "cluster-b" },
				"exp":      func(m map[string]any) { m["exp"] = m["exp"].(float64) + 86400*365 },
				"gen":      func(m map[string]any) { m[ClaimName].(map[string]any)["gen"] = 99 },
			} {
				c := map[string]any{}
				raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
				require.NoError(t, json.Unmarshal(raw, &c))
				mut(c)
				b, _ := json.Marshal(c)
				_, err := e.offline.Verify(ctx, parts[0]+"."+base64.RawURLEncoding.EncodeToString(b)+"."+parts[2])
				requireClass(t, err, ErrSignature)
				_ = name
			}
			// Signatures of every other length, and non-canonical encodings of the
			// right one (trailing bits set).
			for _, n := range []int{0, 1, 2, 3, 4, 43, 84, 85, 87, 88, 90, 128, 172, 200, 1000, 4000} {
				_, err := e.offline.Verify(ctx, parts[0]+"."+parts[1]+"."+strings.Repeat("A", n))
				requireClass(t, err, ErrSignature)
			}
			last := strings.IndexByte(b64chars, parts[2][85])
			for bits := 1; bits < 16; bits++ {
				nc := parts[2][:85] + string(b64chars[last|bits])
				if nc == parts[2] {
					continue
				}
				_, err := e.offline.Verify(ctx, parts[0]+"."+parts[1]+"."+nc)
				requireClass(t, err, ErrSignature)
			}
			// A header re-encoded with another kid (but the same key) changes the
			// signing input.
			_, err = e.offline.Verify(ctx, b64(`{"typ":"dcet+jwt","alg":"`+string(alg)+`","kid":"`+e.keys.SigningKey().ID()+`"}`)+"."+parts[1]+"."+parts[2])
			requireClass(t, err, ErrSignature)
		})
	}
}

// SEC-TOK-ERRCLASS: expired and tampered is a signature error; expired with an
// unknown kid is an unknown-key error. An expiry check never hides a bad signature.
func TestSecTok_ErrorClassOrder(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	tok := e.token()
	e.f.Step(48 * time.Hour)
	_, err := e.offline.Verify(ctx, tok)
	requireClass(t, err, ErrExpired)
	parts := strings.Split(tok, ".")
	sig := []byte(parts[2])
	sig[10] ^= 0x01
	_, err = e.offline.Verify(ctx, parts[0]+"."+parts[1]+"."+string(sig))
	requireClass(t, err, ErrSignature)
	pl := []byte(parts[1])
	pl[20] = 'A' + (pl[20]-'A'+1)%26
	_, err = e.offline.Verify(ctx, parts[0]+"."+string(pl)+"."+parts[2])
	requireClass(t, err, ErrSignature)
	_, err = e.offline.Verify(ctx, b64(`{"alg":"EdDSA","kid":"nope","typ":"dcet+jwt"}`)+"."+parts[1]+"."+parts[2])
	requireClass(t, err, ErrUnknownKey)
}

// SEC-TOK-EXPIRED: boundaries of exp, nbf and iat with the leeway, the leeway's cap,
// and no leeway.
func TestSecTok_ExpiryBoundaries(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	out := e.issue(dcet(3600, nil), alice())
	t0 := storeNow(e)
	exp := out.Status.ExpirationTimestamp.Time
	require.Equal(t, t0.Add(time.Hour), exp)

	var mu sync.Mutex
	now := t0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	at := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
	for _, tc := range []struct {
		leeway, effective time.Duration
	}{{0, 60 * time.Second}, {10 * time.Second, 10 * time.Second}, {5 * time.Minute, 60 * time.Second}, {-1, 0}} {
		v, err := NewVerifier(e.keys, VerifierOptions{Issuer: testIssuer, Leeway: tc.leeway, Now: clock})
		require.NoError(t, err)
		require.Equal(t, tc.effective, v.Leeway(), "leeway %s", tc.leeway)
		l := tc.effective
		for _, c := range []struct {
			at   time.Time
			want error
		}{
			{exp.Add(l - time.Second), nil},                 // exp = now - leeway + 1 s: accepted
			{exp.Add(l - time.Millisecond), nil},            // the last instant
			{exp.Add(l), ErrExpired},                        // exp = now - leeway: refused
			{exp.Add(l + time.Second), ErrExpired},          // exp = now - leeway - 1 s: refused
			{t0.Add(-l), nil},                               // iat = nbf = now + leeway: accepted
			{t0.Add(-l - time.Millisecond), ErrNotYetValid}, // just before
			{t0.Add(-l - time.Second), ErrNotYetValid},      // iat = nbf = now + leeway + 1 s: refused
		} {
			at(c.at)
			_, err := v.Verify(ctx, out.Status.Token)
			if c.want == nil {
				require.NoError(t, err, "leeway %s at %s", l, c.at)
			} else {
				requireClass(t, err, c.want)
			}
		}
	}

	// nbf and iat apart: a token (signed with our key) whose nbf is later than iat.
	at(t0)
	v, err := NewVerifier(e.keys, VerifierOptions{Issuer: testIssuer, Now: clock})
	require.NoError(t, err)
	k := e.keys.SigningKey()
	hdr := map[string]any{"typ": TokenType}
	tok := signRaw(t, k, hdr, e.claimsJSON(t0, map[string]any{"nbf": t0.Add(10 * time.Minute).Unix()}))
	_, err = v.Verify(ctx, tok)
	requireClass(t, err, ErrNotYetValid)
	at(t0.Add(9 * time.Minute))
	_, err = v.Verify(ctx, tok)
	require.NoError(t, err, "nbf = now + leeway")
	at(t0)
	tok = signRaw(t, k, hdr, e.claimsJSON(t0, map[string]any{"iat": t0.Add(2 * time.Minute).Unix(), "nbf": t0.Unix()}))
	_, err = v.Verify(ctx, tok)
	requireClass(t, err, ErrNotYetValid)
}

// SEC-TOK-NO-EXP / NO-IAT / NO-ISS / WRONG-ISS / NO-AUD / WRONG-AUD, the other
// required claims, claims of the wrong type, and contradictory claims.
func TestSecTok_Claims(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	k := e.keys.SigningKey()
	now := e.f.Clock.Now()
	hdr := map[string]any{"typ": TokenType}
	sign := func(override map[string]any) string { return signRaw(t, k, hdr, e.claimsJSON(now, override)) }

	_, err := e.offline.Verify(ctx, sign(nil))
	require.NoError(t, err, "the hand-made baseline verifies")
	ms := func(mut func(m map[string]any)) map[string]any {
		m := map[string]any{"uid": "u1", "name": "alice", "kind": "User", "gen": 1, "rec": "dcet-x"}
		mut(m)
		return map[string]any{ClaimName: m}
	}
	for _, tc := range []struct {
		name     string
		override map[string]any
		want     error
	}{
		{"no exp", map[string]any{"exp": nil}, ErrMissingClaim},
		{"no iat", map[string]any{"iat": nil}, ErrMissingClaim},
		{"no nbf", map[string]any{"nbf": nil}, ErrMissingClaim},
		{"no iss", map[string]any{"iss": nil}, ErrMissingClaim},
		{"no sub", map[string]any{"sub": nil}, ErrMissingClaim},
		{"empty sub", map[string]any{"sub": ""}, ErrMissingClaim},
		{"no jti", map[string]any{"jti": nil}, ErrMissingClaim},
		{"no private claim", map[string]any{ClaimName: nil}, ErrMissingClaim},
		{"no name", ms(func(m map[string]any) { delete(m, "name") }), ErrMissingClaim},
		{"no record", ms(func(m map[string]any) { delete(m, "rec") }), ErrMissingClaim},
		{"wrong iss", map[string]any{"iss": "https://evil.example.com"}, ErrIssuer},
		{"iss with a trailing slash", map[string]any{"iss": testIssuer + "/"}, ErrIssuer},
		{"aud for a verifier without one", map[string]any{"aud": "cluster-a"}, ErrAudience},
		{"exp as a string", map[string]any{"exp": "1767312000"}, ErrMalformed},
		{"exp as a fraction", map[string]any{"exp": 1767312000.5}, ErrMalformed},
		{"iat as an object", map[string]any{"iat": map[string]any{}}, ErrMalformed},
		{"aud as a number", map[string]any{"aud": 7}, ErrMalformed},
		{"private claim as a string", map[string]any{ClaimName: "x"}, ErrMalformed},
		{"scope entry without a project", ms(func(m map[string]any) { m["scope"] = map[string]any{"spaces": []string{"nospace"}} }), ErrMalformed},
		{"exp before iat", map[string]any{"exp": now.Add(-time.Second).Unix()}, ErrInvalidClaim},
		{"exp equal to iat", map[string]any{"exp": now.Unix()}, ErrInvalidClaim},
		{"nbf after exp", map[string]any{"nbf": now.Add(2 * time.Hour).Unix()}, ErrInvalidClaim},
		{"lifetime above the maximum", map[string]any{"exp": now.Add(DefaultMaxTTL + time.Second).Unix()}, ErrInvalidClaim},
		{"negative iat", map[string]any{"iat": -1, "nbf": -1}, ErrInvalidClaim},
		{"exp beyond year 9999", map[string]any{"exp": int64(1) << 62}, ErrInvalidClaim},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.offline.Verify(ctx, sign(tc.override))
			requireClass(t, err, tc.want)
		})
	}

	t.Run("audience", func(t *testing.T) {
		bound, err := NewVerifier(e.keys, VerifierOptions{Issuer: testIssuer, Audiences: []string{"cluster-a"}, Now: e.f.Clock.Now})
		require.NoError(t, err)
		for _, tc := range []struct {
			aud  []string
			want error
		}{
			{nil, ErrMissingClaim},
			{[]string{"cluster-b"}, ErrAudience},
			{[]string{"cluster-b", "cluster-a"}, nil},
			{[]string{"cluster-a"}, nil},
			{[]string{"Cluster-A"}, ErrAudience},
		} {
			out, err := e.issuer.Issue(ctx, dcet(0, nil), alice(), IssueOptions{Audience: append([]string{}, tc.aud...)})
			require.NoError(t, err)
			c, err := bound.Verify(ctx, out.Status.Token)
			if tc.want == nil {
				require.NoError(t, err)
				require.Equal(t, tc.aud, c.Audience)
				continue
			}
			requireClass(t, err, tc.want)
		}
	})
}

// SEC-TOK-HEADER-KEYS and explicit typing: tokens carrying jwk, jku, x5u, x5c (and
// x5t, crit, anything else) are refused before a key is looked up, even when the
// embedded key is the one that signed; a wrong typ is refused.
func TestSecTok_HeaderKeysAndType(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	spy := &spyKeys{inner: e.keys}
	v, err := NewVerifier(spy, VerifierOptions{Issuer: testIssuer, Now: e.f.Clock.Now})
	require.NoError(t, err)
	payload := e.claimsJSON(e.f.Clock.Now(), nil)
	k := e.keys.SigningKey()

	// An attacker's own key, embedded in the header, which signed the token.
	_, evil, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	evilKey, err := NewKey(evil)
	require.NoError(t, err)
	selfSigned := func() string {
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: evil},
			(&jose.SignerOptions{EmbedJWK: true}).WithType(TokenType).WithHeader("kid", k.ID()))
		require.NoError(t, err)
		jws, err := s.Sign(payload)
		require.NoError(t, err)
		out, err := jws.CompactSerialize()
		require.NoError(t, err)
		return out
	}()
	certDER := selfSignedCert(t, evil)
	for _, tc := range []struct {
		name string
		tok  string
	}{
		{"jwk of an attacker key that signed it", selfSigned},
		{"jwk of our own public key", signRaw(t, k, map[string]any{"typ": TokenType, "jwk": k.jwk()}, payload)},
		{"jwk of the attacker key, signed by ours", signRaw(t, k, map[string]any{"typ": TokenType, "jwk": evilKey.jwk()}, payload)},
		{"jku", signRaw(t, k, map[string]any{"typ": TokenType, "jku": "https://evil.example.com/jwks"}, payload)},
		{"x5u", signRaw(t, k, map[string]any{"typ": TokenType, "x5u": "https://evil.example.com/cert.pem"}, payload)},
		{"x5c", signRaw(t, k, map[string]any{"typ": TokenType, "x5c": []string{base64.StdEncoding.EncodeToString(certDER)}}, payload)},
		{"x5t", signRaw(t, k, map[string]any{"typ": TokenType, "x5t": "abc"}, payload)},
		{"x5t#S256", signRaw(t, k, map[string]any{"typ": TokenType, "x5t#S256": "abc"}, payload)},
		{"crit b64", signRaw(t, k, map[string]any{"typ": TokenType, "crit": []string{"b64"}, "b64": true}, payload)},
		{"cty", signRaw(t, k, map[string]any{"typ": TokenType, "cty": "JWT"}, payload)},
		{"a private parameter", signRaw(t, k, map[string]any{"typ": TokenType, "foo": 1}, payload)},
		{"an upper-case KID beside kid", signRaw(t, k, map[string]any{"typ": TokenType, "KID": "other"}, payload)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := spy.count()
			_, err := v.Verify(ctx, tc.tok)
			requireClass(t, err, ErrHeader)
			require.Equal(t, before, spy.count(), "no key was looked up")
		})
	}
	for _, tc := range []struct {
		name string
		typ  any
		want error
	}{
		{"no typ", nil, ErrType},
		{"JWT", "JWT", ErrType},
		{"at+jwt", "at+jwt", ErrType},
		{"a number", 1, ErrType},
		{"dcet+jwt", TokenType, nil},
		{"upper case", "DCET+JWT", nil},
		{"with the application/ prefix", "application/dcet+jwt", nil},
	} {
		t.Run("typ "+tc.name, func(t *testing.T) {
			hdr := map[string]any{}
			if tc.typ != nil {
				hdr["typ"] = tc.typ
			}
			_, err := v.Verify(ctx, signRaw(t, k, hdr, payload))
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			requireClass(t, err, tc.want)
		})
	}
}

func selfSignedCert(t testing.TB, key ed25519.PrivateKey) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "evil"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	return der
}

// spyKeys records every lookup, to show that a kid only ever indexes the in-memory
// key set (no file, no URL, no other source is consulted).
type spyKeys struct {
	mu      sync.Mutex
	inner   KeySource
	lookups []string
}

func (s *spyKeys) VerificationKey(kid string) (crypto.PublicKey, Algorithm, bool) {
	s.mu.Lock()
	s.lookups = append(s.lookups, kid)
	s.mu.Unlock()
	return s.inner.VerificationKey(kid)
}

func (s *spyKeys) count() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.lookups) }

// SEC-TOK-KID: unknown, path-traversal, huge and non-string kids, and a kid of a key
// of another type, are unknown-key errors; the kid is only ever a map key.
func TestSecTok_HostileKid(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	spy := &spyKeys{inner: e.keys}
	v, err := NewVerifier(spy, VerifierOptions{Issuer: testIssuer, Now: e.f.Clock.Now})
	require.NoError(t, err)
	big, err := NewVerifier(spy, VerifierOptions{Issuer: testIssuer, Now: e.f.Clock.Now, MaxTokenBytes: 64 << 10})
	require.NoError(t, err)
	payload := e.claimsJSON(e.f.Clock.Now(), nil)
	k := e.keys.SigningKey()
	es, err := GenerateKey(ES256)
	require.NoError(t, err)
	require.NoError(t, e.keys.Add(ctx, es))

	for _, tc := range []struct {
		name   string
		kid    any
		v      *Verifier
		want   error
		lookup bool
	}{
		{"unknown", "E6w60uwjI30TcryLgXfFuL6m2LHZqeCO9QpztBNZ-KB", v, ErrUnknownKey, true},
		{"path traversal", "../../dev/null", v, ErrUnknownKey, true},
		{"absolute path", "/etc/passwd", v, ErrUnknownKey, true},
		{"URL", "https://evil.example.com/key.pem", v, ErrUnknownKey, true},
		{"SQL", "' OR 1=1 --", v, ErrUnknownKey, true},
		{"NUL and newline", "a\x00b\nc", v, ErrUnknownKey, true},
		{"empty", "", v, ErrUnknownKey, true},
		{"700 bytes", strings.Repeat("k", 700), v, ErrUnknownKey, true},
		{"1 KiB: over the header cap", strings.Repeat("k", 1<<10), v, ErrMalformed, false},
		{"10 KiB: over the token cap", strings.Repeat("k", 10<<10), v, ErrMalformed, false},
		{"10 KiB with a 64 KiB token cap: still over the header cap", strings.Repeat("k", 10<<10), big, ErrMalformed, false},
		{"number", 42, v, ErrUnknownKey, false},
		{"object", map[string]any{"path": "/etc/passwd"}, v, ErrUnknownKey, false},
		{"array", []string{k.ID()}, v, ErrUnknownKey, false},
		{"null", nil, v, ErrUnknownKey, false},
		{"bool", true, v, ErrUnknownKey, false},
		{"a key of another type (ES256 kid, EdDSA token)", es.ID(), v, ErrUnknownKey, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := signRaw(t, k, map[string]any{"typ": TokenType, "kid": tc.kid}, payload)
			before := spy.count()
			_, err := tc.v.Verify(ctx, tok)
			requireClass(t, err, tc.want)
			spy.mu.Lock()
			after := spy.lookups[before:]
			spy.mu.Unlock()
			if tc.lookup {
				require.Equal(t, []string{tc.kid.(string)}, after, "exactly one in-memory lookup, of the kid as given")
			} else {
				require.Empty(t, after)
			}
			if s, ok := tc.kid.(string); ok && len(s) > 100 {
				require.Less(t, len(err.Error()), 400, "a huge kid is not echoed")
			}
		})
	}
	t.Run("no kid", func(t *testing.T) {
		tok := handToken(`{"alg":"EdDSA","typ":"dcet+jwt"}`, string(payload), strings.Repeat("A", 86))
		_, err := v.Verify(ctx, tok)
		requireClass(t, err, ErrUnknownKey)
	})
}

// SEC-TOK-DOS: oversized and deeply nested inputs are refused before any expensive
// work, without allocations in proportion to the input (timings are in
// BenchmarkVerify_reject).
func TestSecTok_DoS(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	k := e.keys.SigningKey()
	kid := k.ID()
	deepHeader := `{"alg":"EdDSA","kid":"` + kid + `","typ":"dcet+jwt","x":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`
	deeperHeader := `{"alg":"EdDSA","kid":"` + kid + `","typ":"dcet+jwt","x":` + strings.Repeat("[", 2500) + strings.Repeat("]", 2500) + `}`
	deepPayload := []byte(strings.Repeat("[", 2500) + strings.Repeat("]", 2500))
	tooDeep := []byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001))
	for _, tc := range []struct {
		name      string
		tok       string
		want      error
		maxAllocs float64
	}{
		{"1 MiB of dots", strings.Repeat(".", 1<<20), ErrMalformed, 1},
		{"8 MiB of dots", strings.Repeat(".", 8<<20), ErrMalformed, 1},
		{"8 KiB + 1 of dots", strings.Repeat(".", 8<<10+1), ErrMalformed, 1},
		{"8 KiB of dots (under the cap)", strings.Repeat(".", 8<<10), ErrMalformed, 1},
		{"1 MiB header", b64(`{"alg":"EdDSA","x":"`+strings.Repeat("a", 1<<20)+`"}`) + ".e30.AAAA", ErrMalformed, 1},
		{"deep JSON header, under the header cap", b64(deepHeader) + ".e30." + strings.Repeat("A", 86), ErrHeader, 0},
		{"deep JSON header, over the header cap", b64(deeperHeader) + ".e30." + strings.Repeat("A", 86), ErrMalformed, 1},
		{"unbalanced JSON header", b64(strings.Repeat("[", 700)) + ".e30.AAAA", ErrMalformed, 0},
		{"bad base64 header", "!!!!.e30.AAAA", ErrMalformed, 3},
		{"padded base64 header", b64(`{"alg":"EdDSA"}`) + "==.e30.AAAA", ErrMalformed, 0},
		{"header not an object", b64(`"x"`) + ".e30.AAAA", ErrMalformed, 0},
		{"header null", b64(`null`) + ".e30.AAAA", ErrMalformed, 0},
		{"four parts", "a.b.c.d", ErrMalformed, 1},
		{"two parts", "a.b", ErrMalformed, 1},
		{"empty", "", ErrMalformed, 1},
		{"surrounding whitespace", " " + e.token() + " ", ErrMalformed, 0},
		{"JWS JSON serialization", `{"payload":"e30","signatures":[]}`, ErrMalformed, 1},
		{"deep JSON payload, signed by our key", signRaw(t, k, map[string]any{"typ": TokenType}, deepPayload), ErrMalformed, 0},
		{"deep JSON payload, bad signature", b64(`{"alg":"EdDSA","kid":"`+kid+`","typ":"dcet+jwt"}`) + "." + base64.RawURLEncoding.EncodeToString(deepPayload) + "." + strings.Repeat("A", 86), ErrSignature, 0},
		{"JSON payload deeper than encoding/json allows, signed by our key, 64 KiB cap", signRaw(t, k, map[string]any{"typ": TokenType}, tooDeep), ErrMalformed, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := e.offline
			if len(tc.tok) > DefaultMaxTokenBytes && len(tc.tok) < 64<<10 {
				var err error
				v, err = NewVerifier(e.keys, VerifierOptions{Issuer: testIssuer, Now: e.f.Clock.Now, MaxTokenBytes: 64 << 10})
				require.NoError(t, err)
			}
			_, err := v.Verify(ctx, tc.tok)
			requireClass(t, err, tc.want)
			t.Logf("%v", err)
			if tc.maxAllocs > 0 {
				allocs := testing.AllocsPerRun(20, func() { _, _ = e.offline.Verify(ctx, tc.tok) })
				require.LessOrEqual(t, allocs, tc.maxAllocs)
			}
		})
	}
}

// SEC-TOK-ROTATION: sign with key 1; stage key 2 (published, not signing); rotate;
// key-1 tokens keep verifying, also after a restart, until the retention runs out and
// Prune removes key 1. A verifier with a JWKS fetched before key 2 was published does
// not know key 2 until it refreshes.
func TestSecTok_Rotation(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	k1 := e.keys.SigningKey()
	tok1 := e.token()
	staleJWKS := e.keys.JWKS()

	k2, err := e.keys.Stage(ctx)
	require.NoError(t, err)
	require.Equal(t, k1.ID(), e.keys.SigningKey().ID(), "staging does not sign")
	require.Contains(t, string(e.keys.JWKS()), k2.ID(), "but publishes")
	require.Equal(t, k1.ID(), decodePart(t, e.token(), 0)["kid"])

	e.f.Step(time.Hour) // the JWKS cache max-age
	rotated, err := e.keys.Rotate(ctx)
	require.NoError(t, err)
	require.Equal(t, k2.ID(), rotated.ID(), "the staged key is promoted")
	require.Equal(t, k2.ID(), e.keys.SigningKey().ID())
	old, ok := e.keys.Key(k1.ID())
	require.True(t, ok)
	require.Equal(t, e.f.Clock.Now().Truncate(time.Second), old.Retired())
	tok2 := e.token()
	require.Equal(t, k2.ID(), decodePart(t, tok2, 0)["kid"])
	for _, tok := range []string{tok1, tok2} {
		_, err := e.online.Verify(ctx, tok)
		require.NoError(t, err)
	}

	stale, err := ParseJWKS(staleJWKS)
	require.NoError(t, err)
	sv, err := NewVerifier(stale, VerifierOptions{Issuer: testIssuer, Now: e.f.Clock.Now})
	require.NoError(t, err)
	_, err = sv.Verify(ctx, tok1)
	require.NoError(t, err)
	_, err = sv.Verify(ctx, tok2)
	requireClass(t, err, ErrUnknownKey)
	fresh, err := ParseJWKS(e.keys.JWKS())
	require.NoError(t, err)
	fv, err := NewVerifier(fresh, VerifierOptions{Issuer: testIssuer, Now: e.f.Clock.Now})
	require.NoError(t, err)
	_, err = fv.Verify(ctx, tok2)
	require.NoError(t, err)

	// A restarted process (a new key set over the same store) verifies both.
	again, err := OpenKeySet(ctx, e.f.Store, KeySetOptions{})
	require.NoError(t, err)
	require.Equal(t, k2.ID(), again.SigningKey().ID())
	av, err := NewVerifier(again, VerifierOptions{Issuer: testIssuer, Now: e.f.Clock.Now})
	require.NoError(t, err)
	for _, tok := range []string{tok1, tok2} {
		_, err := av.Verify(ctx, tok)
		require.NoError(t, err)
	}

	// Rotating without a staged key generates one.
	e.f.Step(time.Hour)
	k3, err := e.keys.Rotate(ctx)
	require.NoError(t, err)
	require.NotEqual(t, k2.ID(), k3.ID())
	require.Len(t, e.keys.Keys(), 3)

	// Within the retention nothing is pruned; after it, key 1 (retired first) goes.
	e.f.Step(DefaultMaxTTL - time.Hour)
	gone, err := e.keys.Prune(ctx)
	require.NoError(t, err)
	require.Empty(t, gone)
	e.f.Step(MaxLeeway)
	gone, err = e.keys.Prune(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{k1.ID()}, gone)
	require.NotContains(t, string(e.keys.JWKS()), k1.ID())
	v, err := NewVerifier(e.keys, VerifierOptions{Issuer: testIssuer, Now: func() time.Time { return e.f.Clock.Now().Add(-DefaultMaxTTL + time.Hour) }})
	require.NoError(t, err)
	_, err = v.Verify(ctx, tok1)
	requireClass(t, err, ErrUnknownKey)
	_, err = v.Verify(ctx, tok2)
	require.NoError(t, err, "key 2 retired an hour later and is still kept")
	require.NoError(t, again.Refresh(ctx))
	_, ok = again.Key(k1.ID())
	require.False(t, ok, "another process sees the prune after Refresh")
}

// SEC-TOK-REVOCATION (both ways) and SEC-TOK-BINDING: deleting the record revokes
// the token online (also when it is re-created under the same name); raising the
// subject's token generation revokes all its tokens; the offline verifier does not
// see either (it has no store); a store failure refuses with 503.
func TestSecTok_Revocation(t *testing.T) {
	ctx := context.Background()
	t.Run("record deleted or re-created", func(t *testing.T) {
		e := newEnv(t, nil)
		out := e.issue(dcet(0, nil), alice())
		_, err := e.online.Verify(ctx, out.Status.Token)
		require.NoError(t, err)
		_, err = e.f.Delete(ctx, &resource.DirectClusterEndpointToken{ObjectMeta: resource.ObjectMeta{Name: out.Name}}, store.DeleteOptions{})
		require.NoError(t, err)
		_, err = e.online.Verify(ctx, out.Status.Token)
		requireClass(t, err, ErrRevoked)
		require.Equal(t, "the token has been revoked", StatusFor(err).ErrStatus.Message)
		_, err = e.offline.Verify(ctx, out.Status.Token)
		require.NoError(t, err, "offline verification cannot know; documented")

		same := dcet(0, nil)
		same.Name = out.Name
		e.issue(same, alice())
		_, err = e.online.Verify(ctx, out.Status.Token)
		requireClass(t, err, ErrRevoked)
	})
	t.Run("record being deleted", func(t *testing.T) {
		e := newEnv(t, nil)
		req := dcet(0, nil)
		req.Finalizers = []string{"example.com/audit"}
		out := e.issue(req, alice())
		_, err := e.f.Delete(ctx, &resource.DirectClusterEndpointToken{ObjectMeta: resource.ObjectMeta{Name: out.Name}}, store.DeleteOptions{})
		require.NoError(t, err)
		_, err = e.online.Verify(ctx, out.Status.Token)
		requireClass(t, err, ErrRevoked)
		rec := &resource.DirectClusterEndpointToken{}
		require.NoError(t, e.f.Get(ctx, "", out.Name, rec, store.GetOptions{}))
		rec.Finalizers = nil
		require.NoError(t, e.f.Update(ctx, rec, store.UpdateOptions{}))
	})
	t.Run("access key subject: generation bumped, key deleted", func(t *testing.T) {
		key := &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "ci-key"},
			Spec: resource.AccessKeySpec{Subject: "ci", TokenGeneration: 3}}
		e := newEnv(t, nil)
		require.NoError(t, e.f.Create(ctx, key, store.CreateOptions{}))
		gen, err := SubjectGeneration(ctx, e.f.Store, SubjectKindAccessKey, key.Name, key.UID)
		require.NoError(t, err)
		c := Caller{Kind: SubjectKindAccessKey, Name: key.Name, UID: key.UID, TokenGeneration: gen}
		old := e.issue(dcet(0, nil), c).Status.Token
		_, err = e.online.Verify(ctx, old)
		require.NoError(t, err)

		key.Spec.TokenGeneration = 4
		require.NoError(t, e.f.Update(ctx, key, store.UpdateOptions{}))
		_, err = e.online.Verify(ctx, old)
		requireClass(t, err, ErrRevoked)
		c.TokenGeneration = 4
		fresh := e.issue(dcet(0, nil), c).Status.Token
		_, err = e.online.Verify(ctx, fresh)
		require.NoError(t, err, "a token at the new generation is good")

		_, err = e.f.Delete(ctx, key, store.DeleteOptions{})
		require.NoError(t, err)
		_, err = e.online.Verify(ctx, fresh)
		requireClass(t, err, ErrRevoked)
		require.NoError(t, e.f.Create(ctx, &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "ci-key"},
			Spec: resource.AccessKeySpec{TokenGeneration: 4}}, store.CreateOptions{}))
		_, err = e.online.Verify(ctx, fresh)
		requireClass(t, err, ErrRevoked) // re-created with another uid
	})
	t.Run("user subject: any of its keys raises the generation", func(t *testing.T) {
		e := newEnv(t, nil)
		k1 := &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "alice-laptop"}, Spec: resource.AccessKeySpec{Subject: "alice", TokenGeneration: 1}}
		k2 := &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "alice-ci"}, Spec: resource.AccessKeySpec{Subject: "alice"}}
		other := &resource.AccessKey{ObjectMeta: resource.ObjectMeta{Name: "bob"}, Spec: resource.AccessKeySpec{Subject: "bob", TokenGeneration: 9}}
		for _, k := range []*resource.AccessKey{k1, k2, other} {
			require.NoError(t, e.f.Create(ctx, k, store.CreateOptions{}))
		}
		gen, err := SubjectGeneration(ctx, e.f.Store, "User", "alice", "")
		require.NoError(t, err)
		require.EqualValues(t, 1, gen)
		tok := e.token() // alice() has generation 1
		_, err = e.online.Verify(ctx, tok)
		require.NoError(t, err)
		k2.Spec.TokenGeneration = 2
		require.NoError(t, e.f.Update(ctx, k2, store.UpdateOptions{}))
		_, err = e.online.Verify(ctx, tok)
		requireClass(t, err, ErrRevoked)
	})
	t.Run("a failing check refuses with 503", func(t *testing.T) {
		e := newEnv(t, nil)
		failing := revocationFunc(func(context.Context, *Claims) error { return errors.New("disk on fire") })
		v, err := NewVerifier(e.keys, VerifierOptions{Issuer: testIssuer, Now: e.f.Clock.Now, Revocation: failing})
		require.NoError(t, err)
		_, err = v.Verify(ctx, e.token())
		requireClass(t, err, ErrCheckFailed)
		require.ErrorIs(t, err, resource.ErrServiceUnavailable)
		require.EqualValues(t, 503, resource.StatusOf(err).Code)
		require.EqualValues(t, 503, StatusFor(err).ErrStatus.Code)
		gen := func(context.Context, *store.Store, string, string, string) (int64, error) {
			return 0, errors.New("users service down")
		}
		v, err = NewVerifier(e.keys, VerifierOptions{Issuer: testIssuer, Now: e.f.Clock.Now, Revocation: NewStoreRevocation(e.f.Store, gen)})
		require.NoError(t, err)
		_, err = v.Verify(ctx, e.token())
		requireClass(t, err, ErrCheckFailed)
	})
}

type revocationFunc func(context.Context, *Claims) error

func (f revocationFunc) CheckRevocation(ctx context.Context, c *Claims) error { return f(ctx, c) }

func TestVerifyError_Status(t *testing.T) {
	for kind, msg := range map[error]string{
		ErrExpired: "the token has expired", ErrNotYetValid: "the token is not valid yet",
		ErrRevoked: "the token has been revoked", ErrSignature: "invalid bearer token",
		ErrUnknownKey: "invalid bearer token", ErrMalformed: "invalid bearer token",
	} {
		err := verr(kind, "secret detail", nil)
		st := err.Status()
		assert.EqualValues(t, 401, st.ErrStatus.Code)
		assert.Equal(t, msg, st.ErrStatus.Message)
		assert.NotContains(t, st.ErrStatus.Message, "secret detail")
		assert.ErrorIs(t, st, kind, "the status wraps the error")
	}
	require.Nil(t, StatusFor(nil))
	require.EqualValues(t, 500, StatusFor(errors.New("x")).ErrStatus.Code)
	nf := resource.NewNotFound(nil, "x")
	require.Same(t, nf, StatusFor(nf))
}

// An accepted token is byte for byte the signed string: other encodings of the same
// header, payload or signature (unused trailing bits set, '\r' or '\n' inserted, which
// Go's base64 decoder skips and go-jose would accept, padding) are refused.
func TestSecTok_CanonicalEncoding(t *testing.T) {
	for _, alg := range []Algorithm{EdDSA, ES256} {
		t.Run(string(alg), func(t *testing.T) {
			e := newEnv(t, &envOptions{keys: KeySetOptions{Algorithm: alg}})
			ctx := context.Background()
			var variants []string
			for len(variants) < 12 {
				tok := e.token()
				parts := strings.Split(tok, ".")
				for i, p := range parts {
					with := func(np string) string {
						q := append([]string(nil), parts...)
						q[i] = np
						return strings.Join(q, ".")
					}
					mid := len(p) / 2
					variants = append(variants, with(p[:mid]+"\n"+p[mid:]), with(p[:mid]+"\r\n"+p[mid:]), with(p+"\n"), with(p+"=="))
					if r := len(p) % 4; r == 2 || r == 3 {
						last := strings.IndexByte(b64chars, p[len(p)-1])
						variants = append(variants, with(p[:len(p)-1]+string(b64chars[last|1])))
					}
				}
			}
			for _, v := range variants {
				_, err := e.offline.Verify(ctx, v)
				require.Error(t, err, "%q", v)
				var ve *VerifyError
				require.True(t, errors.As(err, &ve))
				require.Contains(t, []error{ErrMalformed, ErrSignature}, ve.Kind)
			}
		})
	}
}
