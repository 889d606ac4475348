package station_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/oo-family/oo-claude/station"
)

// TestRelativeDirKnobRefused: a relative directory knob is a *KnobError; a
// relative OO_CLAUDE_INBOX_DIR used to put a sender's line under its own
// working directory.
func TestRelativeDirKnobRefused(t *testing.T) {
	for _, knob := range []string{"OO_CLAUDE_SESSIONS_DIR", "OO_CLAUDE_PROJECTS_DIR",
		"OO_CLAUDE_INBOX_DIR", "OO_CLAUDE_STATE_DIR", "OO_CLAUDE_OBSERVATORY_DIR"} {
		t.Run(knob, func(t *testing.T) {
			m := map[string]string{"HOME": "/h", knob: "rel/dir"}
			_, err := station.ConfigFromEnv(func(k string) string { return m[k] })
			var ke *station.KnobError
			if !errors.As(err, &ke) || !errors.Is(err, station.ErrBadKnob) || ke.Knob != knob {
				t.Fatalf("err = %v, want a *KnobError for %s", err, knob)
			}
		})
	}
	m := map[string]string{"HOME": "/h", "OO_CLAUDE_INBOX_DIR": "/abs/inbox"}
	if c, err := station.ConfigFromEnv(func(k string) string { return m[k] }); err != nil || c.InboxDir != "/abs/inbox" {
		t.Fatalf("absolute: %q, %v", c.InboxDir, err)
	}
}

// TestRelativeClaudeConfigDir: CLAUDE_CONFIG_DIR is Claude Code's variable,
// and Claude Code takes a relative value against its working directory
// (measured with 2.1.332: "claude mcp add --scope user" with
// CLAUDE_CONFIG_DIR=rel wrote <cwd>/rel/.claude.json, and its MCP servers
// got CLAUDE_CONFIG_DIR=rel with that cwd); oo-claude resolves it the same
// way. It was a usage error of every verb.
func TestRelativeClaudeConfigDir(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{"HOME": "/h", "CLAUDE_CONFIG_DIR": "rel/cfg"}
	c, err := station.ConfigFromEnv(func(k string) string { return m[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(wd, "rel", "cfg")
	if c.ConfigDir != want || c.SessionsDir != filepath.Join(want, "sessions") || c.ProjectsDir != filepath.Join(want, "projects") {
		t.Errorf("config %q, sessions %q, projects %q; want under %q", c.ConfigDir, c.SessionsDir, c.ProjectsDir, want)
	}
}
