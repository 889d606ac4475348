package main

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fleet"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// internalFlag marks a flag's usage text: the flag is for oo-claude itself
// (e.g. the unit that start --systemd runs) and is left out of the help.
const internalFlag = "(internal)"

// flagError is a command line whose flags cannot be parsed: an unknown
// flag, a value a flag cannot take. run prints it as one line followed by
// the verb's usage.
type flagError struct{ msg string }

func (e *flagError) Error() string { return e.msg }

// selectedCmd is the command args name: the deepest subcommand whose
// names lead args, and those names. Only the leaves have flags, so the
// leading words are the command's names.
func selectedCmd(root *ffcli.Command, args []string) (c *ffcli.Command, path []string) {
	c = root
	for len(args) > 0 {
		var next *ffcli.Command
		for _, s := range c.Subcommands {
			if strings.EqualFold(s.Name, args[0]) {
				next = s
			}
		}
		if next == nil {
			break
		}
		c, args, path = next, args[1:], append(path, next.Name)
	}
	return c, path
}

// usageOf is the help of c, a command of root's tree.
func usageOf(root, c *ffcli.Command) string {
	if c == root {
		return rootUsage(root)
	}
	return usage(c)
}

// usage is the help of one command: what it does, its synopsis, its
// subcommands and its flags. A flag's default is shown only when it is a
// value the flag really takes (a zero value stands for "the knob's
// default", which the flag's text names); internal flags are hidden.
func usage(c *ffcli.Command) string {
	var b strings.Builder
	if c.ShortHelp != "" {
		fmt.Fprintf(&b, "%s\n\n", c.ShortHelp)
	}
	fmt.Fprintf(&b, "USAGE\n")
	for _, u := range strings.Split(c.ShortUsage, " · ") {
		fmt.Fprintf(&b, "  %s\n", u)
	}
	if c.LongHelp != "" {
		fmt.Fprintf(&b, "\n%s\n", c.LongHelp)
	}
	if len(c.Subcommands) > 0 {
		fmt.Fprintf(&b, "\nSUBCOMMANDS\n")
		tw := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
		for _, s := range c.Subcommands {
			fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.ShortHelp)
		}
		tw.Flush()
	}
	var flags []*flag.Flag
	if c.FlagSet != nil {
		c.FlagSet.VisitAll(func(f *flag.Flag) {
			if !strings.HasPrefix(f.Usage, internalFlag) {
				flags = append(flags, f)
			}
		})
	}
	if len(flags) > 0 {
		fmt.Fprintf(&b, "\nFLAGS\n")
		tw := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
		for _, f := range flags {
			arg, text := flag.UnquoteUsage(f)
			if isBool(f) {
				arg = ""
			} else if p := placeholder(c.ShortUsage, f.Name); p != "" {
				arg = p
			} else {
				arg = strings.ToUpper(arg)
			}
			if arg != "" {
				arg = " " + arg
			}
			if shownDefault(f) && !strings.Contains(text, "(default") {
				text += fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(tw, "  --%s%s\t%s\n", f.Name, arg, text)
		}
		tw.Flush()
	}
	if codes := exitCodes(c.Name, takesHost(c)); len(codes) > 0 {
		fmt.Fprintf(&b, "\nEXIT CODES\n")
		for _, l := range codes {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.String()
}

// takesHost reports whether c, or one of its subcommands, has --host.
func takesHost(c *ffcli.Command) bool {
	if c.FlagSet != nil && c.FlagSet.Lookup("host") != nil {
		return true
	}
	return slices.ContainsFunc(c.Subcommands, takesHost)
}

// exitCodes lists the exit codes of a verb, one line a code ("3
// queued-no-doorman, queued-offline"). For a verb whose result is a
// verdict class: the library's classes (claudeinbox.Classes,
// headless.ResumeClasses and StartClasses) by their Class.ExitCode (the
// one mapping the verbs exit by), with the usage code and the signals';
// for the doorman its foreground codes (internal/doormancmd's); for the
// others 0, 1 and usage. hasHost adds ssh's own failure (--host).
func exitCodes(verb string, hasHost bool) []string {
	byCode := map[int][]string{}
	add := func(class string, code int) {
		byCode[code] = append(byCode[code], class)
	}
	switch verb {
	case "send":
		for _, c := range claudeinbox.Classes() {
			if c == claudeinbox.Interrupted {
				continue // it exits by its signal: the lines below
			}
			add(string(c), c.ExitCode())
		}
	case "resume":
		for _, c := range headless.ResumeClasses() {
			add(string(c), c.ExitCode())
		}
	case "start":
		for _, c := range headless.StartClasses() {
			add(string(c), c.ExitCode())
		}
	case "doorman":
		add("ok", exitOK)
		add("--json could not print the final status after a good run", exitFail)
		add("not deliverable here (an identity state)", 3)
		add("a delivery failed; the line waits", 4)
	case "doctor":
		add("no findings", exitOK)
		add("findings, or something could not be read", exitFail)
	default:
		add("done", exitOK)
		add("something could not be read or done", exitFail)
	}
	add("usage (a bad flag or argument)", exitUsage)
	switch verb {
	case "send", "resume", "start":
		// A signal ends the verb: 128 + its number, as shells expect
		// (signalExit); send's class interrupted exits by its signal too.
		add("interrupted by SIGINT", fsx.SignalExitCode(syscall.SIGINT))
		add("interrupted by SIGTERM", fsx.SignalExitCode(syscall.SIGTERM))
	}
	if hasHost {
		add("ssh itself failed (--host): nothing is known of the verb's outcome", fleet.ExitSSH)
	}
	codes := slices.Sorted(maps.Keys(byCode))
	lines := make([]string, 0, len(codes))
	for _, code := range codes {
		lines = append(lines, fmt.Sprintf("%d  %s", code, strings.Join(byCode[code], ", ")))
	}
	return lines
}

// rootUsage lists the verbs.
func rootUsage(c *ffcli.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nUSAGE\n  %s\n\nVERBS\n", c.ShortHelp, c.ShortUsage)
	tw := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
	for _, s := range c.Subcommands {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.ShortHelp)
	}
	fmt.Fprintf(tw, "  %s\t%s\n", "help", "show a verb's usage and flags: oo-claude help VERB")
	tw.Flush()
	return b.String()
}

// placeholder is the value name the synopsis gives flag name ("--name
// WORD", WORD being N, DIR, USD, "…", <uuid> or words joined by |), or
// "". The synopsis is read by hand, as the regular expression
//
//	--([a-z][a-z0-9-]*) ("[^"]*"|<[^>]+>|[A-Z][A-Za-z_|]*|[a-z]+(?:\|[a-z]+)+)
//
// reads it (help_test.go holds the two to each other): package regexp
// would build its tables at every start of oo-claude.
func placeholder(shortUsage, name string) string {
	for i := 0; i+2 <= len(shortUsage); {
		if !strings.HasPrefix(shortUsage[i:], "--") {
			i++
			continue
		}
		j := i + 2
		k := j
		if k < len(shortUsage) && isLower(shortUsage[k]) {
			for k++; k < len(shortUsage) && (isLower(shortUsage[k]) || isDigit(shortUsage[k]) || shortUsage[k] == '-'); k++ {
			}
		}
		if k == j || k >= len(shortUsage) || shortUsage[k] != ' ' {
			i++
			continue
		}
		value := valueWord(shortUsage[k+1:])
		if value == "" {
			i++
			continue
		}
		if shortUsage[j:k] == name {
			return value
		}
		i = k + 1 + len(value)
	}
	return ""
}

// valueWord is the placeholder s starts with ("…", <…>, an upper-case
// word, lower-case words joined by |), or "".
func valueWord(s string) string {
	if s == "" {
		return ""
	}
	switch c := s[0]; {
	case c == '"':
		if n := strings.IndexByte(s[1:], '"'); n >= 0 {
			return s[:n+2]
		}
	case c == '<':
		if n := strings.IndexByte(s[1:], '>'); n > 0 {
			return s[:n+2]
		}
	}
	if c := s[0]; 'A' <= c && c <= 'Z' {
		n := 1
		for n < len(s) && (isLower(s[n]) || 'A' <= s[n] && s[n] <= 'Z' || s[n] == '_' || s[n] == '|') {
			n++
		}
		return s[:n]
	}
	word := func(at int) int { // the end of the lower-case word at at
		for at < len(s) && isLower(s[at]) {
			at++
		}
		return at
	}
	n := word(0)
	if n == 0 {
		return ""
	}
	words := 1
	for n < len(s) && s[n] == '|' {
		m := word(n + 1)
		if m == n+1 {
			break
		}
		n, words = m, words+1
	}
	if words < 2 {
		return ""
	}
	return s[:n]
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isBool(f *flag.Flag) bool {
	bf, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && bf.IsBoolFlag()
}

// shownDefault reports whether f's default is worth printing: not a zero
// value, which every oo-claude flag uses for "not set".
func shownDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false":
		return false
	}
	return true
}

// doubleDash writes the flag names in the flag package's messages
// ("flag provided but not defined: -x", "invalid value "v" for flag -x")
// as the help spells them, --x: a dash after one of the messages' words
// and before a letter or digit is doubled, as the regular expression
//
//	(defined: |for flag |argument: |value "[^"]*" for )-([A-Za-z0-9])
//
// replaced by "${1}--${2}" would (help_test.go holds the two to each
// other), without package regexp.
func doubleDash(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); {
		if n := flagWord(msg[i:]); n > 0 && n+1 < len(msg[i:]) && msg[i+n] == '-' && isFlagChar(msg[i+n+1]) {
			b.WriteString(msg[i : i+n])
			b.WriteString("--")
			b.WriteByte(msg[i+n+1])
			i += n + 2
			continue
		}
		b.WriteByte(msg[i])
		i++
	}
	return b.String()
}

// flagWord is the length of the words s starts with that come before a
// flag's name in the flag package's messages, or 0.
func flagWord(s string) int {
	for _, w := range []string{"defined: ", "for flag ", "argument: "} {
		if strings.HasPrefix(s, w) {
			return len(w)
		}
	}
	if rest, ok := strings.CutPrefix(s, `value "`); ok {
		if n := strings.IndexByte(rest, '"'); n >= 0 && strings.HasPrefix(rest[n:], `" for `) {
			return len(`value "`) + n + len(`" for `)
		}
	}
	return 0
}

func isFlagChar(c byte) bool {
	return isLower(c) || 'A' <= c && c <= 'Z' || isDigit(c)
}
