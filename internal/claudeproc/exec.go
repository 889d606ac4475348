package claudeproc

import (
	"bytes"
	"errors"
	"os"
	"time"
)

// Invocation is one run of an external program.
type Invocation struct {
	Path    string   // absolute; never looked up in PATH
	Args    []string // without argv[0]
	Env     []string // the child's whole environment
	Dir     string   // the child's working directory
	FDs     []PassedFD
	Timeout time.Duration // 0: no timeout (ctx still applies)
	// KillGrace is how long the process group gets between SIGTERM and
	// SIGKILL after a timeout; 0 means 3 s.
	KillGrace time.Duration
	// Stdin is the child's standard input; nil is the null device.
	Stdin *os.File
	// OnStart, when set, is called with the child's pid once it runs.
	OnStart func(pid int)
	// OnStdout, when set, gets every complete line of stdout (without its
	// newline) as it arrives, in order, from one goroutine.
	OnStdout func(line []byte)
}

// Outcome is what an Invocation did.
type Outcome struct {
	PID      int
	ExitCode int // -1 when the program did not exit on its own (killed, not started)
	Stdout   []byte
	Stderr   []byte // the last StderrKeep bytes
	TimedOut bool   // the timeout passed; the process group was stopped
	Canceled bool   // ctx ended first; the process group was stopped
	Duration time.Duration
	// Err is set when the program could not be started (or waited for).
	Err error
}

// Limits on what is kept of a child's output.
const (
	StdoutKeep = 16 << 20 // the result JSON is far smaller
	StderrKeep = 64 << 10
)

// ErrNotSupported is returned where process groups and descriptor passing
// are not implemented (everything but Linux).
var ErrNotSupported = errors.New("headless: not supported on this platform")

// ErrBadDescriptor is returned when a descriptor to pass is not open.
var ErrBadDescriptor = errors.New("credential descriptor is not open")

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	b   []byte
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// lineWriter passes every complete line written to it to fn, and the
// bytes on to w.
type lineWriter struct {
	w       *headBuffer
	fn      func([]byte)
	partial []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.fn(l.partial[:i])
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > StdoutKeep { // a line without end is not a result
		l.partial = l.partial[:0]
	}
	return n, err
}
