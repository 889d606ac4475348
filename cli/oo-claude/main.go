// Command oo-claude reaches the Claude Code sessions of this machine: it
// steers a running session, resumes a sleeping one for one headless turn,
// starts new steerable headless sessions, reads transcripts, lists sessions
// with their riders, inboxes and lineage, and checks readiness.
//
// The command is a thin shell: every verb parses its flags, calls the
// oo-claude library and maps the result to an exit code. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/termsafe"
)

func main() { os.Exit(mainWith(osProc())) }

// mainWith is main with the process p: the verb's exit code.
func mainWith(p proc) int {
	// The process ends with its verb: signalContext's stop is not
	// called, since signal.Stop waits for the runtime's signal goroutine
	// to go idle (futex round trips between threads: up to milliseconds
	// on a busy machine, after the verdict is printed). A signal after
	// the verb returned changes nothing: the exit code is the verb's.
	ctx := context.Background()
	if handlesSignals(os.Args[1:]) {
		growStack() // version and help do not go deep
		ctx, p.armed, _ = signalContext()
	}
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, p)
	return exitCode(err, termsafe.NewWriter(os.Stderr))
}

// handlesSignals reports whether the verb of args acts on SIGINT and
// SIGTERM (signalContext). Every verb that waits or writes does; version
// and help (and no verb: the usage) only print, so a signal ends them as
// it ends any program, and they skip the handler's cost (os/signal starts
// two threads: a quarter of a millisecond, a fifth of `version`).
func handlesSignals(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "version", "help", "-h", "-help", "--help":
		return false
	}
	return true
}

// stackReach is how deep, in bytes, a verb's calls reach on the main
// goroutine's stack, with room to spare: a send's deepest call (reading
// a registry row, under the sender's steps and the flag parsing) starts
// 15 KiB down.
const stackReach = 20 << 10

// growStack grows the calling goroutine's stack, once and while it is
// shallow, to hold stackReach. A goroutine starts with a small stack,
// which the runtime copies to one twice its size each time a call would
// overflow it; each copy walks every frame on the stack through the
// binary's tables of frames, pages a short process has not touched
// before. A send grew the main goroutine's stack four times, the last two
// with some twenty frames on it: half a millisecond of a 10 ms send on
// a machine where a page fault costs 13 µs (BENCHMARKS.md). One frame of
// stackReach bytes makes the runtime take the large stack at once and
// copy main's few frames.
//
//go:noinline
func growStack() byte {
	var reach [stackReach]byte
	return reach[len(os.Args)%stackReach] // a read, so the frame is kept
}

// signalContext is the verbs' context: SIGINT and SIGTERM cancel it, with
// the signal as its cause (a signalCause), so the library names the
// signal in what it reports (claudeinbox's Verdict.InterruptedBy) and a
// verb exits as shells expect (signalExit).
//
// The handler is installed on a goroutine of its own, and armed returns
// once it is: os/signal's first Notify starts two threads and waits for
// them (half a millisecond where threads start slowly), which the verb's
// flag parsing and, for send, the send's reads go on beside. Each verb
// calls armed before its first wait or write (run does after the parse;
// send just before its first write, through claudeinbox's
// Sender.BeforeWrite, after stdin, the registry and the heartbeat are
// read), so a signal that comes before the handler (as one during the
// runtime's start always could) ends a process that has written
// nothing, by the signal's default action; one after it gets the verb's
// verdict.
func signalContext() (ctx context.Context, armed, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	installed := make(chan struct{})
	done := make(chan struct{})
	go func() {
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		close(installed)
		select {
		case s := <-ch:
			cancel(signalCause{s})
		case <-done:
		}
	}()
	armed = func() { <-installed }
	return ctx, armed, func() {
		<-installed
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// signalCause is the cause of a context a signal ended. It matches
// context.Canceled, and its Signal method is how the library learns the
// signal.
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string        { return fsx.SignalName(c.sig) + " received" }
func (c signalCause) Signal() os.Signal    { return c.sig }
func (c signalCause) Is(target error) bool { return target == context.Canceled }

// signalExit is the exit of a verb a signal interrupted: 128 + the
// signal's number (130 for SIGINT, 143 for SIGTERM), as shells expect; nil
// when no signal ended ctx. What the verb found is printed (and in its
// receipt) already.
func signalExit(ctx context.Context) error {
	var c signalCause
	if !errors.As(context.Cause(ctx), &c) {
		return nil
	}
	if code := fsx.SignalExitCode(c.sig); code > 0 {
		return &exitError{code: code}
	}
	return nil
}

// Exit codes shared by every verb. send, resume and start interrupted by
// SIGINT or SIGTERM exit 128 + the signal's number (signalExit).
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// exitError carries a verb's exit code. Its message, if any, has already
// been printed (or is printed by exitCode).
type exitError struct {
	code int
	err  error // nil: the verb printed everything it had to say
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitWith returns an error that makes the process exit with code; code 0
// returns nil.
func exitWith(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code}
}

// usageError is a command line that cannot be run.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// exitCode maps run's error to the process exit code, printing the message
// of errors that were not printed yet.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "oo-claude: %v\n", ee.err)
		}
		return ee.code
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "oo-claude: %v\n", ue.msg)
		return exitUsage
	}
	fmt.Fprintf(stderr, "oo-claude: %v\n", err)
	return exitFail
}
