package claudeinbox_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// TestReasonValues pins the strings of the Reason vocabulary: they are the
// receipts' and acks' reason values, which a program and a log reader
// match, so a Go rename never changes one.
func TestReasonValues(t *testing.T) {
	got := map[claudeinbox.Reason]string{
		claudeinbox.ReasonEmpty:               "empty",
		claudeinbox.ReasonNewline:             "newline",
		claudeinbox.ReasonTooLong:             "too-long",
		claudeinbox.ReasonInvalidUTF8:         "invalid-utf8",
		claudeinbox.ReasonNUL:                 "nul",
		claudeinbox.ReasonUndeliverable:       "undeliverable",
		claudeinbox.ReasonDoormanRefused:      "doorman-refused",
		claudeinbox.ReasonBadFrom:             "bad-from",
		claudeinbox.ReasonBadPriority:         "bad-priority",
		claudeinbox.ReasonUnknownTarget:       "unknown-target",
		claudeinbox.ReasonAmbiguousTarget:     "ambiguous-target",
		claudeinbox.ReasonBadTarget:           "bad-target",
		claudeinbox.ReasonSymlink:             "symlink",
		claudeinbox.ReasonNotRegular:          "not-regular",
		claudeinbox.ReasonUntrusted:           "untrusted",
		claudeinbox.ReasonIO:                  "io-error",
		claudeinbox.ReasonBadOption:           "bad-option",
		claudeinbox.ReasonCanceled:            "canceled",
		claudeinbox.ReasonThrottled:           "throttled",
		claudeinbox.ReasonUnknownSession:      "unknown-session",
		claudeinbox.ReasonInboxDirMismatch:    "inbox-dir-mismatch",
		claudeinbox.ReasonHeartbeatMissing:    "missing",
		claudeinbox.ReasonHeartbeatUnreadable: "unreadable",
		claudeinbox.ReasonHeartbeatStale:      "stale",
		claudeinbox.ReasonDoormanState:        "state",
		claudeinbox.ReasonDoormanGone:         "pid-gone",
		claudeinbox.ReasonOtherSession:        "other-session",
		claudeinbox.ReasonReceiverDidNotQueue: "receiver-did-not-queue",
		claudeinbox.ReasonAckUnwritable:       "ack-unwritable",
		claudeinbox.ReasonBadToken:            "bad-token",
		claudeinbox.ReasonAttemptUnwritable:   "attempt-unwritable",
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

// TestVocabularyIsTheInboxFiles: the Reasons of a doorman that is not fresh,
// of a pending line, of the line rules, and the priorities are spelled as literals here (go doc shows no internal
// name) and equal what the inbox files' one reader and writer
// (internal/inbox) judges and writes by, so the two cannot drift.
func TestVocabularyIsTheInboxFiles(t *testing.T) {
	tests := []struct{ public, internal string }{
		{string(claudeinbox.ReasonHeartbeatMissing), inbox.NotFreshMissing},
		{string(claudeinbox.ReasonHeartbeatUnreadable), inbox.NotFreshUnreadable},
		{string(claudeinbox.ReasonHeartbeatStale), inbox.NotFreshStale},
		{string(claudeinbox.ReasonDoormanState), inbox.NotFreshState},
		{string(claudeinbox.ReasonDoormanGone), inbox.NotFreshPIDGone},
		{string(claudeinbox.ReasonOtherSession), inbox.NotFreshOtherSession},
		{string(claudeinbox.ReasonReceiverDidNotQueue), inbox.PendingNotQueued},
		{string(claudeinbox.ReasonAckUnwritable), inbox.PendingAckUnwritable},
		{string(claudeinbox.ReasonBadToken), inbox.PendingBadToken},
		{string(claudeinbox.ReasonAttemptUnwritable), inbox.PendingAttemptUnwritable},
		{string(claudeinbox.ReasonEmpty), inbox.LineReasonEmpty},
		{string(claudeinbox.ReasonNewline), inbox.LineReasonNewline},
		{string(claudeinbox.ReasonTooLong), inbox.LineReasonTooLong},
		{string(claudeinbox.ReasonInvalidUTF8), inbox.LineReasonInvalidUTF8},
		{string(claudeinbox.ReasonNUL), inbox.LineReasonNUL},
		{string(claudeinbox.ReasonUndeliverable), inbox.LineReasonUndeliverable},
		{claudeinbox.PriorityNow, inbox.PriorityNow},
		{claudeinbox.PriorityNext, inbox.PriorityNext},
		{claudeinbox.PriorityLater, inbox.PriorityLater},
	}
	for _, tt := range tests {
		if tt.public != tt.internal {
			t.Errorf("claudeinbox says %q where internal/inbox says %q", tt.public, tt.internal)
		}
	}
}

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
