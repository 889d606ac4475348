package claudeinbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakesession"
	"github.com/oo-family/oo-claude/station"
)

// TestNewSenderWitness: NewSender's sender does a real seen wait and a
// real reply wait (Request.Waits) against a fake session with nothing more
// set: NewSender gives it the station's transcript witness.
func TestNewSenderWitness(t *testing.T) {
	s := fakesession.Start(t, fakesession.Options{Answer: func(line string) fakesession.Turn {
		return fakesession.Turn{Text: "answer to: " + line}
	}})
	sender := claudeinbox.NewSender(station.DefaultConfig(s.Station.Paths))
	sender.Wait = 30 * time.Second // generous on a loaded machine
	sender.SeenWait = 30 * time.Second
	v, err := sender.Send(context.Background(), claudeinbox.Request{Target: s.SessionID(), Line: "are you there?", From: "mama"})
	if err != nil || !v.Class.Delivered() || v.Seen == nil || !*v.Seen {
		t.Fatalf("seen wait: class %s seen %v note %q err %v; want delivered and seen", v.Class, v.Seen, v.Note, err)
	}
	waits := sender.Waits()
	waits.Reply = 30 * time.Second
	v, err = sender.Send(context.Background(), claudeinbox.Request{Target: s.SessionID(), Line: "what is the status?", From: "papa", Waits: &waits})
	if err != nil || !v.Class.Delivered() || v.Reply == nil || v.Reply.Text != "answer to: [papa 📡] what is the status?" {
		t.Fatalf("reply wait: class %s reply %+v note %q err %v; want delivered with the answer", v.Class, v.Reply, v.Note, err)
	}
	if err := s.Err(); err != nil {
		t.Error(err)
	}
}
