package main

import (
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// The regular expressions placeholder and doubleDash replace, kept here as
// their oracles.
var (
	placeholderRE = regexp.MustCompile(`--([a-z][a-z0-9-]*) ("[^"]*"|<[^>]+>|[A-Z][A-Za-z_|]*|[a-z]+(?:\|[a-z]+)+)`)
	doubleDashRE  = regexp.MustCompile(`(defined: |for flag |argument: |value "[^"]*" for )-([A-Za-z0-9])`)
)

func placeholderByRE(shortUsage, name string) string {
	for _, m := range placeholderRE.FindAllStringSubmatch(shortUsage, -1) {
		if m[1] == name {
			return m[2]
		}
	}
	return ""
}

// FuzzPlaceholder holds placeholder to the regular expression it replaces,
// on every verb's synopsis and on any other.
func FuzzPlaceholder(f *testing.F) {
	e := newEnv(strings.NewReader(""), io.Discard, io.Discard, osProc())
	var add func(c *ffcli.Command)
	add = func(c *ffcli.Command) {
		c.FlagSet.VisitAll(func(fl *flag.Flag) { f.Add(c.ShortUsage, fl.Name) })
		for _, s := range c.Subcommands {
			add(s)
		}
	}
	for _, v := range verbs {
		add(v.make(e))
	}
	for _, s := range []string{
		`--x N`, `--x "a b"`, `--x "open`, `--x <>`, `--x <uuid>`, `--x a|b|c`, `--x a|`, `--x a`, `--x A_b|C`, `---x N`, `--x  N`,
		`--x-y N --x-y M`, `--9 N`, `--x --y N`, `--a|b`, `--x a||b`, `--x "" --y N`, `--x é`, `[--x N]`,
	} {
		f.Add(s, "x")
		f.Add(s, "y")
	}
	f.Fuzz(func(t *testing.T, shortUsage, name string) {
		if got, want := placeholder(shortUsage, name), placeholderByRE(shortUsage, name); got != want {
			t.Fatalf("placeholder(%q, %q) = %q; the regular expression says %q", shortUsage, name, got, want)
		}
	})
}

// FuzzDoubleDash holds doubleDash to the regular expression it replaces.
func FuzzDoubleDash(f *testing.F) {
	for _, s := range []string{
		"flag provided but not defined: -x", `invalid value "v" for flag -x: parse error`, "flag needs an argument: -x",
		`invalid boolean value "v" for -x: bad`, "defined: -", "defined: --x", "for flag -é", `value "a"b" for -x`,
		"defined: -xdefined: -y", "argument: -9 and for flag -Z", `value "" for -x`, "", "-x", `value "for flag -x" for -y`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		if got, want := doubleDash(msg), doubleDashRE.ReplaceAllString(msg, "${1}--${2}"); got != want {
			t.Fatalf("doubleDash(%q) = %q; the regular expression says %q", msg, got, want)
		}
	})
}
