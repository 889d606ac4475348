package claudeinbox_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// TestSendRefusesWhatTheDoormanWould: lines the doorman refuses are refused
// by the sender and never written: a tag and nothing else (it was accepted
// as a non-empty line), a structured line whose text holds a newline (it
// was written, then refused by the doorman), and a sender name with a
// format character such as U+202E (it was accepted), in --from and in the
// structured form's from.
func TestSendRefusesWhatTheDoormanWould(t *testing.T) {
	cases := []struct {
		name, line, from string
		reason           inboxv1.Reason
	}{
		{"tag only", "[x 📡]", "t", inboxv1.ReasonEmpty},
		{"tag and spaces", "[x 📡]   ", "t", inboxv1.ReasonEmpty},
		{"tag with detail only", "[x 📡 re:1]", "t", inboxv1.ReasonEmpty},
		{"structured newline", `{"v":1,"from":"a","line":"one\ntwo"}`, "t", inboxv1.ReasonNewline},
		{"structured tag only", `{"v":1,"from":"a","line":"[a 📡]"}`, "t", inboxv1.ReasonEmpty},
		{"from with RLO", "hello", "ma\u202ema", inboxv1.ReasonBadFrom},
		{"from with ZWJ", "hello", "a\u200db", inboxv1.ReasonBadFrom},
		{"from with LRI", "hello", "a\u2066b", inboxv1.ReasonBadFrom},
		{"structured from with RLO", `{"v":1,"from":"ma\u202ema","line":"hi"}`, "t", inboxv1.ReasonBadFrom},
		{"structured from with ESC", `{"v":1,"from":"a\u001b]0;x\u0007","line":"hi"}`, "t", inboxv1.ReasonBadFrom},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.sender.Wait = 0
			sid := uuid.NewString()
			v, _ := w.sender.Send(context.Background(), claudeinbox.Request{Target: sid, Line: c.line, From: c.from})
			if v.Class != claudeinbox.Refused || v.Reason != c.reason {
				t.Fatalf("verdict %s (%s: %s), want refused (%s)", v.Class, v.Reason, v.Note, c.reason)
			}
			if _, err := os.Stat(w.fs.InboxPath(sid)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the inbox exists: %v", err)
			}
		})
	}
	// The doorman's decoding refuses the tag-only line too.
	if _, err := inbox.Decode([]byte("[x 📡]")); !errors.Is(err, inboxv1.ErrEmptyLine) {
		t.Errorf("Decode(tag only) = %v, want ErrEmptyLine", err)
	}
	if got := inbox.SanitizeFrom("ma\u202ema\u200b"); got != "mama" {
		t.Errorf("SanitizeFrom kept a format character: %q", got)
	}
	// A line with a tag and text is still fine.
	if err := inbox.CheckLine([]byte("[x 📡] hi")); err != nil {
		t.Errorf("CheckLine(tagged) = %v", err)
	}
}
