// Package fakeowner lets a test be a Claude Code session's owner, so the
// doorman's real identity code runs unmodified: the test process writes a
// registry row for its own pid on a fake station (fakestation), listens on
// the row's door itself (fakedoor, so SO_PEERCRED names the test process),
// keeps the session's key file, and starts the doorman as its direct child
// with the environment Claude Code gives its MCP servers.
//
// It guarantees that the child runs with exactly the environment the caller
// gives plus the session's (CLAUDECODE=1, CLAUDE_CODE_SESSION_ID,
// CLAUDE_CODE_MESSAGING_SOCKET, CLAUDE_CODE_MESSAGING_TOKEN and the station
// knobs), that its stdin is a pipe the test controls (closing it is the MCP
// client's EOF), and that every child still running when the test ends is
// killed and reaped.
package fakeowner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/fakes/internal/fakewait"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// Token is the messaging token the fake session hands its children.
const Token = "00112233445566778899aabbccddeeff"

// Options configure an [Owner].
type Options struct {
	// Status is the registry status (busy, idle); default busy.
	Status string
	// Door configures the session's door (a guard, a session id check,
	// refusal rules); its Transcript is the session's, always.
	Door fakedoor.Options
}

// Owner is this test process acting as a running session. Make one with
// [New]: an Owner not made by it (the zero value) is no session:
// it writes nothing, its reads are empty, Start starts nothing (a nil
// *Child) and its waits return an error.
type Owner struct {
	Station *fakestation.Station
	Door    *fakedoor.Door
	Row     station.Row
	// Transcript is the session's transcript, where the door writes the
	// receiver's enqueue row of each line it queues (fakedoor.Options.Transcript).
	Transcript string
	tb         fakes.TB
}

// CWD is the fake session's cwd.
const CWD = "/home/u/proj"

// New makes the test process a session on a fresh fake station.
func New(tb fakes.TB, o Options) *Owner {
	tb.Helper()
	st := fakestation.New(tb)
	sid := uuid.NewString()
	tp := filepath.Join(st.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(CWD), sid+transcriptfile.Ext)
	door := o.Door
	door.Transcript = tp
	d := fakedoor.New(tb, door)
	row := st.AddSession(fakestation.Session{PID: os.Getpid(), SessionID: sid, CWD: CWD, Socket: d.Path(), Status: o.Status})
	st.WriteKey(row, Token)
	return &Owner{Station: st, Door: d, Row: row, Transcript: tp, tb: tb}
}

// SessionID is the session's id.
func (o *Owner) SessionID() string {
	return o.Row.SessionID
}

// errNoSession is the answer of an Owner not made by New.
var errNoSession = errors.New("fakeowner: no session (an Owner not made by New)")

// made reports whether o has a station (New gives it one).
func (o *Owner) made() bool { return o != nil && o.Station != nil }

// Files are the session's inbox files.
func (o *Owner) Files() inboxv1.Files {
	if !o.made() {
		return inboxv1.Files{}
	}
	return inboxv1.FilesFor(o.Station.Paths.InboxDir, o.Row.SessionID)
}

// Env is what Claude Code adds to an MCP child's environment, plus the
// station's knobs.
func (o *Owner) Env() []string {
	if !o.made() {
		return nil
	}
	return append(o.Station.Env(),
		"CLAUDECODE=1",
		"CLAUDE_CODE_SESSION_ID="+o.Row.SessionID,
		"CLAUDE_CODE_MESSAGING_SOCKET="+o.Row.MessagingSocketPath,
		"CLAUDE_CODE_MESSAGING_TOKEN="+Token,
	)
}

// SetStatus rewrites the session's registry status.
func (o *Owner) SetStatus(status string) {
	if o.made() {
		o.Station.SetStatus(o.Row.PID, status)
	}
}

// Child is a process the owner started. A Child not started by
// [Owner.Start] (the zero value) has no process: PID is 0, Done is
// closed, Signal and Wait return an error.
type Child struct {
	Cmd   *exec.Cmd
	Stdin io.WriteCloser

	stdout, stderr lockedBuffer
	done           chan struct{}
	err            error
}

// Start starts cmd as the owner's child. The session's environment is
// appended to cmd.Env. Stdout and stderr are captured unless set.
func (o *Owner) Start(cmd *exec.Cmd) *Child {
	if !o.made() || o.tb == nil {
		return nil
	}
	o.tb.Helper()
	if cmd == nil {
		o.tb.Fatalf("fakeowner: Start(nil)")
		return nil
	}
	c := &Child{Cmd: cmd, done: make(chan struct{})}
	cmd.Env = append(cmd.Env, o.Env()...)
	in, err := cmd.StdinPipe()
	if err != nil {
		o.tb.Fatalf("fakeowner: %v", err)
	}
	c.Stdin = in
	if cmd.Stdout == nil {
		cmd.Stdout = &c.stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &c.stderr
	}
	if err := cmd.Start(); err != nil {
		o.tb.Fatalf("fakeowner: %v", err)
	}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	o.tb.Cleanup(func() {
		c.Stdin.Close()
		cmd.Process.Kill()
		<-c.done
	})
	return c
}

// PID is the child's pid.
func (c *Child) PID() int {
	if !c.started() {
		return 0
	}
	return c.Cmd.Process.Pid
}

// started reports whether c was started by Owner.Start.
func (c *Child) started() bool {
	return c != nil && c.done != nil && c.Cmd != nil && c.Cmd.Process != nil
}

// errNoChild is the answer of a Child not started by Owner.Start.
var errNoChild = errors.New("fakeowner: no child process (a Child not started by Owner.Start)")

// Stdout and Stderr return what the child wrote so far.
func (c *Child) Stdout() string {
	return c.stdout.String()
}
func (c *Child) Stderr() string {
	return c.stderr.String()
}

// Signal sends sig to the child.
func (c *Child) Signal(sig os.Signal) error {
	if !c.started() {
		return errNoChild
	}
	return c.Cmd.Process.Signal(sig)
}

// Done is closed when the child has exited.
func (c *Child) Done() <-chan struct{} {
	if !c.started() {
		done := make(chan struct{})
		close(done)
		return done
	}
	return c.done
}

// Wait waits for the child and returns its exit code (-1 when killed by a
// signal) or ctx's error.
func (c *Child) Wait(ctx context.Context) (int, error) {
	if !c.started() {
		return 0, errNoChild
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	var ee *exec.ExitError
	if c.err == nil {
		return 0, nil
	}
	if errors.As(c.err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, c.err
}

// Append appends one line to the inbox as a sender does and returns its
// offset.
func (o *Owner) Append(line string) int64 {
	if !o.made() || o.tb == nil {
		return 0
	}
	o.tb.Helper()
	off, err := inbox.AppendInbox(o.Files().Inbox, []byte(line))
	if err != nil {
		o.tb.Fatalf("fakeowner: %v", err)
	}
	return off
}

// Acks returns the JSON acks written so far.
func (o *Owner) Acks() []inboxv1.Ack {
	if !o.made() {
		return nil
	}
	f, err := fsx.OpenRead(o.Files().Ack)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []inboxv1.Ack
	inbox.ScanAcks(f, 0, func(a inboxv1.Ack, _ int64) bool { out = append(out, a); return true })
	return out
}

// filePoll is how often the Owner's waits look at the files its doorman
// child (another process) writes.
const filePoll = 5 * time.Millisecond

// WaitAcks waits until at least n acks are written, and returns the acks
// written by then (with ctx.Err() when ctx ended first).
func (o *Owner) WaitAcks(ctx context.Context, n int) ([]inboxv1.Ack, error) {
	if !o.made() {
		return nil, errNoSession
	}
	var a []inboxv1.Ack
	err := fakewait.Until(ctx, nil, filePoll, nil, nil, func() bool {
		a = o.Acks()
		return len(a) >= n
	})
	return a, err
}

// WaitHeartbeat waits until the heartbeat satisfies ok (a nil ok: until
// there is one).
func (o *Owner) WaitHeartbeat(ctx context.Context, ok func(inboxv1.Heartbeat) bool) (inboxv1.Heartbeat, error) {
	if !o.made() {
		return inboxv1.Heartbeat{}, errNoSession
	}
	var h inboxv1.Heartbeat
	err := fakewait.Until(ctx, nil, filePoll, nil, nil, func() bool {
		var err error
		h, err = inbox.ReadHeartbeat(o.Files().Heartbeat)
		return err == nil && (ok == nil || ok(h))
	})
	return h, err
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
