package headless

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// Resume defaults (v0.1); the model and timeout come from the Config.
const (
	DefaultResumeMaxTurns = 1
	DefaultBudgetUSD      = 0.25
)

// ResumeRequest is one headless turn into a session that is not running.
// Zero fields take the defaults: Config.ResumeModel, 1 turn, 0.25 USD, no
// tools (--tools ""), the recorded cwd, Config.ResumeTimeout.
type ResumeRequest struct {
	SessionID string
	Line      string
	Model     string
	MaxTurns  int
	Budget    float64 // USD
	Tools     string  // --tools; "" allows none
	CWD       string  // must encode to the transcript's directory
	Timeout   time.Duration
}

// Why a session is held (ResumeResult.HeldBy), as receipts name it.
const (
	HeldByRegistry  = "registry-row" // a live registry row names the session
	HeldByHeartbeat = "heartbeat"    // its doorman's heartbeat is fresh
	HeldByProcess   = "process"      // a running process names it on its command line
	HeldByLock      = "lock"         // another resume holds its lock
)

// ResumeResult is what a resume did.
type ResumeResult struct {
	Class     Class
	SessionID string
	Line      string
	Reason    string // why refused, held or failed
	HeldBy    string // one of the HeldBy constants
	HeldPID   int    // the live row's or the process's pid, when held by one
	Doorman   *receipt.Doorman

	CWD        string
	Transcript string
	Model      string
	MaxTurns   int
	Budget     float64
	Tools      string
	Timeout    time.Duration
	Argv       []string // claude's argv, the line replaced by <line>

	PID        int // the claude child's pid
	ExitCode   *int
	Parsed     bool // a result object was found
	Claude     ClaudeResult
	StderrTail string
	Duration   time.Duration
	// At is when the verdict was reached (the receipt's ts).
	At time.Time
	// ReceiptWriteError is set when the receipt could not be written.
	ReceiptWriteError *string
}

// LinePlaceholder replaces the line (or prompt) in argv kept in receipts and
// result files.
const LinePlaceholder = "<line>"

// ResumeArgv returns v0.1's argv for a resume, without argv[0].
func ResumeArgv(sid, model string, maxTurns int, tools string, budget float64, line string) []string {
	return []string{"-p", "--resume", sid, "--output-format", "json", "--model", model,
		"--max-turns", strconv.Itoa(maxTurns), "--tools", tools,
		"--permission-mode", "dontAsk", "--strict-mcp-config",
		"--max-budget-usd", formatUSD(budget), line}
}

func formatUSD(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// CheckLine applies the resume line rules: the inbox contract's (not empty,
// no newline, at most 16 KiB, UTF-8, no NUL) and not starting with "-", so
// claude can never read it as a flag.
func CheckLine(line string) error {
	if err := claudeinbox.CheckLine([]byte(line)); err != nil {
		return fmt.Errorf("%w: %w", ErrBadLine, err)
	}
	if strings.HasPrefix(strings.TrimLeft(line, " \t"), "-") {
		return fmt.Errorf("%w: starts with '-'", ErrBadLine)
	}
	return nil
}

// checkWord checks a flag value that must not be read as a flag or carry
// control characters.
func checkWord(v string, sentinel error, allowEmpty bool) error {
	if v == "" && allowEmpty {
		return nil
	}
	if v == "" || strings.HasPrefix(v, "-") || len(v) > 4096 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%w: %q", sentinel, v)
	}
	return nil
}

// Resume gives a session that is not running one headless turn. The error
// is non-nil exactly when the class is Refused (a *RefusedError) or when the
// run failed on our side (class Error); the result is always filled.
func (r *Runner) Resume(ctx context.Context, req ResumeRequest) (ResumeResult, error) {
	res, err := r.resume(ctx, req)
	res.At = r.now()
	row := res.Row(r.ClientVersion)
	res.ReceiptWriteError = r.appendReceipt(row)
	return res, err
}

func (r *Runner) resume(ctx context.Context, req ResumeRequest) (ResumeResult, error) {
	res := ResumeResult{
		SessionID: req.SessionID, Line: req.Line,
		Model: req.Model, MaxTurns: req.MaxTurns, Budget: req.Budget, Tools: req.Tools, Timeout: req.Timeout,
	}
	if res.Model == "" {
		res.Model = r.Config.ResumeModel
	}
	if res.MaxTurns == 0 {
		res.MaxTurns = DefaultResumeMaxTurns
	}
	if res.Budget == 0 {
		res.Budget = DefaultBudgetUSD
	}
	if res.Timeout == 0 {
		res.Timeout = r.Config.ResumeTimeout
	}
	refuse := func(reason string, err error) (ResumeResult, error) {
		res.Class, res.Reason = Refused, reason
		return res, &RefusedError{Op: "resume", Reason: reason, Err: err}
	}
	switch {
	case !station.IsSessionID(req.SessionID):
		return refuse("bad-session-id", fmt.Errorf("%w: %q", ErrBadSessionID, req.SessionID))
	case CheckLine(req.Line) != nil:
		return refuse("bad-line", CheckLine(req.Line))
	case checkWord(res.Model, ErrBadModel, false) != nil:
		return refuse("bad-model", checkWord(res.Model, ErrBadModel, false))
	case checkWord(res.Tools, ErrBadTools, true) != nil:
		return refuse("bad-tools", checkWord(res.Tools, ErrBadTools, true))
	case res.MaxTurns < 1 || res.Budget <= 0 || res.Timeout <= 0:
		return refuse("bad-limits", ErrBadLimits)
	case !filepath.IsAbs(r.Config.ClaudeBin):
		return refuse("bad-binary", fmt.Errorf("claude binary %q: %w", r.Config.ClaudeBin, ErrNotAbsolute))
	}
	sid := req.SessionID

	// One driver per session: the lock first, held to the end of the turn,
	// so two resumes racing past the other checks cannot both run.
	lock, err := fsx.TryLock(ResumeLockPath(r.Config.Paths, sid))
	if errors.Is(err, fsx.ErrLocked) {
		res.Class, res.HeldBy, res.Reason = HeldBySession, HeldByLock, "another oo-claude resume of this session runs"
		return res, nil
	}
	if errors.Is(err, fsx.ErrSymlink) || errors.Is(err, fsx.ErrNotRegular) || errors.Is(err, fsx.ErrUntrusted) {
		return refuse("bad-lock", fmt.Errorf("lock: %w", err))
	}
	if err != nil {
		res.Class, res.Reason = Error, "lock: "+err.Error()
		return res, err
	}
	defer lock.Unlock()
	if held := r.heldBy(sid, &res); held {
		res.Class = HeldBySession
		return res, nil
	}

	// The project directory, from the transcript.
	path, err := transcript.Locate(r.Config.ProjectsDir, sid, "")
	switch {
	case errors.Is(err, transcript.ErrAmbiguous):
		return refuse("ambiguous-transcript", fmt.Errorf("%w: %w", ErrAmbiguous, err))
	case err != nil:
		return refuse("no-transcript", fmt.Errorf("%w: %w", ErrNoTranscript, err))
	}
	res.Transcript = path
	projDir := filepath.Base(filepath.Dir(path))
	if req.CWD != "" {
		cwd, err := realDir(req.CWD)
		if err != nil {
			return refuse("no-usable-cwd", fmt.Errorf("%w: %w", ErrNoCWD, err))
		}
		if !transcript.CWDMatches(projDir, cwd) {
			return refuse("cwd-mismatch", fmt.Errorf("%w: %s encodes to %s, the transcript lives in %s",
				ErrCWDMismatch, cwd, transcript.EncodeProjectDir(cwd), projDir))
		}
		res.CWD = cwd
	} else {
		cwd, err := transcript.RecordedCWD(path)
		if err != nil {
			return refuse("no-usable-cwd", fmt.Errorf("%w: %w", ErrNoCWD, err))
		}
		if !transcript.CWDMatches(projDir, cwd) {
			return refuse("no-usable-cwd", fmt.Errorf("%w: the recorded cwd %s does not encode to %s", ErrNoCWD, cwd, projDir))
		}
		if _, err := realDir(cwd); err != nil {
			return refuse("no-usable-cwd", fmt.Errorf("%w: %w", ErrNoCWD, err))
		}
		res.CWD = cwd
	}

	argv := ResumeArgv(sid, res.Model, res.MaxTurns, res.Tools, res.Budget, req.Line)
	res.Argv = redactLine(argv)
	env, fds := ScrubEnv(r.environ())
	out := r.exec()(ctx, Invocation{
		Path: r.Config.ClaudeBin, Args: argv, Env: env, Dir: res.CWD, FDs: fds,
		Timeout: res.Timeout, KillGrace: r.KillGrace,
	})
	res.PID, res.Duration = out.PID, out.Duration
	res.StderrTail = TailLines(out.Stderr, 20, 4096)
	if out.ExitCode >= 0 {
		res.ExitCode = &out.ExitCode
	}
	res.Claude, res.Parsed = ParseResult(out.Stdout)
	switch {
	case out.TimedOut:
		res.Class, res.Reason = Timeout, fmt.Sprintf("no result within %s; the process group was stopped", res.Timeout)
	case out.Canceled:
		res.Class, res.Reason = Error, "interrupted; the process group was stopped"
	case out.Err != nil:
		res.Class, res.Reason = Error, out.Err.Error()
		return res, out.Err
	default:
		res.Class, res.Reason = classify(out.ExitCode, res.Parsed, res.Claude, sid)
		if res.Class == Completed {
			res.Class = DeliveredResume
		} else {
			res.Class = Error
		}
	}
	return res, nil
}

// classify judges a finished run: Completed when it exited 0 with a
// parseable, non-error result for sid, else Failed with the reason.
func classify(exit int, parsed bool, cr ClaudeResult, sid string) (Class, string) {
	switch {
	case !parsed:
		return Failed, fmt.Sprintf("exit %d without a parseable result", exit)
	case cr.IsError:
		return Failed, "the turn ended in an error: " + cr.Subtype
	case exit != 0:
		return Failed, fmt.Sprintf("exit %d", exit)
	case cr.SessionID != sid:
		return Failed, fmt.Sprintf("the result names session %q", cr.SessionID)
	}
	return Completed, ""
}

// ResumeLockPath is <state>/locks/resume-<sid>.lock.
func ResumeLockPath(p station.Paths, sid string) string {
	return filepath.Join(p.StateDir, "locks", "resume-"+sid+".lock")
}

// heldBy applies the registry, heartbeat and process checks.
func (r *Runner) heldBy(sid string, res *ResumeResult) bool {
	st := r.station()
	if s, ok, _ := st.LiveBySessionID(sid); ok {
		res.HeldBy, res.HeldPID = HeldByRegistry, s.PID
		res.Reason = fmt.Sprintf("the session runs (pid %d); use oo-claude send", s.PID)
		return true
	}
	files := claudeinbox.FilesFor(r.Config.InboxDir, sid)
	h, f := claudeinbox.HeartbeatFreshness(files.Heartbeat, r.now(), sid, func(pid int) bool { return st.Proc.Alive(pid, "") })
	if f.Fresh {
		res.HeldBy, res.HeldPID = HeldByHeartbeat, h.PID
		res.Reason = fmt.Sprintf("its doorman (pid %d) is alive; use oo-claude send", h.PID)
		age := f.Age.Seconds()
		var state *string
		if h.State != "" {
			state = receipt.Ptr(string(h.State))
		}
		res.Doorman = &receipt.Doorman{Fresh: true, PID: receipt.Ptr(h.PID), Age: &age, State: state}
		return true
	}
	if pid := ProcessNaming(st.Proc, sid, r.pid()); pid != 0 {
		res.HeldBy, res.HeldPID = HeldByProcess, pid
		res.Reason = fmt.Sprintf("process %d names the session on its command line; use oo-claude send", pid)
		return true
	}
	return false
}

// ProcessNaming returns the pid of a running process (other than skip)
// whose command line names sid as --resume, -r or --session-id (also in the
// --flag=value form), or 0.
func ProcessNaming(p station.Proc, sid string, skip int) int {
	pids, err := p.Pids()
	if err != nil {
		return 0
	}
	for _, pid := range pids {
		if pid == skip {
			continue
		}
		args, err := p.Cmdline(pid)
		if err != nil || !NamesSession(args, sid) {
			continue
		}
		if info, err := p.Info(pid); err != nil || info.Zombie() {
			continue
		}
		return pid
	}
	return 0
}

// NamesSession reports whether a command line names sid as the session it
// resumes or creates.
func NamesSession(args []string, sid string) bool {
	for i, a := range args {
		switch a {
		case "--resume", "-r", "--session-id":
			if i+1 < len(args) && strings.EqualFold(args[i+1], sid) {
				return true
			}
		}
		for _, f := range []string{"--resume=", "--session-id=", "-r="} {
			if v, ok := strings.CutPrefix(a, f); ok && strings.EqualFold(v, sid) {
				return true
			}
		}
	}
	return false
}

// realDir resolves dir to an absolute, symlink-free directory.
func realDir(dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%q: %w", dir, ErrNotAbsolute)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s: not a directory", real)
	}
	return real, nil
}

// redactLine returns argv with its last element (the line or prompt)
// replaced by [LinePlaceholder].
func redactLine(argv []string) []string {
	out := append([]string(nil), argv...)
	if len(out) > 0 {
		out[len(out)-1] = LinePlaceholder
	}
	return out
}

// Row is the receipt row of the result.
func (res ResumeResult) Row(clientVersion string) receipt.ResumeRow {
	row := receipt.ResumeRow{
		Kind:      receipt.KindResume,
		Class:     string(res.Class),
		Delivered: res.Class == DeliveredResume,
		Target:    res.SessionID,
		Line:      receipt.Ptr(res.Line),
		Bytes:     receipt.Ptr(len(res.Line)),
		Model:     receipt.Ptr(res.Model),
		MaxTurns:  receipt.Ptr(res.MaxTurns),
		BudgetUSD: receipt.Ptr(res.Budget),
		Tools:     receipt.Ptr(res.Tools),
		Argv:      res.Argv,
		Doorman:   res.Doorman,
	}
	if !res.At.IsZero() {
		row.TS, row.TSMS = receipt.Stamp(res.At)
	}
	row.SHA256 = receipt.Ptr(sha256Hex(res.Line))
	if station.IsSessionID(res.SessionID) {
		row.SessionID = receipt.Ptr(res.SessionID)
	}
	if clientVersion != "" {
		row.ClientVersion = receipt.Ptr(clientVersion)
	}
	if res.Reason != "" {
		row.Reason = receipt.Ptr(res.Reason)
	}
	if res.HeldBy != "" {
		row.HeldBy = receipt.Ptr(res.HeldBy)
		row.Running = receipt.Ptr(res.HeldBy != HeldByLock)
		row.Hint = receipt.Ptr("oo-claude send " + res.SessionID + " \"<line>\"")
		if res.HeldPID != 0 && res.HeldBy != HeldByHeartbeat {
			row.PID = receipt.Ptr(res.HeldPID)
		}
	} else if res.PID != 0 {
		row.PID = receipt.Ptr(res.PID)
	}
	if res.CWD != "" {
		row.CWD = receipt.Ptr(res.CWD)
	}
	if res.Transcript != "" {
		row.Transcript = receipt.Ptr(res.Transcript)
	}
	if res.Argv != nil || res.PID != 0 { // claude ran
		row.Run = report(res.ExitCode, res.StderrTail, res.Duration, res.Claude, res.Parsed)
	}
	if res.ReceiptWriteError != nil {
		row.ReceiptWriteError = res.ReceiptWriteError
	}
	return row
}
