package token

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

// bothKeys looks a kid up in two key sets.
type bothKeys [2]KeySource

func (b bothKeys) VerificationKey(kid string) (crypto.PublicKey, Algorithm, bool) {
	for _, s := range b {
		if k, a, ok := s.VerificationKey(kid); ok {
			return k, a, true
		}
	}
	return nil, "", false
}

// FuzzVerify: Verify never panics, every refusal is a *VerifyError, and only tokens
// the issuer signed verify. EdDSA signatures are deterministic and their encoding is
// checked to be canonical, so an accepted EdDSA token is byte for byte one we
// minted. ECDSA signatures are malleable ((r, s) and (r, n-s) both verify), so an
// accepted ES256 token must carry a header and payload we signed.
//
//	go test -run '^$' -fuzz FuzzVerify -fuzztime 60s ./token/
func FuzzVerify(f *testing.F) {
	ed := newEnv(f, nil)
	es := newEnv(f, &envOptions{keys: KeySetOptions{Algorithm: ES256}})
	v, err := NewVerifier(bothKeys{ed.keys, es.keys}, VerifierOptions{Issuer: testIssuer, Now: ed.f.Clock.Now,
		Audiences: []string{"cluster-a"}})
	require.NoError(f, err)
	exact := map[string]bool{}
	signedParts := map[string]bool{}
	mint := func(e *env, req *resource.DirectClusterEndpointToken, c Caller, aud []string) {
		out, err := e.issuer.Issue(context.Background(), req, c, IssueOptions{Audience: aud})
		require.NoError(f, err)
		tok := out.Status.Token
		exact[tok] = true
		signedParts[tok[:strings.LastIndexByte(tok, '.')]] = true
		f.Add(tok)
	}
	for _, e := range []*env{ed, es} {
		for _, s := range tenEntryScopes() {
			c := alice()
			c.Scope = s
			mint(e, dcet(0, nil), c, []string{"cluster-a"})
		}
		mint(e, dcet(60, nil), Caller{Name: "root"}, []string{"cluster-b", "cluster-a"})
		mint(e, dcet(0, &resource.AccessKeyScope{Rules: []resource.AccessKeyScopeRule{{Verbs: []string{"get"}}}}), Caller{Name: "root"}, []string{"cluster-a"})
	}
	// Regression seeds: a genuine header and payload with a signature of another
	// length (Verify once decoded the signature into a 64-byte array before checking
	// the length, and panicked on a longer one).
	for tok := range exact {
		i := strings.LastIndexByte(tok, '.')
		for _, n := range []int{0, 85, 87, 88, 200} {
			f.Add(tok[:i+1] + strings.Repeat("A", n))
		}
		f.Add(tok + "A")
		f.Add(tok[:len(tok)-1])
	}
	kid := ed.keys.SigningKey().ID()
	payload := string(ed.claimsJSON(ed.f.Clock.Now(), map[string]any{"aud": "cluster-a"}))
	for _, s := range []string{
		"", ".", "..", "...", "a.b.c", strings.Repeat(".", 100),
		handToken(`{"alg":"none","kid":"`+kid+`","typ":"dcet+jwt"}`, payload, ""),
		handToken(`{"alg":"HS256","kid":"`+kid+`","typ":"dcet+jwt"}`, payload, "c2ln"),
		handToken(`{"alg":"EdDSA","kid":"`+kid+`","typ":"dcet+jwt","jwk":{"kty":"OKP"}}`, payload, strings.Repeat("A", 86)),
		handToken(`{"alg":"EdDSA","kid":"../../etc/passwd","typ":"dcet+jwt"}`, payload, strings.Repeat("A", 86)),
		handToken(`{"alg":"EdDSA","kid":7,"typ":"dcet+jwt"}`, payload, strings.Repeat("A", 86)),
		handToken(`{"alg":"EdDSA","kid":"`+kid+`","typ":"dcet+jwt"}`, payload, strings.Repeat("A", 86)),
		handToken(`{"alg":"EdDSA","kid":"`+kid+`","typ":"dcet+jwt","x":[[[[[[]]]]]]}`, payload, strings.Repeat("A", 86)),
		handToken(`[`, `{`, "AAAA"),
	} {
		f.Add(s)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := v.Verify(ctx, tok)
		if err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) || c != nil {
				require.FailNow(t, fmt.Sprintf("refusal is not a *VerifyError (or came with claims): %T %v", err, err))
			}
			return
		}
		if c == nil {
			require.FailNow(t, "nil claims without an error")
		}
		if exact[tok] {
			return
		}
		dot := strings.LastIndexByte(tok, '.')
		if c.Algorithm == ES256 && dot > 0 && signedParts[tok[:dot]] {
			return // another encoding of an ECDSA signature of our own header and payload
		}
		require.FailNow(t, fmt.Sprintf("a token we did not sign verified: %q", tok))
	})
}

// FuzzVerifyMutation starts from tokens the issuer signed and changes them the way an
// attacker would: one byte replaced, then the token cut and something appended. Any
// result other than the original token must be refused (and never panic).
//
//	go test -run '^$' -fuzz FuzzVerifyMutation -fuzztime 60s ./token/
func FuzzVerifyMutation(f *testing.F) {
	ed := newEnv(f, nil)
	es := newEnv(f, &envOptions{keys: KeySetOptions{Algorithm: ES256}})
	v, err := NewVerifier(bothKeys{ed.keys, es.keys}, VerifierOptions{Issuer: testIssuer, Now: ed.f.Clock.Now})
	require.NoError(f, err)
	var minted []string
	for _, e := range []*env{ed, es} {
		minted = append(minted, e.token())
		c := alice()
		c.Scope = tenEntryScopes()["mixed, with allowServiceCli"]
		minted = append(minted, e.issue(dcet(0, nil), c).Status.Token)
	}
	f.Add(uint8(0), uint16(0), byte('A'), uint16(0xffff), "")
	f.Add(uint8(1), uint16(700), byte('.'), uint16(0xffff), "")
	f.Add(uint8(2), uint16(5), byte('x'), uint16(0xffff), "AAAA")
	f.Add(uint8(3), uint16(9999), byte(0), uint16(600), ".e30")
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, which uint8, pos uint16, b byte, cut uint16, suffix string) {
		orig := minted[int(which)%len(minted)]
		tok := []byte(orig)
		if int(pos) < len(tok) {
			tok[pos] = b
		}
		if int(cut) < len(tok) {
			tok = tok[:cut]
		}
		tok = append(tok, suffix...)
		c, err := v.Verify(ctx, string(tok))
		if string(tok) == orig {
			if err != nil {
				require.NoError(t, err, "the original token was refused")
			}
			return
		}
		if err == nil || c != nil {
			require.FailNow(t, fmt.Sprintf("a changed token verified: %q", tok))
		}
		var ve *VerifyError
		if !errors.As(err, &ve) {
			require.FailNow(t, fmt.Sprintf("refusal is not a *VerifyError: %T %v", err, err))
		}
	})
}
