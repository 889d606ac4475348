package doormanreq

import (
	"errors"
	"slices"
	"testing"
)

func TestArgvRoundTrip(t *testing.T) {
	t.Parallel()
	for _, r := range []Request{
		{MCP: true},
		{Foreground: true},
		{Foreground: true, Session: "5f0c2c52-6d7e-4a59-9a4f-2f8c8b0a6e11", Once: true, JSON: true},
		{Foreground: true, Session: "a=b --once"},
		{Foreground: true, JSON: true},
	} {
		got, err := Parse(r.Argv())
		if err != nil || got != r {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", r.Argv(), got, err, r)
		}
	}
	if a := (Request{MCP: true}).Argv(); !slices.Equal(a, []string{"doorman", "--mcp"}) {
		t.Errorf("the MCP request's argv is %q; want the registration's doorman --mcp", a)
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		nil,
		{},
		{"--mcp"},
		{"doorman"},
		{"doorman", "--mcp", "--once"},
		{"doorman", "--mcp", "--mcp"},
		{"doorman", "--mcp=true"},
		{"doorman", "--allow-foreground", "--session"},
		{"doorman", "--allow-foreground", "--session="},
		{"doorman", "--allow-foreground", "--session", "x"},
		{"doorman", "--allow-foreground", "--json=1"},
		{"doorman", "--once"},
		{"doorman", "--allow-foreground", "extra"},
		{"send", "--mcp"},
	} {
		if r, err := Parse(args); !errors.Is(err, errRequest) {
			t.Errorf("Parse(%q) = %+v, %v; want an error matching errRequest", args, r, err)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r  Request
		ok bool
	}{
		{Request{MCP: true}, true},
		{Request{Foreground: true, Once: true}, true},
		{Request{}, false},
		{Request{MCP: true, Foreground: true}, false},
		{Request{MCP: true, Session: "x"}, false},
		{Request{MCP: true, JSON: true}, false},
		{Request{Once: true}, false},
	} {
		if err := c.r.Check(); (err == nil) != c.ok || err != nil && !errors.Is(err, errRequest) {
			t.Errorf("%+v.Check() = %v; want ok %v", c.r, err, c.ok)
		}
	}
}

// FuzzParse: whatever the arguments, Parse returns a request that Check
// passes and that Argv writes back to the same request, or an error.
func FuzzParse(f *testing.F) {
	f.Add("doorman", "--mcp", "")
	f.Add("doorman", "--allow-foreground", "--session=x")
	f.Add("doorman", "--once", "--json")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		for _, args := range [][]string{{a}, {a, b}, {a, b, c}} {
			r, err := Parse(args)
			if err != nil {
				if !errors.Is(err, errRequest) {
					t.Fatalf("Parse(%q): %v does not match errRequest", args, err)
				}
				continue
			}
			if err := r.Check(); err != nil {
				t.Fatalf("Parse(%q) = %+v, which Check refuses: %v", args, r, err)
			}
			if again, err := Parse(r.Argv()); err != nil || again != r {
				t.Fatalf("Parse(%q) = %+v; its Argv %q parses to %+v, %v", args, r, r.Argv(), again, err)
			}
		}
	})
}
