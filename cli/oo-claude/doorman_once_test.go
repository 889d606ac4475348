package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakeowner"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/doormancmd"
)

// TestDoormanOnceFailedDeliveryExits4: `doorman --allow-foreground --once`
// whose delivery fails (the door closes on the frame, seen within the
// settle) exits 4 (v0.1: "a delivery failed and the line waits"), writes
// no ack and leaves the offset at the line; the next run, with the door
// taking lines again, delivers it once and exits 0.
func TestDoormanOnceFailedDeliveryExits4(t *testing.T) {
	t.Parallel()
	o := fakeowner.New(t, fakeowner.Options{Status: "busy"})
	o.Door.Refuse(true)
	off := o.Append("[chatgpt 📡] the door refuses it first")
	ctx := ctxT(t, 60*time.Second)
	// Confirmation off: the ack rests on the settle, which sees the close.
	// The settle is generous: on a loaded machine the close came later than
	// a 1 s settle, and the line was acked; a close seen ends it at once.
	env := []string{"OO_CLAUDE_DOOR_CONFIRM_S=0", "OO_CLAUDE_DOOR_SETTLE_S=5"}

	c := o.Start(command(ctx, t, env, "doorman", "--allow-foreground", "--once", "--json"))
	code, err := c.Wait(ctx)
	if err != nil || code != doormancmd.ExitDeliveryFailed {
		t.Fatalf("exit %d (%v), want %d; stderr:\n%s", code, err, doormancmd.ExitDeliveryFailed, c.Stderr())
	}
	if !strings.Contains(c.Stderr(), "failed") {
		t.Errorf("stderr does not say the delivery failed:\n%s", c.Stderr())
	}
	var st struct {
		State     inboxv1.State `json:"state"`
		Offset    int64         `json:"offset"`
		Delivered int           `json:"delivered"`
		LastError string        `json:"last_error"`
	}
	if err := json.Unmarshal([]byte(c.Stdout()), &st); err != nil {
		t.Fatalf("--json: %v: %q", err, c.Stdout())
	}
	if st.Offset != off || st.Delivered != 0 || !strings.Contains(st.LastError, "receiver closed") {
		t.Errorf("status %+v, want offset %d, nothing delivered, the refusal in last_error", st, off)
	}
	if acks := o.Acks(); len(acks) != 0 {
		t.Fatalf("acks after the failed delivery: %+v, want none", acks)
	}

	o.Door.Refuse(false)
	c = o.Start(command(ctx, t, env, "doorman", "--allow-foreground", "--once"))
	if code, err := c.Wait(ctx); err != nil || code != 0 {
		t.Fatalf("second run: exit %d (%v), want 0; stderr:\n%s", code, err, c.Stderr())
	}
	acks := o.Acks()
	if len(acks) != 1 || acks[0].Class != inboxv1.AckDeliveredSteer || acks[0].LineOffset == nil || *acks[0].LineOffset != off {
		t.Errorf("acks %+v, want one delivered-steer for offset %d", acks, off)
	}
}
