package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPositional(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		pos     []string
		json    bool
		wait    time.Duration
		usage   bool
		waitSet bool
	}{
		{"flags after", []string{"t", "line", "--json", "--wait", "2"}, []string{"t", "line"}, true, 2 * time.Second, false, true},
		{"flags before", []string{"--json", "t", "line"}, []string{"t", "line"}, true, 0, false, false},
		{"single dash line", []string{"t", "-1 on that"}, []string{"t", "-1 on that"}, false, 0, false, false},
		{"double dash ends flags", []string{"t", "--", "--json"}, []string{"t", "--json"}, false, 0, false, false},
		{"unknown double dash", []string{"t", "x", "--loud"}, nil, false, 0, true, false},
		{"bad seconds", []string{"t", "x", "--wait", "soon"}, nil, false, 0, true, false},
		{"negative seconds", []string{"t", "x", "--wait=-1"}, nil, false, 0, true, false},
		{"equals form", []string{"t", "x", "--wait=0.5"}, []string{"t", "x"}, false, 500 * time.Millisecond, false, true},
		// Found with FuzzSecondsFlag: NaN became a wait of about -292 years.
		{"NaN seconds", []string{"t", "x", "--wait", "NaN"}, nil, false, 0, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			asJSON := fs.Bool("json", false, "")
			var wait time.Duration
			w := secondsFlag{d: &wait}
			fs.Var(&w, "wait", "")
			pos, err := positional(fs, tt.args)
			var fe *flagError
			if tt.usage {
				if !errors.As(err, &fe) {
					t.Fatalf("err = %v, want a *flagError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.pos, pos); diff != "" {
				t.Errorf("positional (-want +got):\n%s", diff)
			}
			if *asJSON != tt.json || wait != tt.wait || w.set != tt.waitSet {
				t.Errorf("json %v wait %v set %v; want %v %v %v", *asJSON, wait, w.set, tt.json, tt.wait, tt.waitSet)
			}
		})
	}
}

func TestSecondsFlagPositive(t *testing.T) {
	t.Parallel()
	var d time.Duration
	f := secondsFlag{d: &d, positive: true}
	if err := f.Set("0"); err == nil {
		t.Error("a positive seconds flag took 0")
	}
	if err := f.Set("1.5"); err != nil || d != 1500*time.Millisecond {
		t.Errorf("Set(1.5) = %v, d = %v", err, d)
	}
	// Found with FuzzSecondsFlag: a value that rounds to 0 s was taken.
	if err := f.Set("1e-300"); err == nil {
		t.Errorf("a positive seconds flag took 1e-300 as %v", d)
	}
}

// A seconds flag takes a value only as a duration of 0 or more (more than
// 0 when it must be), and a refused value leaves the flag unset.
func FuzzSecondsFlag(f *testing.F) {
	for _, v := range []string{"0", "1.5", "-1", "1e7", "1e8", "soon", "Inf", "0x1p-2", "1_0"} {
		f.Add(v, false)
	}
	// Found while writing this target: NaN passed the bound checks, and a
	// tiny positive value became 0 s on a flag that must be more than 0.
	f.Add("NaN", false)
	f.Add("1e-300", true)
	f.Fuzz(func(t *testing.T, v string, positive bool) {
		d := time.Duration(-1)
		s := secondsFlag{d: &d, positive: positive}
		if err := s.Set(v); err != nil {
			if s.set || d != -1 {
				t.Fatalf("Set(%q) failed (%v) but set %v", v, err, d)
			}
			return
		}
		if !s.set || d < 0 || positive && d == 0 {
			t.Fatalf("Set(%q) = %v (positive %v)", v, d, positive)
		}
	})
}

// TestPositionalHelp: --help after the arguments is the usage, as before
// them; after a lone -- it is a line.
func TestPositionalHelp(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := positional(fs, []string{"t", "line", "--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help after the arguments: err = %v, want flag.ErrHelp", err)
	}
	pos, err := positional(fs, []string{"t", "--", "--help"})
	if err != nil || cmp.Diff([]string{"t", "--help"}, pos) != "" {
		t.Errorf("after --: %q, %v; want the line --help", pos, err)
	}
}

// TestEmptyFlagValues: a text flag given an empty value is a usage error
// (exit 2), before or after the positional arguments, never silently the
// default; the flags where empty is a value of its own (--tools) take it.
func TestEmptyFlagValues(t *testing.T) {
	none := func(string) string { return "" }
	for _, args := range [][]string{
		{"send", "work-e9", "hi", "--from", ""},
		{"send", "--from=", "work-e9", "hi"},
		{"send", "work-e9", "hi", "--priority="},
		{"resume", "8f0c5b8e-3a55-4d7e-9a7e-2d2b8f1e6a10", "hi", "--model", ""},
		{"start", "hi", "--cwd="},
		{"sessions", "--write", ""},
		{"lineage", "register", "--parent="},
	} {
		r := runInProcess(t, none, "", args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "an empty value") {
			t.Errorf("%q: exit %d stderr %q, want 2 naming the empty value", args, r.code, r.stderr)
		}
	}
	if err := emptyValues(flagSetWith(t, "tools", "")); err != nil {
		t.Errorf("--tools \"\": %v, want it taken (no tools)", err)
	}
}

// flagSetWith is a flag set with one text flag, set to v.
func flagSetWith(t *testing.T, name, v string) *flag.FlagSet {
	t.Helper()
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String(name, "default", "")
	if err := fs.Parse([]string{"--" + name + "=" + v}); err != nil {
		t.Fatal(err)
	}
	return fs
}
