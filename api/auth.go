package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Role is what a token may do (API.md, "Auth and roles"): admin anything,
// producer enqueue and read, worker enqueue, read and the worker protocol.
type Role string

const (
	RoleAdmin    Role = "admin"
	RoleProducer Role = "producer"
	RoleWorker   Role = "worker"
)

// Token is a bearer token and its role.
type Token struct {
	Secret string
	Role   Role
}

// ParseTokens reads "secret:role" entries separated by commas or lines
// (the --tokens and --tokens-file syntax); blank lines and lines starting
// with # are skipped. A secret may hold ":" (the role is after the last
// one) but no comma or white space. Errors name the entry by position and
// never quote a secret.
func ParseTokens(s string) ([]Token, error) {
	var out []Token
	seen := map[string]bool{}
	n := 0
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for entry := range strings.SplitSeq(line, ",") {
			n++
			entry = strings.TrimSpace(entry)
			i := strings.LastIndexByte(entry, ':')
			if i < 0 {
				return nil, fmt.Errorf("token %d: want secret:role", n)
			}
			secret, role := entry[:i], Role(entry[i+1:])
			switch {
			case role != RoleAdmin && role != RoleProducer && role != RoleWorker:
				return nil, fmt.Errorf("token %d: role must be admin, producer or worker, not %q", n, role)
			case secret == "" || strings.ContainsFunc(secret, isSpace):
				return nil, fmt.Errorf("token %d: the secret must be non-empty, without white space", n)
			case seen[secret]:
				return nil, fmt.Errorf("token %d: the same secret is given twice", n)
			}
			seen[secret] = true
			out = append(out, Token{Secret: secret, Role: role})
		}
	}
	return out, nil
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// credential is a configured token: its digest, role and rate bucket. Only
// digests are kept, so comparisons are between equal lengths.
type credential struct {
	digest [sha256.Size]byte
	// key is the digest as a string: the token's key in per-token counts
	// and its id for AuthThrottle.
	key    string
	role   Role
	bucket *bucket
}

// credentials is the configured token set; empty means no auth at all.
type credentials []*credential

func newCredentials(tokens []Token, limits map[Role]RateLimit) credentials {
	out := make(credentials, len(tokens))
	for i, t := range tokens {
		d := sha256.Sum256([]byte(t.Secret))
		out[i] = &credential{digest: d, key: string(d[:]), role: t.Role, bucket: newBucket(limits[t.Role])}
	}
	return out
}

// lookup returns the credential of secret, or nil. It compares against
// every token in constant time, so neither which token matched nor how
// much of one matched shows in the timing.
func (cs credentials) lookup(secret string) *credential {
	d := sha256.Sum256([]byte(secret))
	var found *credential
	for _, c := range cs {
		if subtle.ConstantTimeCompare(d[:], c.digest[:]) == 1 {
			found = c
		}
	}
	return found
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
// Nothing else is a credential for the API: not a cookie, not a query.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// credentialOf returns the credential of r's bearer token, nil without
// one the server knows.
func (a *API) credentialOf(r *http.Request) *credential {
	secret, ok := bearer(r)
	if !ok {
		return nil
	}
	return a.creds.lookup(secret)
}

// allow admits requests made with a token of one of roles, within its rate
// limit. Without configured tokens it admits every request.
func (a *API) allow(roles ...Role) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a.authorize(w, r, roles...) {
				next.ServeHTTP(w, r)
			}
		})
	}
}

// authorize answers 429 rate_limited to an address over its failed
// authentications (AuthThrottle), 401 unauthorized without a known token,
// 403 forbidden for another role, and 429 over the token's rate; then it
// returns false. The token itself is never logged.
func (a *API) authorize(w http.ResponseWriter, r *http.Request, roles ...Role) bool {
	if len(a.creds) == 0 {
		return true
	}
	secret, ok := bearer(r)
	var c *credential
	if ok {
		c = a.creds.lookup(secret)
		var id string
		if c != nil {
			id = c.key
		}
		if wait, allowed := a.cfg.AuthThrottle.Try(r.RemoteAddr, id, a.now()); !allowed {
			a.refuse(r, codeRateLimited, "")
			tooMany(w, wait, fmt.Sprintf("too many failed authentications from this address; retry in %ss", retryAfter(wait)))
			return false
		}
	}
	if c == nil {
		a.refuse(r, codeUnauthorized, "")
		w.Header().Set("WWW-Authenticate", `Bearer realm="tether"`)
		writeProblem(w, newProblem(codeUnauthorized, "a bearer token is required: Authorization: Bearer <token>"))
		return false
	}
	if !slices.Contains(roles, c.role) {
		a.refuse(r, codeForbidden, c.role)
		writeProblem(w, newProblem(codeForbidden, fmt.Sprintf("a %s token may not call %s %s", c.role, r.Method, r.URL.EscapedPath())))
		return false
	}
	if wait, ok := c.bucket.take(a.now()); !ok {
		a.refuse(r, codeRateLimited, c.role)
		tooMany(w, wait, fmt.Sprintf("this token's rate limit is exceeded; retry in %ss", retryAfter(wait)))
		return false
	}
	return true
}

// refuse logs a refused request, at Warn: who tried what, never with what.
func (a *API) refuse(r *http.Request, code string, role Role) {
	args := []any{"code", code, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr}
	if role != "" {
		args = append(args, "role", string(role))
	}
	a.log.WarnContext(r.Context(), "request refused", args...)
}
