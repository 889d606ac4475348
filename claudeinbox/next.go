package claudeinbox

import (
	"context"
	"github.com/oo-family/oo-claude/inboxv1"
	"time"
)

// Next is what a program does next with a send's line ([Verdict.Next]):
// the one classification of every verdict, so no caller writes its own.
type Next int

// The next steps. Only [NextRetryAfter] and [NextCanceled] may send the
// same line again; after [NextWait] a resend would deliver it twice.
const (
	// NextFailed: nothing was written because a file or the station
	// could not be read or written (Verdict.Reason [inboxv1.ReasonIO]), or the
	// verdict is of a class this version does not know. Fix the cause
	// (the error says it) before sending again.
	NextFailed Next = iota
	// NextDone: the doorman acked the line as delivered (delivered-steer
	// or delivered-start). Nothing is left to do; Seen and Reply say what
	// a seen or reply wait found.
	NextDone
	// NextWait: the line is in the inbox and waits for a doorman
	// (queued-no-doorman, queued-offline, timeout, interrupted). Never
	// resend it: the doorman delivers it once it runs; watch the ack or
	// the receipts instead.
	NextWait
	// NextRetryAfter: the throttle dropped the line (dropped): it was not
	// written. Resend it after Verdict.RetryAfter ([Sender.SendRetry]
	// does).
	NextRetryAfter
	// NextRefused: the line, its sender, its target or the Sender was
	// refused, or the doorman refused the line (refused, Verdict.Reason
	// says why). Sending the same request again is refused again: change
	// it first.
	NextRefused
	// NextCanceled: the context ended before anything was written
	// (refused with [inboxv1.ReasonCanceled]). The line may be sent again.
	NextCanceled
)

// String is the step's name: failed, done, wait, retry-after, refused or
// canceled.
func (n Next) String() string {
	switch n {
	case NextDone:
		return "done"
	case NextWait:
		return "wait"
	case NextRetryAfter:
		return "retry-after"
	case NextRefused:
		return "refused"
	case NextCanceled:
		return "canceled"
	}
	return "failed"
}

// Next says what to do next with the verdict's line (see [Next]'s
// constants). It reads the class and the reason only.
func (v Verdict) Next() Next {
	switch {
	case v.Class.Delivered():
		return NextDone
	case v.Class.Waiting():
		return NextWait
	case v.Class == Dropped:
		return NextRetryAfter
	case v.Class == Refused && v.Reason == inboxv1.ReasonCanceled:
		return NextCanceled
	case v.Class == Refused && v.Reason == inboxv1.ReasonIO:
		return NextFailed
	case v.Class == Refused:
		return NextRefused
	}
	return NextFailed
}

// Waits are the waits of one send: [Sender.Wait], [Sender.SeenWait] and
// [Sender.ReplyWait], for one call (Request.Waits). Start from
// [Sender.Waits] to change one of them.
type Waits struct {
	Ack   time.Duration // for the doorman's ack (Sender.Wait)
	Seen  time.Duration // for the transcript row that shows the line (Sender.SeenWait)
	Reply time.Duration // for the session's answer (Sender.ReplyWait)
}

// Waits returns the Sender's waits, to change for one call
// (Request.Waits).
func (s *Sender) Waits() Waits {
	return Waits{Ack: s.Wait, Seen: s.SeenWait, Reply: s.ReplyWait}
}

// forCall returns the Sender a call with these waits runs with: s itself
// when the call gives none, else a copy with them.
func (s *Sender) forCall(w *Waits) *Sender {
	if w == nil {
		return s
	}
	c := *s
	c.Wait, c.SeenWait, c.ReplyWait = w.Ack, w.Seen, w.Reply
	return &c
}

// SendRetry is [Sender.Send] that, when the throttle drops the line
// ([NextRetryAfter]), waits out Verdict.RetryAfter and sends it once
// more, returning the second verdict. When ctx ends during that wait it
// returns the dropped verdict and ctx's error: nothing was written. Every
// other verdict is returned as Send returned it; each send writes its own
// receipt row.
func (s *Sender) SendRetry(ctx context.Context, req Request) (Verdict, error) {
	v, err := s.Send(ctx, req)
	if v.Next() != NextRetryAfter || err != nil {
		return v, err
	}
	t := time.NewTimer(v.RetryAfter)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return v, ctx.Err()
	case <-t.C:
	}
	return s.Send(ctx, req)
}
