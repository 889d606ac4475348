package claudeinbox

import (
	"github.com/oo-family/oo-claude/inboxv1"
)

// WithPriority is withPriority, for the fuzz test of what it keeps.
func WithPriority(line, p string) (string, string) { return withPriority(line, p) }

// AckOf is the doorman's ack the verdict rests on (the receipt's ack).
func AckOf(v Verdict) *inboxv1.Ack { return v.ack }

// AckPoll is the ack wait's safety timer.
const AckPoll = ackPoll

// LineReason is the reason the sender refuses a line with for a line error.
func LineReason(err error) inboxv1.Reason { return lineReason(err) }
