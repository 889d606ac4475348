package doorman

import (
	"errors"
	"testing"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// TestRefuseReasonIsTheSendersReason: the doorman acks a line the rules
// refuse with the reason the sender refuses it with (the one table), a
// carriage return included.
func TestRefuseReasonIsTheSendersReason(t *testing.T) {
	for _, line := range []string{"a\rb", `{"v":1,"from":"a","line":"x\ny"}`, "a\xffb", "a\x00b", "[a 📡] "} {
		_, err := inbox.Decode([]byte(line))
		if got, want := refuseReason(err), claudeinbox.Reason(inbox.LineReason(err)); got != want {
			t.Errorf("the doorman refuses %q as %q, the sender as %q", line, got, want)
		}
	}
	if got := refuseReason(&inbox.LineError{Err: inbox.ErrNewline}); got != claudeinbox.ReasonNewline {
		t.Errorf("a line with a newline is acked %q, want %q", got, claudeinbox.ReasonNewline)
	}
	if got := refuseReason(errors.New("no rule")); got != claudeinbox.ReasonUndeliverable {
		t.Errorf("a line refused for no rule is acked %q, want %q", got, claudeinbox.ReasonUndeliverable)
	}
}
