package claudeinbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
)

// exampleTB lets the fakes run outside a test: temporary directories and
// cleanups, run by done in reverse order.
type exampleTB struct{ cleanups []func() }

func (e *exampleTB) Helper()                      {}
func (e *exampleTB) Fatal(args ...any)            { panic(fmt.Sprint(args...)) }
func (e *exampleTB) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
func (e *exampleTB) Cleanup(f func())             { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) TempDir() string {
	d, err := os.MkdirTemp("", "oo-claude-example")
	if err != nil {
		panic(err)
	}
	e.Cleanup(func() { os.RemoveAll(d) })
	return d
}
func (e *exampleTB) done() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// A send to a running, busy session whose doorman acks the line.
func ExampleSender_Send() {
	tb := &exampleTB{}
	defer tb.done()
	st := fakestation.New(tb)
	row := st.AddSession(fakestation.Session{Name: "work-e9", Status: "busy"})
	fakedoorman.Start(tb, st.Paths.InboxDir, row.SessionID, fakedoorman.Options{})

	s := &claudeinbox.Sender{Station: st.Station(), Wait: 5 * time.Second}
	v, err := s.Send(context.Background(), claudeinbox.Request{Target: "work-e9", Line: "status?", From: "mama"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.Class, v.Class.ExitCode(), v.Line)
	// Output: delivered-steer 0 [mama 📡] status?
}

// A session that is not running is addressed by its full id; the line
// waits in its inbox. (A full id that no session and no transcript of
// this station has is refused as unknown-session, unless the request
// says ExpectStart.)
func ExampleSender_Send_offline() {
	tb := &exampleTB{}
	defer tb.done()
	st := fakestation.New(tb)
	s := &claudeinbox.Sender{Station: st.Station()}
	sid := uuid.NewString()
	st.AddTranscript(sid, "") // it ran here before
	v, _ := s.Send(context.Background(), claudeinbox.Request{Target: sid, Line: "when you wake up"})
	fmt.Println(v.Class, v.Class.ExitCode(), v.Written)
	// Output: queued-offline 3 true
}

// A refused send says why in its Reason, the receipt's reason string; the
// error matches ErrRefused and carries the same reason.
func ExampleRefusedError() {
	tb := &exampleTB{}
	defer tb.done()
	st := fakestation.New(tb)
	s := &claudeinbox.Sender{Station: st.Station()}
	v, err := s.Send(context.Background(), claudeinbox.Request{Target: uuid.NewString(), Line: "two\nlines"})
	var re *claudeinbox.RefusedError
	if errors.As(err, &re) && re.Reason == inboxv1.ReasonNewline {
		fmt.Println(v.Class, v.Reason, errors.Is(err, claudeinbox.ErrRefused), v.Written)
	}
	// Output: refused newline true false
}

// What to do next with a verdict, in one switch: a queued line is never
// resent, a dropped one after its RetryAfter.
func ExampleVerdict_Next() {
	tb := &exampleTB{}
	defer tb.done()
	st := fakestation.New(tb)
	s := &claudeinbox.Sender{Station: st.Station()}
	sid := uuid.NewString()
	st.AddTranscript(sid, "") // it ran here before and does not run now
	v, _ := s.Send(context.Background(), claudeinbox.Request{Target: sid, Line: "when you wake up"})
	switch v.Next() {
	case claudeinbox.NextDone:
		fmt.Println("delivered")
	case claudeinbox.NextWait:
		fmt.Println(v.Class, "waits in the inbox: do not resend")
	case claudeinbox.NextRetryAfter:
		fmt.Println("resend after", v.RetryAfter)
	default:
		fmt.Println(v.Next(), v.Reason)
	}
	// Output: queued-offline waits in the inbox: do not resend
}

// SendRetry waits out the throttle and sends once more: the second line
// to the same session within MinInterval is delivered after it.
func ExampleSender_SendRetry() {
	tb := &exampleTB{}
	defer tb.done()
	st := fakestation.New(tb)
	row := st.AddSession(fakestation.Session{Name: "work-r2", Status: "busy"})
	fakedoorman.Start(tb, st.Paths.InboxDir, row.SessionID, fakedoorman.Options{})

	s := &claudeinbox.Sender{Station: st.Station(), Wait: 5 * time.Second, MinInterval: 200 * time.Millisecond}
	first, _ := s.Send(context.Background(), claudeinbox.Request{Target: "work-r2", Line: "one"})
	v, err := s.SendRetry(context.Background(), claudeinbox.Request{Target: "work-r2", Line: "two"})
	fmt.Println(first.Class, v.Class, v.Next(), err)
	// Output: delivered-steer delivered-steer done <nil>
}
