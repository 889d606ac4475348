package main

import (
	"os"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/oo-family/oo-claude/internal/progress"
)

// status is the live status line of a long verb (start, resume, send
// --seen/--reply) on stderr: elapsed and the phase, redrawn in place and
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
	l := &progress.Line{W: f, Now: time.Now, Prefix: "oo-claude " + verb, ASCII: !utf8Locale(e.getenv),
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
