package claudeinbox_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/inboxv1"
)

// TestLineReasonOfNoRule: a line refused for a cause that is none of the
// line rules is undeliverable, as the doorman acks it, not one rule's
// reason (it was invalid-utf8).
func TestLineReasonOfNoRule(t *testing.T) {
	if got := claudeinbox.LineReason(errors.New("no rule")); got != inboxv1.ReasonUndeliverable {
		t.Errorf("lineReason(no rule) = %q, want %q", got, inboxv1.ReasonUndeliverable)
	}
	if got := claudeinbox.LineReason(&inboxv1.LineError{Err: inboxv1.ErrNewline}); got != inboxv1.ReasonNewline {
		t.Errorf("lineReason(newline) = %q, want %q", got, inboxv1.ReasonNewline)
	}
}

// A Reason is an errors.Is target: a send's refusal matches the reason it
// carries (and ErrRefused), and no other.
func TestReasonIsErrorTarget(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &claudeinbox.RefusedError{Reason: inboxv1.ReasonNewline})
	if !errors.Is(err, inboxv1.ReasonNewline) || !errors.Is(err, claudeinbox.ErrRefused) || errors.Is(err, inboxv1.ReasonNUL) {
		t.Errorf("errors.Is on %v: newline %v refused %v nul %v", err, errors.Is(err, inboxv1.ReasonNewline),
			errors.Is(err, claudeinbox.ErrRefused), errors.Is(err, inboxv1.ReasonNUL))
	}
	if inboxv1.ReasonNewline.Error() != "newline" {
		t.Errorf("Error() = %q", inboxv1.ReasonNewline.Error())
	}
}
