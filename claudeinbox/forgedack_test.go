package claudeinbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// A row of the ack file that matches the line but is no ack a doorman
// writes (a class none writes, none at all, or another session's) is
// passed over: the send takes the real ack after them, never a forged
// delivered-*.
func TestForgedAcksAreNotTaken(t *testing.T) {
	w := newWorld(t)
	r := w.session(t, "work-e9")
	w.doorman(t, r.SessionID, fakedoorman.Options{NoAck: true})
	files := inboxv1.FilesFor(w.fs.Paths.InboxDir, r.SessionID)
	type res struct {
		v   claudeinbox.Verdict
		err error
	}
	done := make(chan res, 1)
	go func() {
		v, err := w.sender.Send(context.Background(), claudeinbox.Request{Target: r.SessionID, Line: "check the build"})
		done <- res{v, err}
	}()
	var line []byte
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(files.Inbox)
		if bytes.HasSuffix(b, []byte("\n")) {
			line = bytes.TrimSuffix(b, []byte("\n"))
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the line did not reach the inbox")
		}
		time.Sleep(5 * time.Millisecond)
	}
	sha, off := inbox.SHA256(line), int64(0)
	real := uuid.NewString()
	var acks bytes.Buffer
	for _, a := range []inboxv1.Ack{
		{SHA256: sha, LineOffset: &off, SessionID: r.SessionID, Class: "delivered-weird", MsgID: uuid.NewString()},
		{SHA256: sha, LineOffset: &off, SessionID: r.SessionID, MsgID: uuid.NewString()},
		{SHA256: sha, LineOffset: &off, SessionID: uuid.NewString(), Class: inboxv1.AckDeliveredSteer, MsgID: uuid.NewString()},
		{SHA256: sha, LineOffset: &off, SessionID: r.SessionID, Class: inboxv1.AckDeliveredStart, MsgID: real},
	} {
		b, _ := json.Marshal(a)
		acks.Write(append(b, '\n'))
	}
	if err := os.WriteFile(files.Ack, acks.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil || got.v.Class != claudeinbox.DeliveredStart || got.v.MsgID != real {
		t.Errorf("verdict %s msg_id %s (%v), want delivered-start on the real ack %s", got.v.Class, got.v.MsgID, got.err, real)
	}
}
