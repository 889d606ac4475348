package main

import (
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/inboxv1"
)

// The human verdict says what a delivered line's ack rests on: the
// receiver's enqueue row (with its time) or the settle alone.
func TestHumanVerdictConfirm(t *testing.T) {
	t.Parallel()
	base := claudeinbox.Verdict{Class: claudeinbox.DeliveredSteer, SessionID: "017c3f59-43cc-4dc8-bfb6-5e9a5625a864",
		MsgID: "6c6c667d-dc66-465b-8e42-2811789dfb0b", Waited: 110 * time.Millisecond}
	tests := []struct {
		name, confirm, queuedAt, want string
	}{
		{"transcript", inboxv1.ConfirmTranscript, "2026-12-01T09:00:00.112Z",
			"delivered-steer 017c3f59… msg_id=6c6c667d-dc66-465b-8e42-2811789dfb0b after 0.1s, queued at 2026-12-01T09:00:00.112Z"},
		{"settle", inboxv1.ConfirmSettle, "",
			"delivered-steer 017c3f59… msg_id=6c6c667d-dc66-465b-8e42-2811789dfb0b after 0.1s, unconfirmed (no transcript: acked after the settle)"},
		{"an older doorman's ack", "", "",
			"delivered-steer 017c3f59… msg_id=6c6c667d-dc66-465b-8e42-2811789dfb0b after 0.1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := base
			v.Confirm, v.QueuedAt = tt.confirm, tt.queuedAt
			if got := humanVerdict(v); got != tt.want {
				t.Errorf("humanVerdict =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
