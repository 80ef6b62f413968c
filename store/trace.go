package store

import "errors"

// MaxTraceStateLen bounds a tracestate: W3C caps it at 32 list members, a
// few hundred characters in practice.
const MaxTraceStateLen = 512

// Check reports whether t is a trace Tether keeps: a W3C traceparent of
// version 00 (00-<32 lowercase hex, not all zero>-<16 lowercase hex, not
// all zero>-<2 lowercase hex>) and a tracestate of at most
// MaxTraceStateLen characters.
func (t *Trace) Check() error {
	if !validTraceParent(t.Parent) {
		return errors.New("traceparent must be 00-<32 lowercase hex, not all zero>-<16 lowercase hex, not all zero>-<2 hex>")
	}
	if len(t.State) > MaxTraceStateLen {
		return errors.New("tracestate must be at most 512 characters")
	}
	return nil
}

func validTraceParent(s string) bool {
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' {
		return false
	}
	return lowerHex(s[3:35], true) && lowerHex(s[36:52], true) && lowerHex(s[53:55], false)
}

// lowerHex reports whether s is lowercase hex, and not all zeros when
// nonZero.
func lowerHex(s string, nonZero bool) bool {
	zero := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '0':
		case c >= '1' && c <= '9', c >= 'a' && c <= 'f':
			zero = false
		default:
			return false
		}
	}
	return !(nonZero && zero)
}
