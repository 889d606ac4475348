package claudeinbox_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/claudeinbox"
)

var lineSeeds = []string{
	"", " ", "hello", "[x 📡] hi", "[zai 📡 PONG 🐉] pong", "two\nlines", "cr\rhere", "nul\x00", "\xff\xfe",
	`{"v":1,"id":"x","ts":"2026-11-30T12:00:00Z","from":"zai","line":"PONG"}`,
	`{"v":1,"from":"a]b[c","line":"x"}`, `{"line":"a\nb"}`, `{"from":"` + strings.Repeat("é", 90) + `","line":"x"}`,
	`{"from":"\u0000","line":"[y 📡] z"}`, `{"from":"\ufffd","line":"x"}`, "[\uFFFD 📡] x", strings.Repeat("x", claudeinbox.MaxLineBytes+1),
}

func FuzzCheckLine(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		err := claudeinbox.CheckLine(line)
		if err != nil {
			var le *claudeinbox.LineError
			if !errors.As(err, &le) || le.Bytes != len(line) {
				t.Fatalf("error %v is not a *LineError for %d bytes", err, len(line))
			}
			return
		}
		switch {
		case len(bytes.TrimSpace(line)) == 0:
			t.Fatal("accepted an empty line")
		case bytes.ContainsAny(line, "\n\r\x00"):
			t.Fatal("accepted a newline, carriage return or NUL")
		case len(line) > claudeinbox.MaxLineBytes:
			t.Fatal("accepted a line over 16 KiB")
		case !utf8.Valid(line):
			t.Fatal("accepted invalid UTF-8")
		}
	})
}

// Decode never panics, and what it hands the door always passes the line
// rules, with a sender name that passes the sender rule.
func FuzzDecode(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := claudeinbox.Decode(raw)
		if err != nil {
			return
		}
		if err := claudeinbox.CheckLine([]byte(m.Text)); err != nil {
			t.Fatalf("Decode(%q).Text = %q fails CheckLine: %v", raw, m.Text, err)
		}
		if err := claudeinbox.CheckFrom(m.From); err != nil {
			t.Fatalf("Decode(%q).From = %q fails CheckFrom: %v", raw, m.From, err)
		}
	})
}

func FuzzSenderTag(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add(s, "mama")
	}
	f.Fuzz(func(t *testing.T, line, from string) {
		got, ok := claudeinbox.SenderTag(line)
		if ok {
			if got == "" || strings.ContainsAny(got, "[]") || utf8.RuneCountInString(got) > 80 {
				t.Fatalf("SenderTag(%q) = %q", line, got)
			}
			if claudeinbox.Tagged(line, "other") != line {
				t.Fatalf("Tagged re-tagged a tagged line %q", line)
			}
			return
		}
		if claudeinbox.CheckFrom(from) != nil || strings.Contains(from, claudeinbox.Antenna) {
			return
		}
		tagged := claudeinbox.Tagged(line, from)
		if got, ok := claudeinbox.SenderTag(tagged); !ok || got != from {
			t.Fatalf("SenderTag(Tagged(%q, %q)) = %q, %v", line, from, got, ok)
		}
	})
}
