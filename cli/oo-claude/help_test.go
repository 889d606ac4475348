package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/headless"
)

// TestHelpExitCodesFromLibrary: the EXIT CODES of send, resume and start
// name each class the library lists for the verb, on the line of the code
// the library's ExitCode gives it (send's interrupted exits by its signal,
// on the signal lines).
func TestHelpExitCodesFromLibrary(t *testing.T) {
	check := func(verb string, classes []string, codes []int) {
		lines := exitCodes(verb)
		for i, c := range classes {
			prefix := fmt.Sprintf("%d  ", codes[i])
			found := false
			for _, l := range lines {
				if rest, ok := strings.CutPrefix(l, prefix); ok && strings.Contains(", "+rest+",", ", "+c+",") {
					found = true
				}
			}
			if !found {
				t.Errorf("help %s: no exit code line %q naming %s:\n%s", verb, prefix, c, strings.Join(lines, "\n"))
			}
		}
	}
	var names []string
	var codes []int
	for _, c := range claudeinbox.Classes() {
		if c != claudeinbox.Interrupted {
			names, codes = append(names, string(c)), append(codes, c.ExitCode())
		}
	}
	check("send", names, codes)
	for verb, cs := range map[string][]headless.Class{"resume": headless.ResumeClasses(), "start": headless.StartClasses()} {
		names, codes = nil, nil
		for _, c := range cs {
			names, codes = append(names, string(c)), append(codes, c.ExitCode())
		}
		check(verb, names, codes)
	}
	if exitCodes("read") != nil {
		t.Error("read, a verb without verdict classes, has exit code lines")
	}
}
