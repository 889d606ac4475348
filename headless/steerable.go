package headless

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// ErrNotSteerable: a start that was to return once its session is
// steerable ended first (or its doorman never followed); its outcome is in
// the result.
var ErrNotSteerable = errors.New("the run ended before its session was steerable")

// steerablePoll is how often a start waiting to be steerable looks at the
// doorman's heartbeat and the run where no file events can be set up (the
// waits wake on the files' events, through one [fsx.Waker]).
var steerablePoll = 50 * time.Millisecond // a var for a test (export_test.go)

// heartbeatFile is the heartbeat of session sid's doorman.
func (r *Runner) heartbeatFile(sid string) string {
	return inboxv1.FilesFor(r.Config.InboxDir, sid).Heartbeat
}

// steerable reports whether a line sent to session sid now would be
// delivered: its doorman's heartbeat is fresh by the contract's stricter
// reading (claudeinbox's: last_seen within 15 s, state following, the
// session's, its pid alive).
func (r *Runner) steerable(sid string) bool {
	st := r.station()
	_, f := inbox.HeartbeatFreshness(r.heartbeatFile(sid), r.now(), sid, func(pid int) bool { return st.Proc.Alive(pid, "") })
	return f.Fresh
}

// awaitSteerable waits until the detached start res is steerable, or its
// run ends (its result file leaves started, or is lost), or ctx ends (the
// run goes on under its supervisor).
func (r *Runner) awaitSteerable(ctx context.Context, res StartResult) (StartResult, error) {
	// Armed before the first read: a heartbeat or result written after
	// it wakes the wait.
	k := fsx.NewWaker(steerablePoll, r.heartbeatFile(res.File.SessionID), res.File.ResultFile)
	defer k.Close()
	for {
		// The heartbeat first, then the file: the file returned is as
		// new as the steerable doorman. claude's doorman can follow
		// before the supervisor has written claude's pid (it writes it
		// once claude runs, after the lineage link): a file read is
		// returned only with the pid in it, and that write wakes the
		// wait. A file that cannot be read does not hold a steerable
		// start back (the last one read is returned).
		steerable := r.steerable(res.File.SessionID)
		f, err := r.ReadStartFile(res.File.ResultFile)
		if err == nil {
			res.File = f
		}
		switch {
		case err == nil && f.State != Started:
			res.Class, res.Reason = f.State, deref(f.Reason)
			return res, fmt.Errorf("%w: it ended %s", ErrNotSteerable, f.State)
		case steerable && (err != nil || f.PID != nil):
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("interrupted before the session was steerable (the run goes on under its supervisor): %w", ctx.Err())
		case <-k.C:
		}
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Run is a start handed back by [Runner.StartSteerable] once its session
// is steerable. Its methods are safe for concurrent use. A Run not made by
// StartSteerable (the zero value) has no run: its session id is
// "", and Wait returns an error matching [ErrNotSteerable] at once.
type Run struct {
	file     StartFile
	r        *Runner
	detached bool
	done     chan struct{}
	res      StartResult
	err      error
}

// SessionID is the started session's id.
func (h *Run) SessionID() string { return h.File().SessionID }

// File is the result file as it was when the session became steerable
// (state started, claude's pid in it), or the run's outcome when it ended
// first.
func (h *Run) File() StartFile {
	return h.file
}

// Wait waits for the run's end and returns its result, as [Runner.Start]
// does. ctx bounds only the wait (ctx.Err() when it ends first): a run in
// this process stops with the context given to StartSteerable, a detached
// one with its supervisor, whose outcome Wait reads from the result file
// (lost included).
func (h *Run) Wait(ctx context.Context) (StartResult, error) {
	if h.done == nil || h.r == nil {
		return StartResult{}, fmt.Errorf("%w: no run (a Run not made by StartSteerable)", ErrNotSteerable)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if h.detached {
		return h.waitFile(ctx)
	}
	select {
	case <-h.done:
		return h.res, h.err
	case <-ctx.Done():
		return StartResult{}, ctx.Err()
	}
}

func (h *Run) waitFile(ctx context.Context) (StartResult, error) {
	k := fsx.NewWaker(4*steerablePoll, h.file.ResultFile)
	defer k.Close()
	res := StartResult{File: h.file, Systemd: h.file.Unit != nil}
	for {
		if f, err := h.r.ReadStartFile(h.file.ResultFile); err == nil && f.State != Started {
			res.File, res.Class, res.Reason = f, f.State, deref(f.Reason)
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-k.C:
		}
	}
}

// StartSteerable starts a new headless session as [Runner.Start] does and
// returns as soon as a line sent to it would be delivered: its doorman
// follows the inbox. The run goes on (in this process, under ctx; with
// req.Systemd or req.Detach under its own supervisor) and [Run.Wait] gives
// its result. The start needs a doorman (req.Doorman injected or
// user-scope).
//
// The Run is never nil. When the start is refused the error is a
// *RefusedError; when the run ends before it is steerable (it failed, or
// finished before its doorman followed) the error matches
// [ErrNotSteerable] and Run.Wait returns the outcome at once.
func (r *Runner) StartSteerable(ctx context.Context, req StartRequest) (*Run, error) {
	h := &Run{r: r, done: make(chan struct{})}
	if req.Systemd || req.Detach {
		req.Detach = true
		res, err := r.Start(ctx, req)
		h.file, h.detached = res.File, res.Class == Started && err == nil
		if !h.detached {
			h.res, h.err = res, err
			close(h.done)
			return h, err
		}
		return h, nil
	}
	if req.Doorman == DoormanNone {
		req.Detach = true // refused by the start's own check, with its receipt
		res, err := r.Start(ctx, req)
		h.file, h.res, h.err = res.File, res, err
		close(h.done)
		return h, err
	}
	began := make(chan StartFile, 1)
	go func() {
		defer close(h.done)
		h.res, h.err = r.startReporting(ctx, req, func(f StartFile) { began <- f })
	}()
	return h, h.awaitInProcess(began)
}

// awaitInProcess waits until the run in this process is steerable or
// ends.
func (h *Run) awaitInProcess(began <-chan StartFile) error {
	select {
	case h.file = <-began:
	case <-h.done:
		return h.ended()
	}
	k := fsx.NewWaker(steerablePoll, h.r.heartbeatFile(h.file.SessionID))
	defer k.Close()
	for !h.r.steerable(h.file.SessionID) {
		select {
		case <-h.done:
			return h.ended()
		case <-k.C:
		}
	}
	return nil
}

// ended is the error of a run that ended before it was steerable.
func (h *Run) ended() error {
	h.file = h.res.File
	var re *RefusedError
	if errors.As(h.err, &re) {
		return h.err
	}
	if h.err != nil {
		return fmt.Errorf("%w: it ended %s: %w", ErrNotSteerable, h.res.Class, h.err)
	}
	return fmt.Errorf("%w: it ended %s", ErrNotSteerable, h.res.Class)
}
