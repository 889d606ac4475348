package main

import (
	"flag"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/oo-family/oo-claude/claudeinbox"
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
	if codes := exitCodes(c.Name); len(codes) > 0 {
		fmt.Fprintf(&b, "\nEXIT CODES\n")
		for _, l := range codes {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.String()
}

// exitCodes lists the exit codes of a verb whose result is a verdict
// class, one line a code ("3  queued-no-doorman, queued-offline"): the
// library's classes (claudeinbox.Classes, headless.ResumeClasses and
// StartClasses) by their Class.ExitCode (the one mapping the verbs exit
// by), with the usage code and the signals'; nil for the other verbs.
func exitCodes(verb string) []string {
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
	default:
		return nil
	}
	add("usage (a bad flag or argument)", exitUsage)
	// A signal ends the verb: 128 + its number, as shells expect
	// (signalExit); send's class interrupted exits by its signal too.
	add("interrupted by SIGINT", fsx.SignalExitCode(syscall.SIGINT))
	add("interrupted by SIGTERM", fsx.SignalExitCode(syscall.SIGTERM))
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
// WORD", WORD being N, DIR, USD, "…", <uuid>), or "".
func placeholder(shortUsage, name string) string {
	re := regexp.MustCompile(`--([a-z][a-z0-9-]*) ("[^"]*"|<[^>]+>|[A-Z][A-Za-z_|]*|[a-z]+(?:\|[a-z]+)+)`)
	for _, m := range re.FindAllStringSubmatch(shortUsage, -1) {
		if m[1] == name {
			return m[2]
		}
	}
	return ""
}

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
// as the help spells them, --x.
func doubleDash(msg string) string {
	re := regexp.MustCompile(`(defined: |for flag |argument: |value "[^"]*" for )-([A-Za-z0-9])`)
	return re.ReplaceAllString(msg, "${1}--${2}")
}
