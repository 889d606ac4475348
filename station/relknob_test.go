package station_test

import (
	"errors"
	"testing"

	"github.com/oo-family/oo-claude/station"
)

// TestRelativeDirKnobRefused: a relative directory knob is a *KnobError; a
// relative OO_CLAUDE_INBOX_DIR used to put a sender's line under its own
// working directory.
func TestRelativeDirKnobRefused(t *testing.T) {
	for _, knob := range []string{"CLAUDE_CONFIG_DIR", "OO_CLAUDE_SESSIONS_DIR", "OO_CLAUDE_PROJECTS_DIR",
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
