package api

import "github.com/tetherq/tether/store"

// parseAcks reads the settle body workers send most: acks only, each item
// just an id and a token, {"acks":[{"id":"…","token":"…"},…]}. It returns
// ok false for anything else — fails, results, escapes, non-ASCII, a
// repeated or unknown key, a token out of bounds, too many items, bad JSON
// — and the caller then decodes the body the general way, which accepts or
// refuses it with its field errors. Where ok, both ways give the same
// params (FuzzSettle checks it). encoding/json decodes each item by
// reflection through its own Decoder; on a batch of 100 that was a fifth
// of the server's CPU under a burn-down.
func parseAcks(data []byte) (p *store.JobSettleParams, ids []string, ok bool) {
	// One string for the body: ids and tokens are slices of it.
	s := ackScanner{data: string(data)}
	if !s.byte('{') || !s.key("acks") || !s.byte('[') {
		return nil, nil, false
	}
	p = &store.JobSettleParams{Acks: make([]store.JobAckParams, 0, 128)}
	ids = make([]string, 0, 128)
	for {
		id, token, ok := s.item()
		if !ok || len(p.Acks) == maxItems {
			return nil, nil, false
		}
		p.Acks = append(p.Acks, store.JobAckParams{ID: id, Token: token})
		ids = append(ids, id)
		if s.byte(']') {
			break
		}
		if !s.byte(',') {
			return nil, nil, false
		}
	}
	if !s.byte('}') {
		return nil, nil, false
	}
	s.space()
	return p, ids, s.i == len(s.data)
}

// ackScanner walks data one JSON token at a time; i is the next byte.
type ackScanner struct {
	data string
	i    int
}

// space skips JSON whitespace.
func (s *ackScanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c after any whitespace, if it is next.
func (s *ackScanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str consumes a string of printable ASCII without escapes.
func (s *ackScanner) str() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	start := s.i
	for ; s.i < len(s.data); s.i++ {
		switch c := s.data[s.i]; {
		case c == '"':
			v := s.data[start:s.i]
			s.i++
			return v, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", false
		}
	}
	return "", false
}

// key consumes "name" and the colon after it.
func (s *ackScanner) key(name string) bool {
	k, ok := s.str()
	return ok && k == name && s.byte(':')
}

// item consumes {"id":"…","token":"…"} with the keys in either order.
func (s *ackScanner) item() (id, token string, ok bool) {
	if !s.byte('{') {
		return "", "", false
	}
	var haveID, haveToken bool
	for range 2 {
		k, ok := s.str()
		if !ok || !s.byte(':') {
			return "", "", false
		}
		v, ok := s.str()
		switch {
		case !ok:
			return "", "", false
		case k == "id" && !haveID:
			id, haveID = v, true
		case k == "token" && !haveToken:
			token, haveToken = v, true
		default:
			return "", "", false
		}
		if !haveID || !haveToken {
			if !s.byte(',') {
				return "", "", false
			}
		}
	}
	return id, token, s.byte('}') && len(token) >= 1 && len(token) <= maxTokenLen
}
