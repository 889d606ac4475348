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
		{"empty", "   ", inbox.LineReasonEmpty},
		{"tag only", "[a 📡] ", inbox.LineReasonEmpty},
		{"carriage return", "a\rb", inbox.LineReasonNewline},
		{"structured text with a newline", `{"v":1,"from":"a","line":"x\ny"}`, inbox.LineReasonNewline},
		{"too long", strings.Repeat("a", inbox.MaxLineBytes+1), inbox.LineReasonTooLong},
		{"invalid utf-8", "a\xffb", inbox.LineReasonInvalidUTF8},
		{"nul", "a\x00b", inbox.LineReasonNUL},
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
	for _, err := range []error{nil, errors.New("other"), fmt.Errorf("wrapped: %w", errors.New("x")), inbox.ErrBadFrom} {
		if got := inbox.LineReason(err); got != inbox.LineReasonUndeliverable {
			t.Errorf("LineReason(%v) = %q, want %q", err, got, inbox.LineReasonUndeliverable)
		}
	}
}
