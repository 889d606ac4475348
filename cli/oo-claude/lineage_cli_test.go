package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/fakes/fakestation"
)

func TestLineageVerbs(t *testing.T) {
	t.Parallel()
	const (
		child  = "c1d00000-1111-4222-8333-444455556666"
		parent = "9a4e0000-1111-4222-8333-444455556666"
		other  = "0e4e0000-1111-4222-8333-444455556666"
	)
	fs := fakestation.New(t)
	env := fs.Env()
	steps := []struct {
		name   string
		env    []string
		args   []string
		code   int
		stdout string // contained
	}{
		{"register", nil, []string{"lineage", "register", "--parent", parent, "--child", child, "--title", "worker", "--by", "parent", "--json"}, 0, `"appended":true`},
		{"again is idempotent", nil, []string{"lineage", "register", "--parent", parent, "--child", child, "--json"}, 0, `"appended":false`},
		{"child from the environment", []string{"CLAUDE_CODE_SESSION_ID=" + other}, []string{"lineage", "register", "--parent", parent}, 0, "registered: " + other},
		{"missing --parent", nil, []string{"lineage", "register", "--child", child}, 2, ""},
		{"bad --by", nil, []string{"lineage", "register", "--parent", parent, "--by", "mama"}, 2, ""},
		{"bad parent", nil, []string{"lineage", "register", "--parent", "nope", "--child", child}, 1, ""},
		{"no child known", nil, []string{"lineage", "register", "--parent", parent}, 1, ""},
		{"show", nil, []string{"lineage", "show"}, 0, child + " <- " + parent},
	}
	for _, st := range steps {
		r := runBinary(t, append(append([]string{}, env...), st.env...), "", st.args...)
		if r.code != st.code || !strings.Contains(r.stdout, st.stdout) {
			t.Fatalf("%s: exit %d (want %d), stdout %q (want %q), stderr %s", st.name, r.code, st.code, r.stdout, st.stdout, r.stderr)
		}
	}
	r := runBinary(t, env, "", "lineage", "show", "--json")
	var rows []struct {
		Child  string  `json:"child_session"`
		Parent *string `json:"parent_session"`
		By     string  `json:"by"`
		Title  string  `json:"title"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%q: %v", r.stdout, err)
	}
	p := parent
	want := []struct {
		Child  string  `json:"child_session"`
		Parent *string `json:"parent_session"`
		By     string  `json:"by"`
		Title  string  `json:"title"`
	}{{child, &p, "parent", "worker"}, {other, &p, "child", ""}}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("show --json (-want +got):\n%s", d)
	}
}

// lineage show never writes a row's control characters raw: a title or
// by that holds an escape sequence is printed quoted.
func TestLineageShowEscapes(t *testing.T) {
	t.Parallel()
	const (
		child  = "c1d00000-1111-4222-8333-444455556666"
		parent = "9a4e0000-1111-4222-8333-444455556666"
	)
	fs := fakestation.New(t)
	row := `{"ts":"2026-11-30T12:00:00.000Z","child_session":"` + child + `","parent_session":"` + parent +
		`","title":"\u001b]0;owned\u0007\u001b[31mred","by":"parent\u001b[2J"}` + "\n"
	path := filepath.Join(fs.Paths.ObservatoryDir, "lineage.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(row), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, fs.Env(), "", "lineage", "show")
	if r.code != 0 || strings.ContainsAny(r.stdout, "\x1b\x07") || !strings.Contains(r.stdout, `\x1b[31mred`) {
		t.Errorf("show printed %q (exit %d), want the escapes quoted", r.stdout, r.code)
	}
}
