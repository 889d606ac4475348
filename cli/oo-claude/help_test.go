package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/internal/doormancmd"
)

// TestHelpExitCodesFromLibrary: the EXIT CODES of send, resume and start
// name each class the library lists for the verb, on the line of the code
// the library's ExitCode gives it (send's interrupted exits by its signal,
// on the signal lines).
func TestHelpExitCodesFromLibrary(t *testing.T) {
	check := func(verb string, classes []string, codes []int) {
		lines := exitCodes(verb, true)
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
	if got := strings.Join(exitCodes("read", true), "\n"); !strings.HasPrefix(got, "0  done\n1  something could not be read or done\n2  usage") || !strings.HasSuffix(got, "255  ssh itself failed (--host): nothing is known of the verb's outcome") {
		t.Errorf("read's exit codes:\n%s", got)
	}
	if got := strings.Join(exitCodes("version", false), "\n"); strings.Contains(got, "255") {
		t.Errorf("version, a verb without --host, lists ssh's exit code:\n%s", got)
	}
}

// TestHelpEveryVerbHasExitCodes: help VERB prints exit codes for every
// verb (README: "help VERB prints a verb's usage, flags and exit codes"),
// 255 exactly for the verbs that take --host, and the doorman's
// foreground codes are doormancmd's.
func TestHelpEveryVerbHasExitCodes(t *testing.T) {
	for _, v := range verbsFor(nil) {
		r := runInProcess(t, func(string) string { return "" }, "", "help", v.name)
		if r.code != 0 || !strings.Contains(r.stdout, "\nEXIT CODES\n") {
			t.Errorf("help %s: exit %d, no EXIT CODES:\n%s", v.name, r.code, r.stdout)
			continue
		}
		if strings.Contains(r.stdout, "--host") != strings.Contains(r.stdout, "\n  255  ") {
			t.Errorf("help %s: --host and the 255 line do not go together:\n%s", v.name, r.stdout)
		}
	}
	r := runInProcess(t, func(string) string { return "" }, "", "help", "doorman")
	if !strings.Contains(r.stdout, fmt.Sprintf("\n  %d  a delivery failed", doormancmd.ExitDeliveryFailed)) {
		t.Errorf("help doorman: no line for doormancmd.ExitDeliveryFailed (%d):\n%s", doormancmd.ExitDeliveryFailed, r.stdout)
	}
}

// TestHelpArguments: help's own help is the list of verbs; an extra word
// after a verb, or an unknown subcommand, is a usage error that says so.
func TestHelpArguments(t *testing.T) {
	none := func(string) string { return "" }
	for _, a := range []string{"-h", "--help", "help"} {
		if r := runInProcess(t, none, "", "help", a); r.code != 0 || !strings.Contains(r.stdout, "VERBS") {
			t.Errorf("help %s: exit %d stdout %q", a, r.code, r.stdout)
		}
	}
	for args, want := range map[string]string{
		"send extra":   `help takes one verb: "extra" is extra`,
		"lineage nope": `help lineage: no "nope" among its verbs`,
		"nope":         `unknown verb "nope"`,
	} {
		if r := runInProcess(t, none, "", append([]string{"help"}, strings.Fields(args)...)...); r.code != exitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("help %s: exit %d stderr %q, want 2 and %q", args, r.code, r.stderr, want)
		}
	}
}
