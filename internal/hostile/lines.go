package hostile

import "strings"

// Lines returns the lines a sender or a doorman must refuse or carry
// whole: empty, blank, tagged, multi-line, CR, NUL, invalid UTF-8,
// structured lines with hostile keys, and one byte over maxLineBytes.
// The inbox fuzz tests seed from it.
func Lines(maxLineBytes int) []string {
	return []string{
		"", " ", "hello", "[x 📡] hi", "[zai 📡 PONG 🐉] pong", "two\nlines", "cr\rhere", "nul\x00", "\xff\xfe",
		`{"v":1,"id":"x","ts":"2026-11-30T12:00:00Z","from":"zai","line":"PONG"}`,
		`{"v":1,"from":"a]b[c","line":"x"}`, `{"line":"a\nb"}`, `{"from":"` + strings.Repeat("é", 90) + `","line":"x"}`,
		`{"from":"\u0000","line":"[y 📡] z"}`, `{"from":"\ufffd","line":"x"}`, "[\uFFFD 📡] x", strings.Repeat("x", maxLineBytes+1),
	}
}
