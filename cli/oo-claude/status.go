package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/oo-family/oo-claude/internal/progress"
	"github.com/oo-family/oo-claude/internal/termsafe"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/transcript"
)

// status is the live status line of a long verb (start, resume, send
// --seen/--reply) on stderr: elapsed, the phase and, while it follows the
// session's transcript, the turn, the tool running and the tokens so far
// (follow), redrawn in place and
// cleared before anything else is printed. A nil *status draws nothing:
// with --json, or when stderr is not a terminal.
type status struct {
	line *progress.Line
	stop func()
}

// statusLine returns the verb's status line, started on phase, or nil when
// asJSON or stderr is not a terminal.
func (e *env) statusLine(verb, phase string, asJSON bool) *status {
	f, ok := e.rawStderr.(*os.File)
	if asJSON || !ok || !term.IsTerminal(f.Fd()) {
		return nil
	}
	l := &progress.Line{W: f, Now: time.Now, Prefix: "oo-claude " + verb, ASCII: !termsafe.UTF8Locale(e.getenv),
		Width: func() int {
			w, _, err := term.GetSize(f.Fd())
			if err != nil {
				return 0
			}
			return w
		}}
	l.Start(phase)
	t := time.NewTicker(progress.DefaultEvery)
	stop := l.Run(t.C)
	return &status{line: l, stop: func() { stop(); t.Stop() }}
}

// set shows a new phase.
func (s *status) set(phase string) {
	if s != nil {
		s.line.Set(phase)
	}
}

// end clears the line; nothing is drawn after it.
func (s *status) end() {
	if s != nil {
		s.stop()
	}
}

// followSession follows the transcript of session sid (cwd, when known,
// names its project directory; a session without a transcript yet gets
// the file Claude Code will create) from where it ends now. A transcript
// it cannot place leaves the line to the phase alone.
func (s *status) followSession(projectsDir, sid, cwd string) {
	if s == nil {
		return
	}
	if cwd != "" {
		if real, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = real // Claude Code names the project directory after the real path
		}
	}
	path, from, err := transcript.Witness{ProjectsDir: projectsDir}.Mark(sid, cwd)
	if err != nil {
		return
	}
	s.follow(path, from)
}

// followMaxRow bounds a transcript row the status line reads: a longer one
// (a big tool result) is skipped, its activity shown by the rows around it.
const followMaxRow = 1 << 20

// follow shows what the session's transcript at path says it does, from
// offset from on (the file need not exist yet): the turn, the tool running,
// the tokens so far. It stops with the line (end). A nil *status follows
// nothing.
func (s *status) follow(path string, from int64) {
	if s == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := transcript.Follow(ctx, path, from, transcript.FollowOptions{MaxRow: followMaxRow})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer f.Close()
		var a activity
		for {
			l, err := f.Next(ctx)
			switch {
			case ctx.Err() != nil:
				return
			case errors.Is(err, transcript.ErrTruncated) || errors.Is(err, transcript.ErrReplaced):
				a = activity{} // read again from the start
				continue
			case errors.Is(err, transcript.ErrRowTooLong):
				continue
			case err != nil:
				return // the line keeps the phase alone
			}
			if a.add(l.Raw) {
				s.line.SetActivity(a.Activity)
			}
		}
	}()
	stop := s.stop
	s.stop = func() { cancel(); <-done; stop() }
}

// activity folds a session's own transcript rows (riders' aside) into what
// the status line shows: every assistant message is a model request
// answered (its rows, one per content block, share the message id and the
// usage), a tool_use block starts a tool, a tool_result ends it.
type activity struct {
	progress.Activity
	tally transcriptfile.TokenTally
}

// add takes one row and says whether the activity changed.
func (a *activity) add(raw []byte) bool {
	row, err := transcriptfile.ParseRow(raw)
	if err != nil || row.IsSidechain || row.Message == nil {
		return false
	}
	before := a.Activity
	switch row.Type {
	case transcriptfile.RowAssistant:
		if a.tally.Add(&row) {
			a.Turn++
			a.Tokens = a.tally.Tokens
			a.Tool = ""
		}
		for _, b := range row.Message.Blocks() {
			if b.Type == "tool_use" && b.Name != "" {
				a.Tool = b.Name
			}
		}
	case transcriptfile.RowUser:
		for _, b := range row.Message.Blocks() {
			if b.Type == "tool_result" {
				a.Tool = ""
			}
		}
	}
	return a.Activity != before
}
