package claudeinbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/station"
)

// endPoll is the session watch's timer where no file watch could be set
// up: the process's exit and file events (a lost event too) wake it.
const endPoll = time.Second

// sessionEnded is the cause of a wait's context when the session ended.
type sessionEnded struct{ why string }

func (e *sessionEnded) Error() string { return "the session ended: " + e.why }

// sessionEndOf returns why the session ended when that is what ended ctx.
func sessionEndOf(ctx context.Context) *sessionEnded {
	var e *sessionEnded
	if errors.As(context.Cause(ctx), &e) {
		return e
	}
	return nil
}

// watchSession returns a context that ends, with a *sessionEnded cause,
// as soon as the session ends: its claude process (pid and procStart) is
// gone, an event (station.Proc.WaitGone); its registry row is gone or
// names another session (a clean exit removes it; /clear and /resume give
// the process another id); or its doorman's heartbeat says the session
// switched. A doorman that stopped is not the session's end by itself (a
// session can restart its MCP servers and still answer): its heartbeat
// only wakes the check. stop ends the watch and waits for its goroutines.
func (s *Sender) watchSession(ctx context.Context, sess *station.Session, files inboxv1.Files) (context.Context, func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	if sess == nil {
		return wctx, func() { cancel(nil) }
	}
	end := func(why string) { cancel(&sessionEnded{why: why}) }
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if s.Station.Proc.WaitGone(wctx, sess.PID, sess.ProcStart) == nil {
			end(fmt.Sprintf("its process %d exited", sess.PID))
		}
	}()
	go func() {
		defer wg.Done()
		s.watchRow(wctx, sess, files.Heartbeat, end)
	}()
	return wctx, func() {
		cancel(nil)
		wg.Wait()
	}
}

// watchRow calls end once the session's registry row or its doorman's
// heartbeat says the session ended, or ctx ends. File events on the
// registry and inbox directories wake it (endPoll only without them).
func (s *Sender) watchRow(ctx context.Context, sess *station.Session, heartbeat string, end func(string)) {
	check := func() bool {
		if why := s.rowEnded(sess, heartbeat); why != "" {
			end(why)
			return true
		}
		return false
	}
	files := []string{heartbeat}
	if sess.File != "" {
		files = append(files, sess.File)
	}
	// Armed before the first check, so no change between them is missed.
	wake := fsx.NewWaker(endPoll, files...)
	defer wake.Close()
	if check() {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake.C:
		}
		if check() {
			return
		}
	}
}

// rowEnded says why the session ended by its registry row and heartbeat,
// "" when they say it runs. A row that cannot be read for another reason
// than its absence (written this moment, say) says nothing.
func (s *Sender) rowEnded(sess *station.Session, heartbeat string) string {
	var r station.Row
	var err error
	if sess.File != "" {
		r, err = station.ReadRow(sess.File)
	}
	switch {
	case sess.File == "":
		// No row to watch: the process and the heartbeat say it.
	case errors.Is(err, fs.ErrNotExist):
		return "its registry row is gone"
	case err == nil && r.SessionID != sess.SessionID:
		return "its process now runs session " + r.SessionID
	}
	if h, err := inbox.ReadHeartbeat(heartbeat); err == nil && h.SessionID == sess.SessionID && h.State == inboxv1.StateSwitched {
		return "its doorman says it switched to another session"
	}
	return ""
}
