package topreq

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A request comes back from its command line as it went in, whatever its
// fields hold (a From or a host with spaces, '=' or a leading dash).
func TestArgvParseRoundTrip(t *testing.T) {
	for _, r := range []Request{
		{OOClaude: "/usr/local/bin/oo-claude", From: "human"},
		{OOClaude: "/opt/oo claude/bin/oo-claude", From: "a=b --host=x", Hosts: []string{"a", "ssh://u@h:2222", "-oProxyCommand=x"}},
		{OOClaude: "/x", From: ""},
	} {
		got, err := Parse(r.Argv())
		if err != nil {
			t.Fatalf("Parse(%q): %v", r.Argv(), err)
		}
		if diff := cmp.Diff(r, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

// What Argv does not write is refused.
func TestParseRefuses(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"top"},
		{"doorman", "--oo-claude=/x", "--from=h"},
		{"top", "--from=h", "--oo-claude=/x"},
		{"top", "--oo-claude=relative/oo-claude", "--from=h"},
		{"top", "--oo-claude=/x", "--from=h", "--host="},
		{"top", "--oo-claude=/x", "--from=h", "--hosts=a"},
		{"top", "--oo-claude=/x", "--from=h", "extra"},
	} {
		if r, err := Parse(args); err == nil || !strings.HasPrefix(err.Error(), "top") {
			t.Errorf("Parse(%q) = %+v, %v; want an error", args, r, err)
		}
	}
}

// FuzzParse: whatever Parse accepts, Argv writes back to the same request,
// and whatever it refuses is an errRequest.
func FuzzParse(f *testing.F) {
	f.Add("top", "--oo-claude=/usr/bin/oo-claude", "--from=human", "--host=a")
	f.Add("top", "--oo-claude=relative", "--from=", "")
	f.Add("doorman", "--mcp", "", "")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		for _, args := range [][]string{{a}, {a, b}, {a, b, c}, {a, b, c, d}} {
			r, err := Parse(args)
			if err != nil {
				if !errors.Is(err, errRequest) {
					t.Fatalf("Parse(%q): %v does not match errRequest", args, err)
				}
				continue
			}
			again, err := Parse(r.Argv())
			if err != nil || !cmp.Equal(again, r) || !slices.Equal(r.Argv(), args) {
				t.Fatalf("Parse(%q) = %+v; its Argv %q parses to %+v, %v", args, r, r.Argv(), again, err)
			}
		}
	})
}
