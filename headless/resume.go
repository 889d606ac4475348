package headless

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/claudeproc"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// DefaultResumeMaxTurns is a resume's --max-turns when the request leaves
// it zero (COMPATIBILITY.md, "The claude command lines"); the model and
// timeout come from the Config.
const DefaultResumeMaxTurns = 1

// defaultBudgetUSD is the --max-budget-usd of a resume or start that leaves
// it zero (COMPATIBILITY.md, "The claude command lines").
const defaultBudgetUSD = 0.25

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
	CWD       string  // must encode to the transcript's directory; a relative path is taken from the process's cwd
	Timeout   time.Duration
	// Self is the absolute path of the oo-claude binary: the command of
	// the doorman injected into the resumed process, which delivers the
	// lines waiting in the session's inbox.
	Self string
}

// Why a session is held (ResumeResult.HeldBy), as receipts name it.
const (
	HeldByRegistry  = "registry-row" // a live registry row names the session
	HeldByHeartbeat = "heartbeat"    // its doorman's heartbeat is fresh
	HeldByProcess   = "process"      // a running claude process (Config.ClaudeBin) names it on its command line
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
	Argv       []string // claude's argv (the line goes on stdin, not in argv)
	// Waiting is how many lines waited in the inbox before the run,
	// PendingAfter how many still wait after it.
	Waiting, PendingAfter int64
	// Turns is every turn the process ran, in order.
	Turns []receipt.Turn
	// Note explains a result that is not plain: lines still waiting, an
	// earlier turn that ended in an error.
	Note string

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

// linePlaceholder replaces the line (or prompt) in argv kept in receipts
// and result files.
const linePlaceholder = "<line>"

// finite is v when it is a finite number (JSON can carry it), else nil.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// positive reports whether v is a finite number above zero (NaN and the
// infinities are not).
func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// checkLine applies the resume line rules: the inbox contract's (not empty,
// no newline, at most 16 KiB, UTF-8, no NUL) and not starting with "-", so
// claude can never read it as a flag.
func checkLine(line string) error {
	if err := inbox.CheckLine([]byte(line)); err != nil {
		return fmt.Errorf("%w: %w", errBadLine, err)
	}
	if strings.HasPrefix(strings.TrimLeft(line, " \t"), "-") {
		return fmt.Errorf("%w: starts with '-'", errBadLine)
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
// run failed on our side (class Errored); the result is always filled.
func (r *Runner) Resume(ctx context.Context, req ResumeRequest) (ResumeResult, error) {
	res, err := r.resume(ctx, req)
	res.At = r.now()
	row := res.Row(r.ClientVersion)
	res.ReceiptWriteError = r.appendReceipt(row)
	return res, err
}

func (r *Runner) resume(ctx context.Context, req ResumeRequest) (ResumeResult, error) {
	fl := runFlags{model: req.Model, maxTurns: req.MaxTurns, budget: req.Budget, tools: req.Tools, timeout: req.Timeout}.
		defaulted(r.Config.ResumeModel, DefaultResumeMaxTurns, r.Config.ResumeTimeout)
	res := ResumeResult{
		SessionID: req.SessionID, Line: req.Line,
		Model: fl.model, MaxTurns: fl.maxTurns, Budget: fl.budget, Tools: fl.tools, Timeout: fl.timeout,
	}
	refuse := func(reason inboxv1.Reason, err error) (ResumeResult, error) {
		res.Class, res.Reason = Refused, string(reason)
		return res, &RefusedError{Op: "resume", Reason: reason, Err: err}
	}
	if reason, err := r.checkResume(req, fl); err != nil {
		return refuse(reason, err)
	}
	sid := req.SessionID
	files := inboxv1.FilesFor(r.Config.InboxDir, sid)
	// An inbox the doorman would not trust (not a regular file, another
	// user's, writable by others) is refused before the lock and before
	// claude runs: the injected doorman would deliver nothing from it, and
	// "none waits" would be a guess.
	if err := r.checkInbox(files); err != nil {
		return refuse(ReasonBadInbox, err)
	}

	// One driver per session: the lock first, held to the end of the turn,
	// so two resumes racing past the other checks cannot both run.
	lock, err := fsx.TryLock(claudeproc.ResumeLockPath(r.Config.Paths, sid))
	switch {
	case errors.Is(err, fsx.ErrLocked):
		res.Class, res.HeldBy, res.Reason = HeldBySession, HeldByLock, "another resume or start of this session holds its lock"
		return res, nil
	case errors.Is(err, fsx.ErrSymlink) || errors.Is(err, fsx.ErrNotRegular) || errors.Is(err, fsx.ErrUntrusted):
		return refuse(ReasonBadLock, fmt.Errorf("lock: %w", err))
	case err != nil:
		res.Class, res.Reason = Errored, "lock: "+err.Error()
		return res, err
	}
	defer lock.Unlock()
	held, err := r.heldBy(sid, &res)
	if err != nil {
		return refuse(ReasonRegistryUnreadable, err)
	}
	if held {
		res.Class = HeldBySession
		return res, nil
	}
	if reason, err := r.resumeCWD(req, &res); err != nil {
		return refuse(reason, err)
	}
	res.Waiting = r.pending(sid)
	if req.Line == "" && res.Waiting == 0 {
		return refuse(ReasonNothingToDeliver, ErrNothingToDeliver)
	}
	return r.runResume(ctx, &res, req.Self, files)
}

// checkResume applies a resume request's rules, before anything is read.
func (r *Runner) checkResume(req ResumeRequest, fl runFlags) (inboxv1.Reason, error) {
	if !station.IsSessionID(req.SessionID) {
		return ReasonBadSessionID, fmt.Errorf("%w: %q", errBadSessionID, req.SessionID)
	}
	if req.Line != "" {
		if err := checkLine(req.Line); err != nil {
			return ReasonBadLine, err
		}
	}
	if reason, err := r.check(fl); err != nil {
		return reason, err
	}
	return checkSelf(req.Self)
}

// resumeCWD finds the session's transcript and the directory its turn runs
// in: req.CWD, which must encode to the transcript's project directory, or
// else the cwd the transcript recorded.
func (r *Runner) resumeCWD(req ResumeRequest, res *ResumeResult) (inboxv1.Reason, error) {
	path, err := transcript.Locate(r.Config.ProjectsDir, req.SessionID, "")
	switch {
	case errors.Is(err, transcript.ErrAmbiguous):
		return ReasonAmbiguousTranscript, err
	case err != nil:
		return ReasonNoTranscript, fmt.Errorf("%w: %w", ErrNoTranscript, err)
	}
	res.Transcript = path
	projDir := filepath.Base(filepath.Dir(path))
	if req.CWD != "" {
		cwd, err := absDir(req.CWD)
		if err != nil {
			return ReasonNoUsableCWD, fmt.Errorf("%w: %w", ErrNoCWD, err)
		}
		if !transcriptfile.CWDMatches(projDir, cwd) {
			return ReasonCWDMismatch, fmt.Errorf("%w: %s encodes to %s, the transcript lives in %s",
				ErrCWDMismatch, cwd, transcriptfile.EncodeProjectDir(cwd), projDir)
		}
		res.CWD = cwd
		return "", nil
	}
	cwd, err := transcriptfile.RecordedCWD(path)
	if err != nil {
		return ReasonNoUsableCWD, fmt.Errorf("%w: %w", ErrNoCWD, err)
	}
	if !transcriptfile.CWDMatches(projDir, cwd) {
		return ReasonNoUsableCWD, fmt.Errorf("%w: the recorded cwd %s does not encode to %s", ErrNoCWD, cwd, projDir)
	}
	if _, err := realDir(cwd); err != nil {
		return ReasonNoUsableCWD, fmt.Errorf("%w: %w", ErrNoCWD, err)
	}
	res.CWD = cwd
	return "", nil
}

// runResume runs the resumed process, its line on stdin, the doorman
// injected, and records what it did.
func (r *Runner) runResume(ctx context.Context, res *ResumeResult, self string, files inboxv1.Files) (ResumeResult, error) {
	sid := res.SessionID
	argv := claudeproc.ResumeArgv(claudeproc.ResumeArgs{SessionID: sid, Model: res.Model, MaxTurns: res.MaxTurns,
		Tools: res.Tools, MCPConfig: claudeproc.DoormanConfig(self), Budget: res.Budget})
	res.Argv = argv
	env, fds := claudeproc.ScrubEnv(r.environ())
	// Read before the run: the run's own cost-state row comes at its exit.
	before := sessionCost(res.Transcript)
	pr, pw, err := os.Pipe()
	if err != nil {
		res.Class, res.Reason = Errored, "stdin pipe: "+err.Error()
		return *res, err
	}
	defer pr.Close()
	if res.Line != "" {
		// The pipe holds 64 KiB; a line is at most 16 KiB.
		if _, err := pw.Write(claudeproc.UserMessage(res.Line)); err != nil {
			pw.Close()
			res.Class, res.Reason = Errored, "stdin: "+err.Error()
			return *res, err
		}
	}
	ctl := &stdinCloser{w: pw, results: make(chan bool, 64), done: make(chan struct{}), end: make(chan struct{}), needPrompt: res.Line != ""}
	go ctl.run(r, sid, files)
	out := claudeproc.RunProcess(ctx, claudeproc.Invocation{
		Path: r.Config.ClaudeBin, Args: argv, Env: env, Dir: res.CWD, FDs: fds, Stdin: pr,
		Timeout: res.Timeout, KillGrace: r.KillGrace, OnStdout: ctl.line,
	})
	close(ctl.done)
	<-ctl.closed()
	res.PendingAfter = r.pending(sid)
	return res.record(out, before)
}

// record keeps what the resumed process did and judges it.
// costBefore is what the session had cost before the run: its first
// turn's cost is what the run's total adds to it.
func (res *ResumeResult) record(out claudeproc.Outcome, costBefore float64) (ResumeResult, error) {
	res.PID, res.Duration = out.PID, out.Duration
	res.StderrTail = tailLines(out.Stderr, 20, 4096)
	if out.ExitCode >= 0 {
		res.ExitCode = &out.ExitCode
	}
	res.Claude, res.Parsed = parseResult(out.Stdout)
	res.Turns = parseTurns(out.Stdout, costBefore)
	switch {
	case out.TimedOut:
		res.Class, res.Reason = Timeout, fmt.Sprintf("no result within %s; the process group was stopped", res.Timeout)
	case out.Canceled:
		res.Class, res.Reason = Errored, "interrupted; the process group was stopped"
	case out.Err != nil:
		res.Class, res.Reason = Errored, out.Err.Error()
		return *res, out.Err
	default:
		res.Class, res.Reason = classify(out.ExitCode, res.Parsed, res.Claude, res.SessionID, res.StderrTail)
		if res.Class == Completed {
			res.Class = DeliveredResume
		} else {
			res.Class = Errored
		}
	}
	res.Note = joinNotes(claudeSaid(res.Parsed, res.Claude), turnsNote(res.Turns, res.PendingAfter))
	return *res, nil
}

// pending is how many lines wait in the session's inbox (0 when it cannot
// be read).
func (r *Runner) pending(sid string) int64 {
	in, err := inbox.ReadState(r.Config.InboxDir, sid, r.now(), nil)
	if err != nil {
		return 0
	}
	return in.Pending
}

// stdinCloser ends a resumed process's input once its work is done: after
// the turn of the line on stdin has its result (any turn's, without a
// line), when no line waits in the inbox (the injected doorman has
// delivered them all), or when the doorman is not fresh 10 s after that
// (it never started: the lines wait for the next resume). Closing stdin
// lets claude finish the turns it has queued and exit; closed earlier, a
// message still unread on stdin is dropped (measured).
type stdinCloser struct {
	w          *os.File
	results    chan bool // one per result event: true when a peer line started the turn
	done       chan struct{}
	end        chan struct{}
	needPrompt bool
}

func (c *stdinCloser) line(b []byte) {
	cr, ok := parseObject(bytes.TrimSpace(b))
	if !ok || cr.Type != "result" {
		return
	}
	peer := false
	if turns := parseTurns(b, 0); len(turns) == 1 {
		peer = turns[0].StartedBy == receipt.TurnByPeer
	}
	select {
	case c.results <- peer:
	default:
	}
}

func (c *stdinCloser) closed() <-chan struct{} { return c.end }

func (c *stdinCloser) run(r *Runner, sid string, files inboxv1.Files) {
	defer close(c.end)
	defer c.w.Close()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var firstResult time.Time
	for {
		select {
		case <-c.done:
			return
		case peer := <-c.results:
			if !peer {
				c.needPrompt = false
			}
			if firstResult.IsZero() && !c.needPrompt {
				firstResult = time.Now()
			}
		case <-tick.C:
		}
		if firstResult.IsZero() {
			continue
		}
		if r.pending(sid) == 0 {
			return
		}
		if time.Since(firstResult) > 10*time.Second {
			if _, f := inbox.HeartbeatFreshness(files.Heartbeat, r.now(), sid, nil); !f.Fresh {
				return
			}
		}
	}
}

// turnsNote says what the final turn's keys do not: an earlier turn that
// ended in an error, lines still waiting.
func turnsNote(turns []receipt.Turn, pendingAfter int64) string {
	var notes []string
	for i, t := range turns {
		if t.IsError && i < len(turns)-1 {
			notes = append(notes, fmt.Sprintf("turn %d of %d ended in an error: %s", i+1, len(turns), turnReason(t.Subtype, t.Result)))
		}
	}
	if pendingAfter > 0 {
		notes = append(notes, fmt.Sprintf("%d line(s) still wait in the inbox", pendingAfter))
	}
	return strings.Join(notes, "; ")
}

// claudeSaid is the note of a final turn that ended in an error: claude's
// own text ("Not logged in · Please run /login"), so the reason is in the
// note as well as in the verdict's reason.
func claudeSaid(parsed bool, cr ClaudeResult) string {
	if !parsed || !cr.IsError {
		return ""
	}
	return "claude: " + turnReason(cr.Subtype, cr.Result)
}

func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// turnReason is claude's own reason for an error result: its result text,
// else its subtype.
func turnReason(subtype string, result *string) string {
	if result != nil && strings.TrimSpace(*result) != "" {
		return strings.TrimSpace(*result)
	}
	return subtype
}

// classify judges a finished run: Completed when it exited 0 with a
// parseable, non-error result for sid, else Failed with the reason.
func classify(exit int, parsed bool, cr ClaudeResult, sid, stderrTail string) (Class, string) {
	switch {
	case !parsed:
		why := fmt.Sprintf("exit %d without a parseable result", exit)
		if last := lastLine(stderrTail); last != "" {
			why += ": " + last
		}
		return Failed, why
	case cr.IsError:
		why := "the turn ended in an error: " + turnReason(cr.Subtype, cr.Result)
		if cr.Result != nil && strings.TrimSpace(*cr.Result) != "" {
			why += " (subtype " + cr.Subtype
			if cr.TerminalReason != "" {
				why += ", terminal_reason " + cr.TerminalReason
			}
			why += ")"
		}
		return Failed, why
	case exit != 0:
		return Failed, fmt.Sprintf("exit %d", exit)
	case cr.SessionID != sid:
		return Failed, fmt.Sprintf("the result names session %q", cr.SessionID)
	}
	return Completed, ""
}

// lastLine is the last non-blank line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// heldBy applies the registry, heartbeat and process checks. An error means
// one of them could not be read: the caller refuses (fail closed).
func (r *Runner) heldBy(sid string, res *ResumeResult) (bool, error) {
	st := r.station()
	s, ok, err := st.LiveBySessionID(sid)
	if err != nil {
		return false, fmt.Errorf("%w: the session registry: %w", ErrRegistryUnreadable, err)
	}
	if ok {
		res.HeldBy, res.HeldPID = HeldByRegistry, s.PID
		res.Reason = fmt.Sprintf("the session runs (pid %d)", s.PID)
		return true, nil
	}
	files := inboxv1.FilesFor(r.Config.InboxDir, sid)
	h, f := inbox.HeartbeatFreshness(files.Heartbeat, r.now(), sid, func(pid int) bool { return st.Proc.Alive(pid, "") })
	if f.Fresh {
		res.HeldBy, res.HeldPID = HeldByHeartbeat, h.PID
		res.Reason = fmt.Sprintf("its doorman (pid %d) is alive", h.PID)
		age := f.Age.Seconds()
		var state *string
		if h.State != "" {
			state = jsonrow.Ptr(string(h.State))
		}
		res.Doorman = &receipt.Doorman{Fresh: true, PID: jsonrow.Ptr(h.PID), Age: &age, State: state}
		return true, nil
	}
	pid, err := claudeproc.ProcessNaming(st.Proc, r.Config.ClaudeBin, sid, r.pid())
	if err != nil {
		return false, fmt.Errorf("%w: the process table: %w", ErrRegistryUnreadable, err)
	}
	if pid != 0 {
		res.HeldBy, res.HeldPID = HeldByProcess, pid
		res.Reason = fmt.Sprintf("claude process %d names the session on its command line", pid)
		return true, nil
	}
	return false, nil
}

// absDir is the one cwd rule of resume and start: a relative path is taken
// from this process's cwd, then resolved to an absolute, symlink-free
// directory.
func absDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: empty", ErrNoCWD)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return realDir(abs)
}

// realDir resolves dir to an absolute, symlink-free directory.
func realDir(dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%q: %w", dir, errNotAbsolute)
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
// replaced by linePlaceholder.
func redactLine(argv []string) []string {
	out := append([]string(nil), argv...)
	if len(out) > 0 {
		out[len(out)-1] = linePlaceholder
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

		Model:     jsonrow.Ptr(res.Model),
		MaxTurns:  jsonrow.Ptr(res.MaxTurns),
		BudgetUSD: finite(res.Budget),
		Tools:     jsonrow.Ptr(res.Tools),
		Argv:      res.Argv,
		Doorman:   res.Doorman,
	}
	if !res.At.IsZero() {
		row.TS, row.TSMS = jsonrow.Stamp(res.At)
	}
	if res.Line != "" {
		row.Line, row.Bytes, row.SHA256 = jsonrow.Ptr(res.Line), jsonrow.Ptr(len(res.Line)), jsonrow.Ptr(inbox.SHA256([]byte(res.Line)))
	}
	if res.Note != "" {
		row.Note = jsonrow.Ptr(res.Note)
	}
	if station.IsSessionID(res.SessionID) {
		row.SessionID = jsonrow.Ptr(res.SessionID)
	}
	if clientVersion != "" {
		row.ClientVersion = jsonrow.Ptr(clientVersion)
	}
	if res.Reason != "" {
		row.Reason = jsonrow.Ptr(res.Reason)
	}
	if res.HeldBy != "" {
		row.HeldBy = jsonrow.Ptr(res.HeldBy)
		row.Running = jsonrow.Ptr(res.HeldBy != HeldByLock)
		row.Hint = jsonrow.Ptr("oo-claude send " + res.SessionID + " \"<line>\"")
		if res.HeldPID != 0 && res.HeldBy != HeldByHeartbeat {
			row.PID = jsonrow.Ptr(res.HeldPID)
		}
	} else if res.PID != 0 {
		row.PID = jsonrow.Ptr(res.PID)
	}
	if res.CWD != "" {
		row.CWD = jsonrow.Ptr(res.CWD)
	}
	if res.Transcript != "" {
		row.Transcript = jsonrow.Ptr(res.Transcript)
	}
	if res.Argv != nil || res.PID != 0 { // claude ran
		row.Run = report(res.ExitCode, res.StderrTail, res.Duration, res.Claude, res.Parsed, res.Turns)
	}
	if res.ReceiptWriteError != nil {
		row.ReceiptWriteError = res.ReceiptWriteError
	}
	return row
}

// sessionCost is what the session of the transcript at path has cost so
// far: the totalCostUSD of its last cost-state row (Claude Code writes one
// at each process's exit, cumulative over the session), read back at most
// transcriptfile.TailBytes; 0 when there is none.
func sessionCost(path string) float64 {
	if path == "" {
		return 0
	}
	f, fi, err := transcriptfile.OpenRegular(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if b := transcriptfile.LookBackCost(f, fi.Size(), transcriptfile.TailBytes); b.State != nil {
		return *b.State.TotalCostUSD
	}
	return 0
}
