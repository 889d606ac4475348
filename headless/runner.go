package headless

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/ids"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
)

// Class is the verdict of a resume or a start.
type Class string

// Resume classes (COMPATIBILITY.md, "Verdict classes and exit codes").
const (
	DeliveredResume Class = "delivered-resume" // parseable result, is_error false, the same session id
	Refused         Class = "refused"          // bad request; nothing ran
	HeldBySession   Class = "held-by-session"  // the session runs (or another resume holds it); send to it instead
	Errored         Class = "error"            // claude failed or the turn ended in an error
	Timeout         Class = "timeout"          // no result in time; the process group was stopped
)

// Start classes (COMPATIBILITY.md, "Verdict classes and exit codes");
// Refused and Timeout are shared.
const (
	Completed Class = "completed" // the run ended with a parseable, non-error result
	Started   Class = "started"   // StartRequest.Systemd: the unit was started; the result file follows it
	Failed    Class = "failed"    // claude failed or the run ended in an error
	// Lost is a result file's state only, never a start's verdict: the
	// file was started and its supervisor is gone without writing the
	// outcome (killed, OOM-killed, a reboot); claude died with it. Its
	// readers ([ReadStartFile], the observatory) report it so, and the
	// first that can take the session's lock writes it, with ended_at and
	// a reason beginning "supervisor-gone". Its exit code is 4.
	Lost Class = "lost"
)

// ResumeClasses returns every class a resume can end in, in the
// contract's order (COMPATIBILITY.md, "Verdict classes and exit codes"):
// the list the CLI's help prints resume's exit codes from.
func ResumeClasses() []Class {
	return []Class{DeliveredResume, Refused, HeldBySession, Errored, Timeout}
}

// StartClasses returns every class a start can end in, in the contract's
// order; Lost is a result file's state, never a start's verdict, and is
// not among them.
func StartClasses() []Class {
	return []Class{Completed, Started, Refused, Failed, Timeout}
}

// ExitCode is the exit code the contract gives the class: 0
// delivered-resume, completed and started; 1 refused; 3 held-by-session;
// 4 error and failed; 5 timeout.
func (c Class) ExitCode() int {
	switch c {
	case DeliveredResume, Completed, Started:
		return 0
	case Refused:
		return 1
	case HeldBySession:
		return 3
	case Errored, Failed, Lost:
		return 4
	case Timeout:
		return 5
	}
	return 4
}

// Refusals a caller can act on; they arrive wrapped in a *RefusedError.
// The other refusals (a bad line, model, tools list, name, session id,
// limit or path: the request's own fault) are told apart by their
// Reason (errors.Is(err, ReasonBadModel)).
var (
	// ErrNoTranscript: a resume found no usable transcript of the
	// session: none (transcript.ErrNotFound), a candidate that is not a
	// regular file (transcript.ErrNotRegular), or a projects directory
	// that cannot be read; transcript's error is wrapped beside it.
	// Several transcripts are not this but transcript.ErrAmbiguous
	// (RefusedError.Reason ambiguous-transcript).
	ErrNoTranscript = errors.New("no transcript for the session")
	ErrNoCWD        = errors.New("no usable cwd")
	ErrCWDMismatch  = errors.New("CWD does not encode to the transcript's project dir")
	ErrSessionInUse = errors.New("session id already in use")
	// ErrNothingToDeliver: a resume without a line when none waits in
	// the inbox (oo-claude never makes up a line to start a turn).
	ErrNothingToDeliver = errors.New("no line given and none waits in the session's inbox")
	// ErrRegistryUnreadable: the registry or the process table cannot be
	// read, and no answer is never "no session runs".
	ErrRegistryUnreadable = errors.New("cannot tell whether the session runs")
)

// The request's own faults, told apart by RefusedError.Reason.
var (
	errBadLine       = errors.New("bad line")
	errBadSessionID  = errors.New("not a session id (UUID)")
	errBadModel      = errors.New("bad model name")
	errBadLimits     = errors.New("max turns, budget and timeout must be positive")
	errBadTools      = errors.New("bad tools list")
	errBadName       = errors.New("bad name")
	errNotAbsolute   = errors.New("path must be absolute")
	errBadResultFile = errors.New("not a result file of a detached start")
)

// RefusedError is why a request was refused before anything ran.
// errors.Is matches it against its Reason (errors.Is(err,
// headless.ReasonBadModel)) and, through Unwrap, its cause (the Err
// sentinels above).
type RefusedError struct {
	Op string // resume, start
	// Reason is one of the Reason constants (the strings receipts record):
	// bad-session-id, bad-line, bad-model, bad-tools, bad-limits,
	// bad-binary, bad-name, bad-doorman, bad-out, bad-inbox, bad-lock,
	// lock, bad-result-file, bad-parent, registry-unreadable,
	// no-transcript, ambiguous-transcript, no-usable-cwd, cwd-mismatch,
	// nothing-to-deliver, session-in-use.
	Reason inboxv1.Reason
	Err    error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s refused (%s): %v", e.Op, e.Reason, e.Err)
}

// Unwrap returns the cause.
func (e *RefusedError) Unwrap() error { return e.Err }

// Is reports whether target is the refusal's reason.
func (e *RefusedError) Is(target error) bool {
	r, ok := target.(inboxv1.Reason)
	return ok && r == e.Reason
}

// Runner runs resumes and starts on one station. Fields left zero take the
// documented defaults.
type Runner struct {
	// Config holds the paths, the binaries (ClaudeBin, SystemdRun: absolute)
	// and the resume/start defaults.
	Config station.Config
	// Station reads the registry and /proc; nil means station.New(Config.Paths).
	Station *station.Station
	// Environ is the environment the child inherits before scrubbing, and
	// where CLAUDE_CODE_SESSION_ID is read; nil means os.Environ.
	Environ func() []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Receipts, when set, gets one row per resume and start.
	Receipts *receipt.Writer
	// PID is this process, whose ancestors are searched for a parent
	// session and which the process scan skips; 0 means os.Getpid().
	PID int
	// NewID makes a new session id; nil means a random UUID.
	NewID func() string
	// KillGrace is the time between SIGTERM and SIGKILL after a timeout;
	// 0 means 3 s.
	KillGrace time.Duration
	// ClientVersion goes into receipts.
	ClientVersion string
	// SystemdRunTimeout bounds a systemd-run call (StartRequest.Systemd); 0
	// means 30 s. UnitStartWait is how long a detached start waits for its
	// unit to take the run; 0 means 30 s.
	SystemdRunTimeout, UnitStartWait time.Duration
}

func (r *Runner) station() *station.Station {
	if r.Station != nil {
		return r.Station
	}
	return station.New(r.Config.Paths)
}

// environ is the environment claude is started from. A relative
// CLAUDE_CONFIG_DIR is replaced with the config dir it names here
// (Config.ConfigDir): claude runs in another directory (--cwd, the
// transcript's cwd, a unit's), where the relative value would name
// another config dir than the one oo-claude reads.
func (r *Runner) environ() []string {
	env := os.Environ()
	if r.Environ != nil {
		env = r.Environ()
	}
	return absConfigDir(env, r.Config.ConfigDir)
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) pid() int {
	if r.PID != 0 {
		return r.PID
	}
	return os.Getpid()
}

func (r *Runner) newID() string {
	if r.NewID != nil {
		return r.NewID()
	}
	return ids.New()
}

// appendReceipt writes row and returns the write error as text (for
// receipt_write_error), nil when written or when there is no writer.
func (r *Runner) appendReceipt(row any) *string {
	if r.Receipts == nil {
		return nil
	}
	if err := r.Receipts.Append(row); err != nil {
		return jsonrow.Ptr(err.Error())
	}
	return nil
}

// absConfigDir returns environ with a relative CLAUDE_CONFIG_DIR (each
// occurrence) replaced by dir, when dir is absolute; else environ as it is.
func absConfigDir(environ []string, dir string) []string {
	if !filepath.IsAbs(dir) {
		return environ
	}
	var out []string
	for i, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "CLAUDE_CONFIG_DIR="); ok && v != "" && !filepath.IsAbs(v) {
			if out == nil {
				out = slices.Clone(environ)
			}
			out[i] = "CLAUDE_CONFIG_DIR=" + dir
		}
	}
	if out == nil {
		return environ
	}
	return out
}

// getenv is the value of key in environ ("" when unset; a later duplicate
// wins, as getenv does).
func getenv(environ []string, key string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
