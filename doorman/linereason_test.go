package doorman

import (
	"errors"
	"testing"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// TestRefuseReasonIsTheSendersReason: the doorman acks a line the rules
// refuse with the reason the sender refuses it with (the one table), a
// carriage return included.
func TestRefuseReasonIsTheSendersReason(t *testing.T) {
	for _, line := range []string{"a\rb", `{"v":1,"from":"a","line":"x\ny"}`, "a\xffb", "a\x00b", "[a 📡] "} {
		_, err := inbox.Decode([]byte(line))
		if got, want := refuseReason(err), inboxv1.Reason(inbox.LineReason(err)); got != want {
			t.Errorf("the doorman refuses %q as %q, the sender as %q", line, got, want)
		}
	}
	if got := refuseReason(&inboxv1.LineError{Err: inboxv1.ErrNewline}); got != inboxv1.ReasonNewline {
		t.Errorf("a line with a newline is acked %q, want %q", got, inboxv1.ReasonNewline)
	}
	if got := refuseReason(errors.New("no rule")); got != inboxv1.ReasonUndeliverable {
		t.Errorf("a line refused for no rule is acked %q, want %q", got, inboxv1.ReasonUndeliverable)
	}
}
