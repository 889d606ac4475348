package doctor

import (
	"regexp"
	"testing"
)

// claudeVersionRE is the shape isClaudeVersion matches by hand, kept here
// as its oracle.
var claudeVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]* \(Claude Code\)$`)

// FuzzIsClaudeVersion holds isClaudeVersion to the regular expression it
// replaces.
func FuzzIsClaudeVersion(f *testing.F) {
	for _, s := range []string{
		"2.1.332 (Claude Code)", "2.1.332-beta.1+x (Claude Code)", "2.1 (Claude Code)", "2.1. (Claude Code)", ".1.2 (Claude Code)",
		"2.1.332  (Claude Code)", "2.1.332 (Claude Code)\n", "v2.1.332 (Claude Code)", "2.1.332_x (Claude Code)", "2..1.3 (Claude Code)",
		"2.1.3 (Claude Code) (Claude Code)", "10.20.30abc (Claude Code)", " (Claude Code)", "", "2.1.332", "2.1.3é (Claude Code)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isClaudeVersion(s), claudeVersionRE.MatchString(s); got != want {
			t.Fatalf("isClaudeVersion(%q) = %v; the regular expression says %v", s, got, want)
		}
	})
}
