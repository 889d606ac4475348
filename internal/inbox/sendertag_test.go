package inbox_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// tagOracle is the sender-tag rule as the regular expression the contract
// states it with (what SenderTag compiled before it was written out).
var tagOracle = regexp.MustCompile(`^\[([^\[\]]{1,80}?) ` + inboxv1.Antenna + `(?: [^\[\]]*)?\]`)

func oracleTag(line string) (string, bool) {
	m := tagOracle.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// tagCases are lines at the rule's edges: the sender's length (1, 80 and
// 81 characters, multibyte ones), the fewest characters that fit, a mark
// not followed by a space or the end, brackets inside, invalid UTF-8,
// newlines, tags that do not start the line.
func tagCases() []string {
	a := inboxv1.Antenna
	out := []string{
		"", "[", "]", "[]", "[ " + a + "]", "[x " + a + "]", "[x " + a + "] hi", "[x " + a + " PONG 🐉] hi",
		"[x " + a + "x] hi", "[x " + a + " ] hi", "[x " + a + "  ] hi", "[x  " + a + "] hi", "[ x " + a + "] hi",
		"[a " + a + " b " + a + "] hi", "[a " + a + "x b " + a + "] hi", "[a " + a + "x b " + a + "x] hi",
		"[a [b " + a + "] hi", "[a] " + a + "] hi", "x[a " + a + "] hi", " [a " + a + "] hi",
		"[a " + a, "[a " + a + " b", "[a \xf0\x9f\x93] hi", "[\xff " + a + "] hi", "[\xff\xfe " + a + " \xff] hi",
		"[a\n " + a + "] hi", "[a " + a + "\n] hi", "[a " + a + " \n] hi", "[\t " + a + "] hi",
		"[" + a + " " + a + "] hi", "[" + a + "] hi", "[  " + a + "] hi", "[é " + a + "] hi",
		"[mama 📡] [papa 📡] hi", "[zai 📡 PONG 🐉]", "[x 📡]]", "[x 📡][", "[[x 📡]",
	}
	for _, n := range []int{79, 80, 81} {
		for _, c := range []string{"x", "é", "🐉", "\xff", " "} {
			s := strings.Repeat(c, n)
			out = append(out, "["+s+" "+a+"] hi", "["+s+" "+a+" more] hi", "[y"+s+" "+a+"] hi")
		}
	}
	// A mark after 79 characters, then one after 81: the first fits.
	out = append(out, "["+strings.Repeat("x", 78)+" "+a+" "+strings.Repeat("y", 2)+" "+a+"] hi")
	out = append(out, "["+strings.Repeat("x", 80)+" "+a+"x "+a+"] hi")
	return out
}

// TestSenderTagIsTheRule holds the written-out matcher to the regular
// expression on lines at the rule's edges.
func TestSenderTagIsTheRule(t *testing.T) {
	t.Parallel()
	for _, line := range append(tagCases(), lineSeeds...) {
		gotFrom, gotOK := inbox.SenderTag(line)
		wantFrom, wantOK := oracleTag(line)
		if gotFrom != wantFrom || gotOK != wantOK {
			t.Errorf("SenderTag(%q) = %q, %v; the rule says %q, %v", line, gotFrom, gotOK, wantFrom, wantOK)
		}
	}
}

// FuzzSenderTagIsTheRule is TestSenderTagIsTheRule on any line.
func FuzzSenderTagIsTheRule(f *testing.F) {
	for _, s := range tagCases() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		gotFrom, gotOK := inbox.SenderTag(line)
		wantFrom, wantOK := oracleTag(line)
		if gotFrom != wantFrom || gotOK != wantOK {
			t.Fatalf("SenderTag(%q) = %q, %v; the rule says %q, %v", line, gotFrom, gotOK, wantFrom, wantOK)
		}
		if loc := tagOracle.FindStringIndex(line); loc != nil && strings.TrimSpace(line[loc[1]:]) == "" && inbox.CheckLine([]byte(line)) == nil {
			t.Fatalf("CheckLine accepted the tag-only line %q", line)
		}
	})
}

// TestSenderTagAllocates holds a send's tag check to no allocation: it
// runs once in every send process, where a compiled expression was built
// on first use (a tenth of the process's own work).
func TestSenderTagAllocates(t *testing.T) {
	line := "[mama " + inboxv1.Antenna + "] what is the status of the build?"
	if n := testing.AllocsPerRun(100, func() { inbox.SenderTag(line) }); n != 0 {
		t.Errorf("SenderTag allocates %.0f times a call; want 0", n)
	}
}
