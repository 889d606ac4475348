// Package progress draws one live status line on a terminal: the phase of
// a long call, its elapsed time and what the session is doing (the turn,
// the tool running, the tokens so far: an Activity), redrawn in place ("\r", the text cut
// to the terminal's width, erase to the end of the line) and cleared when
// the call ends. The caller decides whether there is a terminal at all
// (never with --json, never when stderr is not one); the line never goes
// into a receipt or onto stdout.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/internal/termsafe"
)

// DefaultEvery is the least time between two redraws of the same phase.
const DefaultEvery = 250 * time.Millisecond

// erase ends a frame: erase from the cursor to the end of the line.
const erase = "\x1b[K"

// A Line is one status line on W. Its zero value is not usable: W and Now
// are required. A Line is safe for concurrent use.
type Line struct {
	W io.Writer
	// Now is the clock; Start reads it once, each Tick again.
	Now func() time.Time
	// Width returns the terminal's width in columns; the frame is cut to
	// one less (a full line would wrap on some terminals). Nil or a
	// result below 2: no cut.
	Width func() int
	// ASCII keeps the frame to ASCII (a locale that is not UTF-8).
	ASCII bool
	// Every is the least time between two redraws when only the elapsed
	// time changed; 0 is DefaultEvery. A new phase is drawn at once.
	Every time.Duration
	// Prefix starts every frame ("oo-claude send").
	Prefix string

	mu      sync.Mutex
	start   time.Time
	phase   string
	act     Activity
	last    string
	lastAt  time.Time
	drawn   bool
	stopped bool
}

// Start sets the line's first phase and draws it; elapsed counts from now.
func (l *Line) Start(phase string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.start = l.Now()
	l.phase = phase
	l.draw(l.start)
}

// Set changes the phase and draws it at once when it is new.
func (l *Line) Set(phase string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if phase == l.phase {
		return
	}
	l.phase = phase
	l.draw(l.Now())
}

// SetActivity changes what the session is doing and draws it at once when
// it changed.
func (l *Line) SetActivity(a Activity) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a == l.act {
		return
	}
	l.act = a
	l.draw(l.Now())
}

// Tick redraws the line when its text changed (the elapsed seconds) and
// Every has passed since the last frame.
func (l *Line) Tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.Now()
	every := l.Every
	if every <= 0 {
		every = DefaultEvery
	}
	if now.Sub(l.lastAt) < every {
		return
	}
	l.draw(now)
}

// Stop clears the line (when a frame was drawn) and draws no more.
func (l *Line) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.stopped = true
	if l.drawn {
		io.WriteString(l.W, "\r"+erase)
	}
}

// Text is the frame's text for phase after elapsed, before any cut.
func (l *Line) Text(phase string, elapsed time.Duration) string {
	sep := " · "
	if l.ASCII {
		sep = " - "
	}
	s := fmt.Sprintf("%ds", int(elapsed/time.Second))
	if l.Prefix != "" {
		s = l.Prefix + ": " + s
	}
	if phase != "" {
		s += sep + termsafe.Escape(phase)
	}
	if a := l.act.text(sep); a != "" {
		s += sep + a
	}
	return s
}

// An Activity is what a session shows of its work in its transcript, as
// far as it is known: the zero value shows nothing.
type Activity struct {
	// Turn is the model requests answered so far (assistant messages);
	// 0 shows none.
	Turn int
	// Tool is the tool the model called and whose result has not come
	// yet ("" when none runs).
	Tool string
	// Tokens is the tokens of the answered requests so far (input, cache
	// and output, as their usage reports them); 0 shows none. It is no
	// cost: the transcript holds no price (Claude Code writes its cost
	// only when the process ends).
	Tokens int64
}

func (a Activity) text(sep string) string {
	var parts []string
	if a.Turn > 0 {
		parts = append(parts, fmt.Sprintf("turn %d", a.Turn))
	}
	if a.Tool != "" {
		parts = append(parts, "running "+termsafe.Escape(a.Tool))
	}
	if a.Tokens > 0 {
		parts = append(parts, Tokens(a.Tokens)+" tokens")
	}
	return strings.Join(parts, sep)
}

// Tokens is a count of tokens for a person: 950, 12.3k, 4.1M.
func Tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

func (l *Line) draw(now time.Time) {
	if l.stopped || l.W == nil {
		return
	}
	text := l.cut(l.Text(l.phase, now.Sub(l.start)))
	if text == l.last && l.drawn {
		return
	}
	l.last, l.lastAt, l.drawn = text, now, true
	io.WriteString(l.W, "\r"+text+erase)
}

// cut keeps text to the width less one, in characters (the text is the
// line's own: no wide characters), and to ASCII when asked.
func (l *Line) cut(text string) string {
	if l.ASCII {
		b := make([]rune, 0, len(text))
		for _, r := range text {
			if r >= utf8.RuneSelf {
				r = '?'
			}
			b = append(b, r)
		}
		text = string(b)
	}
	if l.Width == nil {
		return text
	}
	w := l.Width() - 1
	if w < 1 {
		return text
	}
	if utf8.RuneCountInString(text) <= w {
		return text
	}
	r := []rune(text)
	return string(r[:w])
}

// Run ticks l on every value of tick until the returned stop is called;
// stop ends the ticking goroutine, then clears the line. stop is safe to
// call more than once.
func (l *Line) Run(tick <-chan time.Time) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-done:
				return
			case <-tick:
				l.Tick()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-ended
			l.Stop()
		})
	}
}
