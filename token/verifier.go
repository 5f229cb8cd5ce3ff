package token

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Bounds of verification.
const (
	// DefaultLeeway is the clock skew a verifier allows by default.
	DefaultLeeway = 60 * time.Second
	// MaxLeeway is the largest leeway a verifier allows; larger settings are capped.
	MaxLeeway = 60 * time.Second
	// DefaultMaxTokenBytes is the largest token a verifier parses by default (8 KiB,
	// the usual cap of an Authorization header). Longer input is refused before any
	// parsing.
	DefaultMaxTokenBytes = 8 << 10
	// MaxHeaderBytes is the largest encoded header a verifier parses. The header is
	// read before the signature is checked, so its size bounds the work an
	// unauthenticated input can cause; the header of a token of this package has
	// about 100 bytes.
	MaxHeaderBytes = 1 << 10
	// maxTimestamp is 9999-12-31T23:59:59Z, the last second RFC 3339 can write.
	maxTimestamp = 253402300799
)

// RevocationChecker is the online part of verification: it is asked about a token
// whose signature and claims hold, and answers nil when it still stands, an error
// matching [ErrRevoked] when it was revoked, or any other error when it cannot tell
// (the verifier then refuses the token with [ErrCheckFailed]). [StoreRevocation] is
// the implementation over the store. Without one, verification is offline: it needs
// nothing but the keys.
type RevocationChecker interface {
	// CheckRevocation checks the verified claims c.
	CheckRevocation(ctx context.Context, c *Claims) error
}

// VerifierOptions configure a [Verifier]. Issuer is required; the zero value of every
// other field is its default.
type VerifierOptions struct {
	// Issuer is the "iss" every token must carry.
	Issuer string
	// Audiences are the names of this verifier (a connected cluster's endpoint, say).
	// When set, a token must carry an "aud" that names one of them; when empty, a
	// token that carries an "aud" is refused (RFC 7519 §4.1.3: it is bound to someone
	// else).
	Audiences []string
	// Algorithms is the allow-list of "alg" values; nil means EdDSA and ES256. Any
	// other value ("none", HS256, RS256, ES384, ...) is refused before a key is looked
	// up.
	Algorithms []Algorithm
	// Type is the required header "typ"; "" means [TokenType].
	Type string
	// Leeway is the clock skew allowed on exp, nbf and iat: 0 means DefaultLeeway, a
	// negative value means none, and values above MaxLeeway are capped at it.
	Leeway time.Duration
	// MaxTokenBytes is the largest token parsed; 0 means DefaultMaxTokenBytes.
	MaxTokenBytes int
	// MaxLifetime bounds exp - iat; a token that claims a longer life is refused as
	// [ErrInvalidClaim]. 0 means DefaultMaxTTL.
	MaxLifetime time.Duration
	// Now is the verifier's clock; nil means time.Now.
	Now func() time.Time
	// Revocation, when set, is asked about every token that passes the offline checks.
	Revocation RevocationChecker
}

// Verifier checks tokens offline against a [KeySource], and online through an optional
// [RevocationChecker]. It is safe for concurrent use.
//
// The checks, in order, each giving its own sentinel (see [VerifyError]):
//
//  1. size: at most MaxTokenBytes, before any parsing ([ErrMalformed]);
//  2. shape: three parts separated by dots, header and payload in canonical
//     unpadded base64url (no other character, no padding, zero unused bits), a header
//     of at most [MaxHeaderBytes] ([ErrMalformed]); the signature's canonical
//     encoding of 64 bytes is checked before it is verified ([ErrSignature]);
//  3. header: a JSON object whose "alg" is in the allow-list ([ErrAlgorithm]), with no
//     parameter but alg, kid and typ ([ErrHeader]: jwk, jku, x5u, x5c, x5t, crit and
//     anything else are refused, never read), "typ" equal to the verifier's type
//     ([ErrType]) and a string "kid" found in the key source for the header's
//     algorithm ([ErrUnknownKey]);
//  4. signature, with that key only, through go-jose ([ErrSignature]); the signature
//     must be canonically encoded;
//  5. claims, only now read: their JSON types ([ErrMalformed]); iss, sub, iat, nbf,
//     exp, jti and "management.service" present ([ErrMissingClaim]); iss
//     ([ErrIssuer]); aud ([ErrAudience]); exp after iat, nbf not after exp, exp - iat
//     at most MaxLifetime ([ErrInvalidClaim]); now < exp + leeway ([ErrExpired]);
//     nbf and iat ≤ now + leeway ([ErrNotYetValid]); the scope's compact form
//     ([ErrMalformed]);
//  6. the online check, when configured ([ErrRevoked], [ErrCheckFailed]).
type Verifier struct {
	keys     KeySource
	opts     VerifierOptions
	leeway   time.Duration
	allowed  map[Algorithm][]jose.SignatureAlgorithm
	quoted   map[string]Algorithm // `"EdDSA"` → EdDSA: alg as it appears in the header
	maxBytes int
	tooLarge string // the detail of ErrMalformed for a token over maxBytes
	maxLife  time.Duration
	typ      string
}

// NewVerifier returns a verifier of the tokens signed by the keys of keys.
func NewVerifier(keys KeySource, opts VerifierOptions) (*Verifier, error) {
	if keys == nil {
		return nil, errors.New("token: NewVerifier needs a key source")
	}
	if opts.Issuer == "" {
		return nil, errors.New("token: VerifierOptions.Issuer is required")
	}
	v := &Verifier{keys: keys, opts: opts, allowed: map[Algorithm][]jose.SignatureAlgorithm{}, quoted: map[string]Algorithm{}}
	algs := opts.Algorithms
	if algs == nil {
		algs = []Algorithm{EdDSA, ES256}
	}
	if len(algs) == 0 {
		return nil, errors.New("token: VerifierOptions.Algorithms is empty")
	}
	for _, a := range algs {
		if !a.valid() {
			return nil, fmt.Errorf("token: algorithm %q cannot be allowed (only %s and %s)", a, EdDSA, ES256)
		}
		v.allowed[a] = []jose.SignatureAlgorithm{jose.SignatureAlgorithm(a)}
		v.quoted[strconv.Quote(string(a))] = a
	}
	switch {
	case opts.Leeway == 0:
		v.leeway = DefaultLeeway
	case opts.Leeway < 0:
		v.leeway = 0
	case opts.Leeway > MaxLeeway:
		v.leeway = MaxLeeway
	default:
		v.leeway = opts.Leeway
	}
	v.maxBytes = opts.MaxTokenBytes
	if v.maxBytes <= 0 {
		v.maxBytes = DefaultMaxTokenBytes
	}
	v.tooLarge = "the token is larger than " + strconv.Itoa(v.maxBytes) + " bytes"
	v.maxLife = opts.MaxLifetime
	if v.maxLife <= 0 {
		v.maxLife = DefaultMaxTTL
	}
	v.typ = opts.Type
	if v.typ == "" {
		v.typ = TokenType
	}
	v.opts.Audiences = slices.Clone(opts.Audiences)
	return v, nil
}

// Leeway returns the leeway in force, after the default and the cap.
func (v *Verifier) Leeway() time.Duration { return v.leeway }

// strict decodes base64url without padding and refuses non-zero trailing bits, so that
// a part has exactly one encoding.
var strict = base64.RawURLEncoding.Strict()

// sigSize is the size of an Ed25519 and of a P-256 JWS signature: 64 bytes.
const sigSize = 64

// Verify checks a token and returns its claims, or a [*VerifyError] whose Kind says
// which check failed (see [Verifier] for the order). ctx is used only by the online
// check.
func (v *Verifier) Verify(ctx context.Context, token string) (*Claims, error) {
	if len(token) > v.maxBytes {
		return nil, verr(ErrMalformed, v.tooLarge, nil)
	}
	headSeg, rest, ok1 := strings.Cut(token, ".")
	paySeg, sigSeg, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.IndexByte(sigSeg, '.') >= 0 {
		return nil, verr(ErrMalformed, "not a JWS compact serialization (three parts separated by dots)", nil)
	}
	// go-jose checks the signature over a re-encoding of the decoded header and
	// payload, not over the text received, and Go's base64 decoder skips '\r' and
	// '\n' and ignores unused trailing bits: without this check, other strings than
	// the one signed (same content) would verify.
	if !canonical(headSeg) || !canonical(paySeg) {
		return nil, verr(ErrMalformed, "a part is not canonical unpadded base64url", nil)
	}
	if len(headSeg) > MaxHeaderBytes {
		return nil, verr(ErrMalformed, "the header is larger than MaxHeaderBytes (1 KiB)", nil)
	}
	alg, kid, herr := v.header(headSeg)
	if herr != nil {
		return nil, herr
	}
	key, keyAlg, ok := v.keys.VerificationKey(kid)
	if !ok {
		return nil, verr(ErrUnknownKey, "no key with kid "+clip(kid), nil)
	}
	if keyAlg != alg {
		return nil, verr(ErrUnknownKey, "key "+clip(kid)+" is an "+string(keyAlg)+" key, the token says "+string(alg), nil)
	}
	// The length first: Decode writes into a 64-byte array.
	var sig [sigSize]byte
	if len(sigSeg) != strict.EncodedLen(sigSize) {
		return nil, verr(ErrSignature, "the signature is not 64 bytes", nil)
	}
	if n, err := strict.Decode(sig[:], []byte(sigSeg)); err != nil || n != sigSize {
		return nil, verr(ErrSignature, "the signature is not a canonical base64url value", err)
	}
	jws, err := jose.ParseSignedCompact(token, v.allowed[alg])
	if err != nil {
		return nil, verr(ErrMalformed, "JWS", err)
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return nil, verr(ErrSignature, "with key "+clip(kid), err)
	}
	c, cerr := v.claims(payload)
	if cerr != nil {
		return nil, cerr
	}
	c.KeyID, c.Algorithm = kid, alg
	if v.opts.Revocation != nil {
		if err := v.opts.Revocation.CheckRevocation(ctx, c); err != nil {
			var ve *VerifyError
			switch {
			case errors.As(err, &ve) && (ve.Kind == ErrRevoked || ve.Kind == ErrCheckFailed):
				return nil, ve
			case errors.Is(err, ErrRevoked):
				return nil, verr(ErrRevoked, "", err)
			default:
				return nil, verr(ErrCheckFailed, "", err)
			}
		}
	}
	return c, nil
}

// header checks the protected header and returns its alg and kid.
func (v *Verifier) header(seg string) (Algorithm, string, *VerifyError) {
	raw, err := strict.DecodeString(seg)
	if err != nil {
		return "", "", verr(ErrMalformed, "header is not canonical base64url", err)
	}
	var h map[string]json.RawMessage
	if err := json.Unmarshal(raw, &h); err != nil || h == nil {
		return "", "", verr(ErrMalformed, "header is not a JSON object", err)
	}
	algRaw, ok := h["alg"]
	if !ok {
		return "", "", verr(ErrAlgorithm, "no alg", nil)
	}
	alg, ok := v.quoted[string(algRaw)]
	if !ok {
		return "", "", verr(ErrAlgorithm, "alg "+clip(string(algRaw))+" is not allowed", nil)
	}
	for name := range h {
		switch name {
		case "alg", "kid", "typ":
		case "jwk", "jku", "x5u", "x5c", "x5t", "x5t#S256":
			return "", "", verr(ErrHeader, "the header carries "+strconv.Quote(name)+": keys are never taken from a token", nil)
		default:
			return "", "", verr(ErrHeader, "unexpected header parameter "+clip(name), nil)
		}
	}
	var typ string
	if err := json.Unmarshal(h["typ"], &typ); err != nil || !v.typeMatches(typ) {
		return "", "", verr(ErrType, "typ must be "+strconv.Quote(v.typ), nil)
	}
	kidRaw, ok := h["kid"]
	if !ok {
		return "", "", verr(ErrUnknownKey, "no kid", nil)
	}
	var kid string
	if len(kidRaw) == 0 || kidRaw[0] != '"' || json.Unmarshal(kidRaw, &kid) != nil {
		return "", "", verr(ErrUnknownKey, "kid is not a string", nil)
	}
	return alg, kid, nil
}

func (v *Verifier) typeMatches(typ string) bool {
	return strings.EqualFold(typ, v.typ) || strings.EqualFold(typ, "application/"+v.typ)
}

// claims decodes and checks the verified payload.
func (v *Verifier) claims(payload []byte) (*Claims, *VerifyError) {
	var in inClaims
	if err := json.Unmarshal(payload, &in); err != nil {
		return nil, verr(ErrMalformed, "claims", err)
	}
	switch {
	case in.Iss == nil:
		return nil, verr(ErrMissingClaim, "iss", nil)
	case in.Sub == nil || *in.Sub == "":
		return nil, verr(ErrMissingClaim, "sub", nil)
	case in.Iat == nil:
		return nil, verr(ErrMissingClaim, "iat", nil)
	case in.Nbf == nil:
		return nil, verr(ErrMissingClaim, "nbf", nil)
	case in.Exp == nil:
		return nil, verr(ErrMissingClaim, "exp", nil)
	case in.Jti == nil || *in.Jti == "":
		return nil, verr(ErrMissingClaim, "jti", nil)
	case in.MS == nil:
		return nil, verr(ErrMissingClaim, ClaimName, nil)
	case in.MS.Name == "":
		return nil, verr(ErrMissingClaim, ClaimName+".name", nil)
	case in.MS.Rec == "":
		return nil, verr(ErrMissingClaim, ClaimName+".rec", nil)
	}
	if *in.Iss != v.opts.Issuer {
		return nil, verr(ErrIssuer, "iss "+clip(*in.Iss), nil)
	}
	if err := v.audience(in.Aud); err != nil {
		return nil, err
	}
	iat, nbf, exp := *in.Iat, *in.Nbf, *in.Exp
	switch {
	case iat < 0 || nbf < 0 || exp < 0 || iat > maxTimestamp || nbf > maxTimestamp || exp > maxTimestamp:
		return nil, verr(ErrInvalidClaim, "a time claim is outside the years 1970-9999", nil)
	case exp <= iat:
		return nil, verr(ErrInvalidClaim, "exp is not after iat", nil)
	case nbf > exp:
		return nil, verr(ErrInvalidClaim, "nbf is after exp", nil)
	case exp-iat > int64(v.maxLife/time.Second):
		return nil, verr(ErrInvalidClaim, "exp - iat is longer than the maximum lifetime "+v.maxLife.String(), nil)
	}
	now := v.now()
	iatT, nbfT, expT := time.Unix(iat, 0), time.Unix(nbf, 0), time.Unix(exp, 0)
	if !now.Before(expT.Add(v.leeway)) {
		return nil, verr(ErrExpired, "at "+expT.UTC().Format(time.RFC3339), nil)
	}
	if now.Add(v.leeway).Before(nbfT) {
		return nil, verr(ErrNotYetValid, "nbf "+nbfT.UTC().Format(time.RFC3339), nil)
	}
	if now.Add(v.leeway).Before(iatT) {
		return nil, verr(ErrNotYetValid, "issued in the future, at "+iatT.UTC().Format(time.RFC3339), nil)
	}
	scope, err := decodeScope(in.MS.Scope)
	if err != nil {
		return nil, verr(ErrMalformed, "claim "+ClaimName, err)
	}
	c := &Claims{
		Issuer: *in.Iss, Subject: *in.Sub, IssuedAt: iatT, NotBefore: nbfT, Expiry: expT, ID: *in.Jti,
		Management: ManagementClaim{UID: in.MS.UID, Name: in.MS.Name, Kind: in.MS.Kind,
			Generation: in.MS.Gen, Record: in.MS.Rec, Scope: scope,
			AccessKey: in.MS.Key, AccessKeyUID: in.MS.KUID},
	}
	if in.Aud != nil {
		c.Audience = []string(*in.Aud)
	}
	return c, nil
}

func (v *Verifier) audience(aud *audience) *VerifyError {
	if len(v.opts.Audiences) == 0 {
		if aud != nil && len(*aud) > 0 {
			return verr(ErrAudience, "the token is bound to an audience and this verifier has none", nil)
		}
		return nil
	}
	if aud == nil || len(*aud) == 0 {
		return verr(ErrMissingClaim, "aud", nil)
	}
	for _, a := range *aud {
		if slices.Contains(v.opts.Audiences, a) {
			return nil
		}
	}
	return verr(ErrAudience, "the token is bound to another audience", nil)
}

func (v *Verifier) now() time.Time {
	if v.opts.Now != nil {
		return v.opts.Now()
	}
	return time.Now()
}

// b64index maps a base64url character to its value, and every other byte to -1.
var b64index = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" {
		t[c] = int8(i)
	}
	return t
}()

// canonical reports whether s is the one unpadded base64url encoding of some bytes:
// only alphabet characters, a length that is not 1 modulo 4, and zero unused bits in
// the last character.
func canonical(s string) bool {
	for i := 0; i < len(s); i++ {
		if b64index[s[i]] < 0 {
			return false
		}
	}
	switch len(s) % 4 {
	case 1:
		return false
	case 2:
		return b64index[s[len(s)-1]]&0x0f == 0
	case 3:
		return b64index[s[len(s)-1]]&0x03 == 0
	}
	return true
}

// clip quotes attacker-controlled text for an error detail, cut to 64 bytes.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:max]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
