// Package termsafe is the one place oo-claude makes text safe for a
// terminal: what a transcript, a registry row, an inbox line or a binary's
// output holds is shown, never obeyed.
//
// Control characters (C0 but newline and tab, DEL, C1), Unicode format
// characters (category Cf: the bidi overrides and isolates, zero-width
// characters), line and paragraph separators and bytes that are not UTF-8
// are written as visible escapes: \x1b, \r, \u202e, \xff. Everything else,
// emoji included, passes as it is. Machine output (--json) does not go
// through here: it keeps the exact text.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character a terminal could act on written as
// a visible escape. Newlines and tabs are kept.
func Escape(s string) string {
	if safe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafe reports a rune past ASCII that Escape writes as \uXXXX.
func unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// safe is the fast path: printable ASCII, newlines, tabs and runes that
// need no escape.
func safe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			for _, r := range s[i:] {
				if r == utf8.RuneError || r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || unsafe(r) {
					return false
				}
			}
			return utf8.ValidString(s[i:])
		}
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// Writer escapes everything written through it (see [Escape]). Give it
// whole strings or lines: a character split across two writes is escaped as
// bytes that are not UTF-8.
type Writer struct{ W io.Writer }

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{W: w} }

// Write writes p escaped and reports len(p) when all of it was written.
func (w *Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.W, Escape(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// UTF8Locale reports whether the locale's character set is UTF-8: the
// first of LC_ALL, LC_CTYPE and LANG that getenv gives names it. Outside
// UTF-8 the views draw in ASCII.
func UTF8Locale(getenv func(string) string) bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}
