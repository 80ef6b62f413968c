package store

// NameRule says which names ValidName accepts, for error messages.
const NameRule = "1..128 characters of A-Z a-z 0-9 . _ : -"

// maxNameLen is the longest name ValidName accepts.
const maxNameLen = 128

// ValidName reports whether s may name a queue, a kind or a webhook hook:
// API.md's 1..128 characters of A-Z a-z 0-9 . _ : -.
//
// Every name that comes from outside (an API request, a dashboard URL or
// form, the hooks file) must pass it before it reaches a Store, and this is
// the one place the rule lives. Backends build keys from names (Redis puts a
// queue's name between the braces of its keys), so a name holding '{' or '}'
// could address the keys of another queue.
func ValidName(s string) bool {
	if len(s) < 1 || len(s) > maxNameLen {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}
