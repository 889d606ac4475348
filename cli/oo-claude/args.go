package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/internal/seconds"
)

// positional parses the flags that may follow positional arguments (v0.1's
// synopses put them after, as in `send <target> "<line>" --json`) and
// returns the positional arguments. Everything after "--" is positional,
// and so is a single-dash word that is not one of fs's flags: a line such
// as "-1 on that" reaches the library (which may refuse it with a verdict)
// instead of being mistaken for a flag. An unknown "--name" is a usage
// error (a *flagError), so a mistyped flag is not sent as a line, and
// --help asks for the usage (flag.ErrHelp), as it does before them. A "--" that is a flag's
// value stays a value.
func positional(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			return append(pos, args[1:]...), nil
		case a == "--help" && fs.Lookup("help") == nil:
			return nil, flag.ErrHelp // as anywhere else: the usage, exit 0
		case len(a) > 2 && strings.HasPrefix(a, "--") && fs.Lookup(flagName(a)) == nil:
			return nil, &flagError{fmt.Sprintf("flag provided but not defined: %s (a line that starts with -- goes after a lone --)", a)}
		case len(a) > 1 && a[0] == '-' && fs.Lookup(flagName(a)) != nil:
			if err := fs.Parse(args); err != nil {
				if errors.Is(err, flag.ErrHelp) {
					return nil, err
				}
				return nil, &flagError{err.Error()}
			}
			rest := fs.Args()
			if n := len(args) - len(rest); n > 0 && args[n-1] == "--" && !takesValue(fs, args[:n-1]) {
				return append(pos, rest...), nil
			}
			args = rest
		default:
			pos = append(pos, a)
			args = args[1:]
		}
	}
	if err := emptyValues(fs); err != nil {
		return nil, err
	}
	return pos, nil
}

// flagName returns the flag name in "-x", "--x" or "--x=v".
func flagName(a string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return name
}

// takesValue reports whether the last of the consumed args is a flag that
// takes the next argument as its value (so a following "--" is a value).
func takesValue(fs *flag.FlagSet, consumed []string) bool {
	if len(consumed) == 0 {
		return false
	}
	last := consumed[len(consumed)-1]
	if strings.Contains(last, "=") {
		return false
	}
	f := fs.Lookup(flagName(last))
	if f == nil {
		return false
	}
	bf, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !(ok && bf.IsBoolFlag())
}

// secondsFlag is a duration given in (fractional) seconds, as every
// oo-claude knob and flag takes time. It knows whether it was set, so an
// unset flag leaves the knob's value alone.
type secondsFlag struct {
	d *time.Duration
	// positive refuses 0 (a timeout); otherwise 0 is allowed (a wait, an
	// interval that 0 disables).
	positive bool
	set      bool
}

func (s *secondsFlag) String() string {
	if s == nil || s.d == nil || !s.set {
		return ""
	}
	return strconv.FormatFloat(s.d.Seconds(), 'f', -1, 64)
}

func (s *secondsFlag) Set(v string) error {
	// A plain decimal only: "0x1p1" (a hex float) was read as 2 s.
	d, ok := seconds.Parse(v, !s.positive)
	if !ok {
		return fmt.Errorf("want %s, got %q", seconds.Want(!s.positive), v)
	}
	*s.d, s.set = d, true
	return nil
}

// countFlag is a count above 0 (turns): decimal digits only, the rule of
// every number a flag takes. flag.Int read "0x10" as 16 and "1_0" as 10,
// and let 0 through to mean the library's default.
type countFlag struct{ n *int }

func (c countFlag) String() string {
	if c.n == nil || *c.n == 0 {
		return ""
	}
	return strconv.Itoa(*c.n)
}

func (c countFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if v == "" || strings.Trim(v, "0123456789") != "" || err != nil || n < 1 {
		return fmt.Errorf("want a whole number ≥ 1, got %q", v)
	}
	*c.n = n
	return nil
}
