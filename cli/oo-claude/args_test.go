package main

import (
	"errors"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPositional(t *testing.T) {
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
			var ue *usageError
			if tt.usage {
				if err == nil || (!errors.As(err, &ue) && err != nil) {
					t.Fatalf("err = %v, want a usage error", err)
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
	var d time.Duration
	f := secondsFlag{d: &d, positive: true}
	if err := f.Set("0"); err == nil {
		t.Error("a positive seconds flag took 0")
	}
	if err := f.Set("1.5"); err != nil || d != 1500*time.Millisecond {
		t.Errorf("Set(1.5) = %v, d = %v", err, d)
	}
}
