package inboxv1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/inboxv1"
)

// TestReasonValues pins the strings of the Reason vocabulary: they are the
// receipts' and acks' reason values, which a program and a log reader
// match, so a Go rename never changes one.
func TestReasonValues(t *testing.T) {
	got := map[inboxv1.Reason]string{
		inboxv1.ReasonEmpty:               "empty",
		inboxv1.ReasonNewline:             "newline",
		inboxv1.ReasonTooLong:             "too-long",
		inboxv1.ReasonInvalidUTF8:         "invalid-utf8",
		inboxv1.ReasonNUL:                 "nul",
		inboxv1.ReasonUndeliverable:       "undeliverable",
		inboxv1.ReasonDoormanRefused:      "doorman-refused",
		inboxv1.ReasonBadFrom:             "bad-from",
		inboxv1.ReasonBadPriority:         "bad-priority",
		inboxv1.ReasonUnknownTarget:       "unknown-target",
		inboxv1.ReasonAmbiguousTarget:     "ambiguous-target",
		inboxv1.ReasonBadTarget:           "bad-target",
		inboxv1.ReasonSymlink:             "symlink",
		inboxv1.ReasonNotRegular:          "not-regular",
		inboxv1.ReasonUntrusted:           "untrusted",
		inboxv1.ReasonIO:                  "io-error",
		inboxv1.ReasonBadOption:           "bad-option",
		inboxv1.ReasonCanceled:            "canceled",
		inboxv1.ReasonThrottled:           "throttled",
		inboxv1.ReasonUnknownSession:      "unknown-session",
		inboxv1.ReasonInboxDirMismatch:    "inbox-dir-mismatch",
		inboxv1.ReasonHeartbeatMissing:    "missing",
		inboxv1.ReasonHeartbeatUnreadable: "unreadable",
		inboxv1.ReasonHeartbeatStale:      "stale",
		inboxv1.ReasonDoormanState:        "state",
		inboxv1.ReasonDoormanGone:         "pid-gone",
		inboxv1.ReasonOtherSession:        "other-session",
		inboxv1.ReasonReceiverDidNotQueue: "receiver-did-not-queue",
		inboxv1.ReasonAckUnwritable:       "ack-unwritable",
		inboxv1.ReasonBadToken:            "bad-token",
		inboxv1.ReasonAttemptUnwritable:   "attempt-unwritable",
	}
	if len(got) != 31 {
		t.Fatalf("%d distinct reasons, want 31: two constants share a value", len(got))
	}
	for r, want := range got {
		if diff := cmp.Diff(want, string(r)); diff != "" {
			t.Errorf("reason (-want +got):\n%s", diff)
		}
	}
}
