package termsafe

import (
	"bytes"
	"testing"
)

func TestEscape(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab"},
		{"[mama 📡] héllo", "[mama 📡] héllo"},
		{"\x1b]0;owned\x07title", `\x1b]0;owned\x07title`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"cr\rover", `cr\rover`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"abc\u202edcba", `abc\u202edcba`},
		{"iso\u2066x\u2069", `iso\u2066x\u2069`},
		{"zw\u200bj\u200d", `zw\u200bj\u200d`},
		{"bom\ufeff", `bom\ufeff`},
		{"ls\u2028ps\u2029", `ls\u2028ps\u2029`},
		{"bad\xff\xfe", `bad\xff\xfe`},
	}
	for _, c := range cases {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	n, err := w.Write([]byte("a\x1bb\n"))
	if err != nil || n != 4 || b.String() != "a\\x1bb\n" {
		t.Fatalf("wrote %d %v: %q", n, err, b.String())
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "x", "\x1b]0;t\x07", "\u202e", "\xff", "📡\n\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		for _, r := range out {
			if r == '\n' || r == '\t' {
				continue
			}
			if r < 0x20 || r == 0x7f || unsafe(r) || r == 0xfffd && !bytes.ContainsRune([]byte(s), 0xfffd) {
				t.Fatalf("Escape(%q) = %q holds %U", s, out, r)
			}
		}
		if Escape(out) != out {
			t.Fatalf("Escape is not idempotent on %q", s)
		}
	})
}

// The locale is LC_ALL's, else LC_CTYPE's, else LANG's: the first set.
func TestUTF8Locale(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"LANG": "C.UTF-8"}, true},
		{map[string]string{"LANG": "en_US.utf8"}, true},
		{map[string]string{"LANG": "C"}, false},
		{map[string]string{"LC_ALL": "C", "LANG": "C.UTF-8"}, false},
		{map[string]string{"LC_CTYPE": "de_DE.UTF-8", "LANG": "C"}, true},
		{map[string]string{"LC_ALL": "en_GB.UTF-8", "LC_CTYPE": "C"}, true},
	} {
		if got := UTF8Locale(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %v, want %v", c.env, got, c.want)
		}
	}
}
