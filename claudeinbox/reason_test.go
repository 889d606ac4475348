package claudeinbox_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// TestLineReasonOfNoRule: a line refused for a cause that is none of the
// line rules is undeliverable, as the doorman acks it, not one rule's
// reason (it was invalid-utf8).
func TestLineReasonOfNoRule(t *testing.T) {
	if got := claudeinbox.LineReason(errors.New("no rule")); got != claudeinbox.ReasonUndeliverable {
		t.Errorf("lineReason(no rule) = %q, want %q", got, claudeinbox.ReasonUndeliverable)
	}
	if got := claudeinbox.LineReason(&inbox.LineError{Err: inbox.ErrNewline}); got != claudeinbox.ReasonNewline {
		t.Errorf("lineReason(newline) = %q, want %q", got, claudeinbox.ReasonNewline)
	}
}

// A Reason is an errors.Is target: a send's refusal matches the reason it
// carries (and ErrRefused), and no other.
func TestReasonIsErrorTarget(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &claudeinbox.RefusedError{Reason: claudeinbox.ReasonNewline})
	if !errors.Is(err, claudeinbox.ReasonNewline) || !errors.Is(err, claudeinbox.ErrRefused) || errors.Is(err, claudeinbox.ReasonNUL) {
		t.Errorf("errors.Is on %v: newline %v refused %v nul %v", err, errors.Is(err, claudeinbox.ReasonNewline),
			errors.Is(err, claudeinbox.ErrRefused), errors.Is(err, claudeinbox.ReasonNUL))
	}
	if claudeinbox.ReasonNewline.Error() != "newline" {
		t.Errorf("Error() = %q", claudeinbox.ReasonNewline.Error())
	}
}
