package inbox_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// TestLineReason: the one table of the line rules gives every rule its
// own reason, for a line Decode refuses as for the bare error, and a cause
// that is none of the rules is undeliverable (never one rule's reason).
func TestLineReason(t *testing.T) {
	tests := []struct {
		name string
		line string
		want inboxv1.Reason
	}{
		{"empty", "   ", inboxv1.ReasonEmpty},
		{"tag only", "[a 📡] ", inboxv1.ReasonEmpty},
		{"carriage return", "a\rb", inboxv1.ReasonNewline},
		{"structured text with a newline", `{"v":1,"from":"a","line":"x\ny"}`, inboxv1.ReasonNewline},
		{"too long", strings.Repeat("a", inboxv1.MaxLineBytes+1), inboxv1.ReasonTooLong},
		{"invalid utf-8", "a\xffb", inboxv1.ReasonInvalidUTF8},
		{"nul", "a\x00b", inboxv1.ReasonNUL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := tt.line
			_, err := inbox.Decode([]byte(line))
			if err == nil {
				t.Fatalf("Decode(%q) = nil, want a line error", line)
			}
			if got := inbox.LineReason(err); got != tt.want {
				t.Errorf("LineReason(%v) = %q, want %q", err, got, tt.want)
			}
		})
	}
	for _, err := range []error{nil, errors.New("other"), fmt.Errorf("wrapped: %w", errors.New("x")), inboxv1.ErrBadFrom} {
		if got := inbox.LineReason(err); got != inboxv1.ReasonUndeliverable {
			t.Errorf("LineReason(%v) = %q, want %q", err, got, inboxv1.ReasonUndeliverable)
		}
	}
}
