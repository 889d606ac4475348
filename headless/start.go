package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/claudeproc"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// DefaultStartMaxTurns is a start's --max-turns when the request leaves it
// zero (COMPATIBILITY.md, "The claude command lines"); the model and
// timeout come from the Config.
const DefaultStartMaxTurns = 4

// maxPromptBytes bounds a start prompt (it travels as one argument).
const maxPromptBytes = 64 << 10

// DoormanMode says which doorman a started session is meant to have.
type DoormanMode string

// Doorman modes, as the result file records them.
const (
	DoormanInjected  DoormanMode = "injected"   // --mcp-config holding only <self> doorman --mcp, plus --strict-mcp-config
	DoormanUserScope DoormanMode = "user-scope" // no --mcp-config and no --strict-mcp-config: the user's registration
	DoormanNone      DoormanMode = "none"       // --strict-mcp-config alone: no MCP server at all
)

// StartRequest is a new headless session. Zero fields take the defaults:
// Config.StartModel, 4 turns, 0.25 USD, no tools, a new UUID,
// <state>/start/<uuid>.json, the injected doorman, Config.StartTimeout.
type StartRequest struct {
	Prompt       string
	CWD          string // absolute; where claude runs (the CLI passes its cwd)
	Model        string
	MaxTurns     int
	Budget       float64
	Tools        string // --tools; "" allows none
	AllowedTools string // --allowedTools; "" leaves the flag out
	SessionID    string
	Name         string // recorded in the result file only
	Out          string // the result file
	Systemd      bool   // detach as a systemd user unit
	// Detach hands the run to a supervisor of its own (with Systemd, the
	// unit; else "<Self> start --foreground-unit <result file>" in a
	// session of its own, which outlives this process) and returns once
	// the session is steerable: its doorman follows the inbox, so a line
	// sent now is delivered ([Runner.Start]). It needs a doorman
	// (injected or user-scope).
	Detach    bool
	Timeout   time.Duration
	Doorman   DoormanMode
	NoLineage bool
	// Parent, when set, is the session the start is made from (a session
	// id), registered in the lineage ledger once claude runs, instead of
	// the calling session found among this process's ancestors or in
	// CLAUDE_CODE_SESSION_ID: a dispatcher that knows its parent. It
	// cannot be given with NoLineage, nor name the new session itself
	// ([ReasonBadParent]).
	Parent string
	// Self is the absolute path of the oo-claude binary: the injected
	// doorman's command and the unit's command.
	Self string
}

// Lineage is the lineage block of a result file: the session the start was
// made from, and whether the link was registered.
type Lineage struct {
	ParentSession *string `json:"parent_session"`
	ParentHost    *string `json:"parent_host"`
	FoundBy       *string `json:"found_by"` // ancestor (a live registry row) | env (CLAUDE_CODE_SESSION_ID) | request (StartRequest.Parent)
	By            string  `json:"by"`       // parent
	Registered    bool    `json:"registered"`
	Skipped       *string `json:"skipped"` // no-lineage | no-parent
	Error         *string `json:"error"`
}

// StartFile is the result file of a start, written atomically at every
// state change: started, then completed, failed or timeout; or lost,
// written by a reader when the supervisor died first ([Lost]).
type StartFile struct {
	State      Class   `json:"state"`
	SessionID  string  `json:"session_id"`
	Name       *string `json:"name"`
	Unit       *string `json:"unit"`
	ResultFile string  `json:"result_file"`
	PromptFile *string `json:"prompt_file"`
	CWD        string  `json:"cwd"`
	Model      string  `json:"model"`
	MaxTurns   int     `json:"max_turns"`
	BudgetUSD  float64 `json:"budget_usd"`
	Tools      string  `json:"tools"`
	// AllowedTools is --allowedTools; null when the flag was not given.
	AllowedTools *string     `json:"allowed_tools"`
	TimeoutS     float64     `json:"timeout_s"`
	Doorman      DoormanMode `json:"doorman"`
	// DoormanCommand is the injected doorman's command line (injected only).
	DoormanCommand []string `json:"doorman_command"`
	Inbox          string   `json:"inbox"`
	Lineage        Lineage  `json:"lineage"`
	StartedAt      string   `json:"started_at"`
	EndedAt        *string  `json:"ended_at"`
	PID            *int     `json:"pid"`
	// SupervisorPID is the oo-claude process that runs the start and will
	// write the outcome (the detaching start until the unit's body takes
	// the run, then the unit's process), SupervisorProcStart its start
	// time (station.ProcInfo.StartTicks), so a reused pid is not taken
	// for it; both are written with the started state. Deadline is when
	// it stops claude at the latest. A started file whose supervisor is
	// gone belongs to a lost run (claude dies with its supervisor): its
	// readers report it as Lost and the first that can writes that state.
	SupervisorPID       *int     `json:"supervisor_pid"`
	SupervisorProcStart *string  `json:"supervisor_proc_start"`
	Deadline            *string  `json:"deadline"`
	Argv                []string `json:"argv"`

	receipt.Run
	DoormanHeartbeat json.RawMessage `json:"doorman_heartbeat"`
	DoormanDelivered *int            `json:"doorman_delivered"`
	Note             *string         `json:"note"`
	Reason           *string         `json:"reason"`
}

// Detached is what a start with StartRequest.Systemd returns at once, the
// unit started and the run not yet done (the v0.1 keys:
// COMPATIBILITY.md, "Added keys (extensions)").
type Detached struct {
	State      Class  `json:"state"`
	Unit       string `json:"unit"`
	ResultFile string `json:"resultFile"`
	SessionID  string `json:"session_id"`
}

// StartResult is what a start did.
type StartResult struct {
	Class  Class
	Reason string
	// File is the result file's last content (for a refusal, what was known).
	File StartFile
	// Prompt is kept for the receipt (the prompt, like a resume's line).
	Prompt  string
	Systemd bool
	// At is when the verdict was reached (the receipt's ts).
	At                time.Time
	ReceiptWriteError *string
}

// Detached returns the answer of a start with StartRequest.Systemd.
func (s StartResult) Detached() Detached {
	d := Detached{State: s.File.State, ResultFile: s.File.ResultFile, SessionID: s.File.SessionID}
	if s.File.Unit != nil {
		d.Unit = *s.File.Unit
	}
	return d
}

// checkPrompt applies the prompt rules: not empty, at most maxPromptBytes,
// valid UTF-8, no NUL, not starting with "-". Newlines are allowed.
func checkPrompt(p string) error {
	switch {
	case strings.TrimSpace(p) == "":
		return fmt.Errorf("%w: empty prompt", errBadLine)
	case len(p) > maxPromptBytes:
		return fmt.Errorf("%w: prompt longer than %d bytes", errBadLine, maxPromptBytes)
	case !utf8.ValidString(p):
		return fmt.Errorf("%w: prompt is not valid UTF-8", errBadLine)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("%w: prompt holds a NUL byte", errBadLine)
	case strings.HasPrefix(strings.TrimLeft(p, " \t\r\n"), "-"):
		return fmt.Errorf("%w: prompt starts with '-'", errBadLine)
	}
	return nil
}

// Start starts a new headless session: in the foreground (waiting for its
// result); with req.Systemd, as a systemd user unit (returning with class
// Started once the unit has taken the run); with req.Detach, under a
// supervisor of its own, returning with class Started once the session is
// steerable, the file as it is then (a run that ends first returns its
// outcome, an error matching [ErrNotSteerable]). The error is non-nil when
// the class is Refused (a *RefusedError) or when something on our side
// failed. [Runner.StartSteerable] runs the start in this process and
// returns when it is steerable.
func (r *Runner) Start(ctx context.Context, req StartRequest) (StartResult, error) {
	return r.startReporting(ctx, req, nil)
}

// startReporting is Start, calling began (when set) with the result file
// once claude runs in this process.
func (r *Runner) startReporting(ctx context.Context, req StartRequest, began func(StartFile)) (StartResult, error) {
	res, err := r.start(ctx, req, began)
	res.At = r.now()
	res.ReceiptWriteError = r.appendReceipt(res.Row(r.ClientVersion))
	if err == nil && req.Detach && res.Class == Started {
		// The receipt is the detaching start's (started), as for a unit;
		// the supervisor writes the run's.
		res, err = r.awaitSteerable(ctx, res)
	}
	return res, err
}

func (r *Runner) start(ctx context.Context, req StartRequest, began func(StartFile)) (StartResult, error) {
	res := StartResult{Prompt: req.Prompt, Systemd: req.Systemd}
	f := &res.File
	fl := runFlags{model: req.Model, maxTurns: req.MaxTurns, budget: req.Budget, tools: req.Tools, timeout: req.Timeout}.
		defaulted(r.Config.StartModel, DefaultStartMaxTurns, r.Config.StartTimeout)
	f.Model, f.MaxTurns, f.BudgetUSD, f.Tools, f.TimeoutS = fl.model, fl.maxTurns, fl.budget, fl.tools, fl.timeout.Seconds()
	if finite(f.BudgetUSD) == nil {
		f.BudgetUSD = 0 // refused below; the file and receipt must stay JSON
	}
	f.Doorman = req.Doorman
	if f.Doorman == "" {
		f.Doorman = DoormanInjected
	}
	if req.AllowedTools != "" {
		f.AllowedTools = jsonrow.Ptr(req.AllowedTools)
	}
	if req.Name != "" {
		f.Name = jsonrow.Ptr(req.Name)
	}
	f.SessionID = req.SessionID
	refuse := func(reason inboxv1.Reason, err error) (StartResult, error) {
		res.Class, res.Reason = Refused, string(reason)
		f.State, f.Reason = Refused, jsonrow.Ptr(string(reason)+": "+err.Error())
		return res, &RefusedError{Op: "start", Reason: reason, Err: err}
	}
	if reason, err := r.checkStart(req, fl, f.Doorman); err != nil {
		return refuse(reason, err)
	}
	if f.SessionID == "" {
		f.SessionID = r.newID()
	}
	sid := f.SessionID
	if !station.IsSessionID(sid) {
		return refuse(ReasonBadSessionID, fmt.Errorf("%w: %q", errBadSessionID, sid))
	}
	// One driver per session, as resume: the session's lock, held to the
	// end of the run, then the registry, heartbeat and process checks,
	// refusing when they cannot be read.
	lock, err := fsx.TryLock(claudeproc.ResumeLockPath(r.Config.Paths, sid))
	if errors.Is(err, fsx.ErrLocked) {
		return refuse(ReasonSessionInUse, fmt.Errorf("%w: another resume or start of this session holds its lock", ErrSessionInUse))
	}
	if err != nil {
		return refuse(ReasonLock, err)
	}
	defer lock.Unlock()
	if reason, err := r.checkNewSession(sid); err != nil {
		return refuse(reason, err)
	}
	if reason, err := r.startFiles(req, f); err != nil {
		return refuse(reason, err)
	}
	f.StartedAt = jsonrow.FormatTime(r.now())
	// The lineage link is registered once claude runs (foreground) or the
	// unit has taken the run (--systemd): a start that never ran leaves
	// no link to a session that does not exist.
	f.Lineage = r.parentLineage(req)
	return r.launch(ctx, &res, req, began)
}

// checkStart applies a start request's rules, before anything is read.
func (r *Runner) checkStart(req StartRequest, fl runFlags, mode DoormanMode) (inboxv1.Reason, error) {
	if err := checkPrompt(req.Prompt); err != nil {
		return ReasonBadLine, err
	}
	if reason, err := r.check(fl); err != nil {
		return reason, err
	}
	if err := checkWord(req.AllowedTools, errBadTools, true); err != nil {
		return ReasonBadTools, err
	}
	if utf8.RuneCountInString(req.Name) > 80 || strings.ContainsFunc(req.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ReasonBadName, fmt.Errorf("%w: %q", errBadName, req.Name)
	}
	switch mode {
	case DoormanInjected, DoormanUserScope, DoormanNone:
	default:
		return ReasonBadDoorman, fmt.Errorf("doorman mode %q", mode)
	}
	if req.Detach && mode == DoormanNone {
		return ReasonBadDoorman, errors.New("a start that returns when steerable needs a doorman")
	}
	if mode == DoormanInjected || req.Systemd || req.Detach {
		if reason, err := checkSelf(req.Self); err != nil {
			return reason, err
		}
	}
	if req.Systemd && !filepath.IsAbs(r.Config.SystemdRun) {
		return ReasonBadBinary, fmt.Errorf("systemd-run %q: %w", r.Config.SystemdRun, errNotAbsolute)
	}
	switch {
	case req.Parent == "":
	case !station.IsSessionID(req.Parent):
		return ReasonBadParent, fmt.Errorf("%w: the parent %q", errBadSessionID, req.Parent)
	case req.NoLineage:
		return ReasonBadParent, errors.New("a parent and no lineage exclude each other")
	case strings.EqualFold(req.Parent, req.SessionID):
		return ReasonBadParent, errors.New("the parent is the new session itself")
	}
	return "", nil
}

// checkNewSession refuses a session id that is in use: a session that
// runs (or whose state cannot be read), or one with a transcript.
func (r *Runner) checkNewSession(sid string) (inboxv1.Reason, error) {
	var held ResumeResult
	isHeld, err := r.heldBy(sid, &held)
	if err != nil {
		return ReasonRegistryUnreadable, err
	}
	if isHeld {
		return ReasonSessionInUse, fmt.Errorf("%w: %s", ErrSessionInUse, held.Reason)
	}
	if _, err := transcript.Locate(r.Config.ProjectsDir, sid, ""); err == nil || errors.Is(err, transcript.ErrAmbiguous) {
		return ReasonSessionInUse, fmt.Errorf("%w: a transcript exists", ErrSessionInUse)
	}
	return "", nil
}

// startFiles fills in and checks where the start runs and what it writes:
// the cwd, the result file (and a detached start's prompt file beside it),
// the inbox, and the doorman's command.
func (r *Runner) startFiles(req StartRequest, f *StartFile) (inboxv1.Reason, error) {
	cwd, err := absDir(req.CWD)
	if err != nil {
		return ReasonNoUsableCWD, fmt.Errorf("%w: %w", ErrNoCWD, err)
	}
	f.CWD = cwd
	f.ResultFile = req.Out
	if f.ResultFile == "" {
		f.ResultFile = filepath.Join(r.Config.StateDir, "start", f.SessionID+".json")
	}
	if !filepath.IsAbs(f.ResultFile) {
		return ReasonBadOut, fmt.Errorf("result file %q: %w", f.ResultFile, errNotAbsolute)
	}
	// A symlink, FIFO, socket, device or directory at the result file (or
	// the detached start's prompt file beside it) is never replaced.
	if err := fsx.CheckReplaceable(f.ResultFile); err != nil {
		return ReasonBadOut, fmt.Errorf("result file %q: %w", f.ResultFile, err)
	}
	if err := fsx.CheckReplaceable(claudeproc.PromptFile(f.ResultFile)); (req.Systemd || req.Detach) && err != nil {
		return ReasonBadOut, fmt.Errorf("result file %q: %w", f.ResultFile, err)
	}
	files := inboxv1.FilesFor(r.Config.InboxDir, f.SessionID)
	if err := r.checkInbox(files); err != nil {
		return ReasonBadInbox, err
	}
	if f.Doorman == DoormanInjected {
		f.DoormanCommand = []string{req.Self, "doorman", "--mcp"}
	}
	f.Inbox = files.Inbox
	if req.Systemd {
		f.Unit = jsonrow.Ptr(claudeproc.UnitName(f.SessionID))
	}
	if req.Systemd || req.Detach {
		f.PromptFile = jsonrow.Ptr(claudeproc.PromptFile(f.ResultFile))
	}
	return "", nil
}

// launch creates the inbox, writes the started file and runs the start:
// in this process, or handed to its unit.
func (r *Runner) launch(ctx context.Context, res *StartResult, req StartRequest, began func(StartFile)) (StartResult, error) {
	f := &res.File
	// The inbox exists before claude starts, so lines sent at once wait in
	// it for the doorman.
	if err := createInbox(f.Inbox); err != nil {
		return r.failEarly(res, "inbox", err)
	}
	f.State = Started
	r.recordSupervisor(f)
	if err := writeFile(f); err != nil {
		return r.failEarly(res, "result-file", err)
	}
	var out StartResult
	var err error
	if req.Systemd || req.Detach {
		out, err = r.detach(ctx, res, req)
	} else {
		out, err = r.foreground(ctx, res, req.Prompt, began)
	}
	if out.Class != Completed && out.Class != Started {
		r.dropEmptyInbox(f.SessionID)
	}
	return out, err
}

// dropEmptyInbox removes the inbox a failed start created when it is still
// empty and no doorman holds it, under the inbox's removal protocol (a line
// a sender appends meanwhile keeps it).
func (r *Runner) dropEmptyInbox(sid string) {
	files := inboxv1.FilesFor(r.Config.InboxDir, sid)
	_, _ = inbox.RemoveInbox(files, func() (bool, error) {
		fi, err := os.Lstat(files.Inbox)
		if err != nil {
			return false, nil
		}
		_, ackErr := os.Lstat(files.Ack)
		return fi.Size() == 0 && errors.Is(ackErr, fs.ErrNotExist), nil
	})
}

// failEarly ends a start that could not set itself up.
func (r *Runner) failEarly(res *StartResult, what string, err error) (StartResult, error) {
	res.Class, res.Reason = Failed, what+": "+err.Error()
	res.File.State, res.File.Reason = Failed, jsonrow.Ptr(res.Reason)
	res.File.EndedAt = jsonrow.Ptr(jsonrow.FormatTime(r.now()))
	_ = writeFile(&res.File)
	return *res, err
}

// checkInbox is [inbox.CheckTrust] for the station's user, its error naming
// the fix when a symlink or a file that is not regular sits at the inbox or
// one of its files (a [inbox.ErrUntrusted] names its own).
func (r *Runner) checkInbox(files inboxv1.Files) error {
	err := inbox.CheckTrust(files, r.station().UID())
	if errors.Is(err, fsx.ErrSymlink) || errors.Is(err, fsx.ErrNotRegular) {
		return fmt.Errorf("%w (fix: remove it; oo-claude creates the session's inbox files itself)", err)
	}
	return err
}

func createInbox(path string) error {
	f, err := fsx.OpenAppend(path)
	if err != nil {
		return err
	}
	return f.Close()
}

func writeFile(f *StartFile) error { return claudeproc.WriteResultFile(f.ResultFile, f) }

// recordSupervisor names this process as the start's supervisor: its pid
// and its start time (none when /proc cannot tell: the pid alone then).
func (r *Runner) recordSupervisor(f *StartFile) {
	f.SupervisorPID, f.SupervisorProcStart = jsonrow.Ptr(r.pid()), nil
	if info, err := r.station().Proc.Info(r.pid()); err == nil {
		f.SupervisorProcStart = jsonrow.Ptr(info.StartTicks)
	}
}

// parentLineage finds the session the start is made from; the link is
// registered only once claude runs ([Runner.registerLineage]).
func (r *Runner) parentLineage(req StartRequest) Lineage {
	l := Lineage{By: string(lineage.ByParent)}
	if req.NoLineage {
		l.Skipped = jsonrow.Ptr("no-lineage")
		return l
	}
	if req.Parent != "" {
		l.ParentSession, l.FoundBy = jsonrow.Ptr(req.Parent), jsonrow.Ptr("request")
		return l
	}
	psid, phost, how := r.station().CallingSession(r.pid(), getenv(r.environ(), "CLAUDE_CODE_SESSION_ID"))
	if psid == "" {
		l.Skipped = jsonrow.Ptr("no-parent")
		return l
	}
	l.ParentSession, l.FoundBy = jsonrow.Ptr(psid), jsonrow.Ptr(how)
	if phost != "" {
		l.ParentHost = jsonrow.Ptr(phost)
	}
	return l
}

// registerLineage registers the link f's lineage block names, once: called
// when claude runs, by the process that runs it (the foreground start, or
// the unit's body for a detached one).
func (r *Runner) registerLineage(ctx context.Context, f *StartFile) {
	l := &f.Lineage
	if l.ParentSession == nil || l.Registered || l.Skipped != nil {
		return
	}
	var phost, title string
	if l.ParentHost != nil {
		phost = *l.ParentHost
	}
	if f.Name != nil {
		title = *f.Name
	}
	led := &lineage.Ledger{Path: r.Config.LineageFile(), Sessions: r.station(), Now: r.Now}
	got, err := led.Register(ctx, lineage.Link{Child: f.SessionID, Parent: *l.ParentSession, ParentHost: phost, Title: title, By: lineage.ByParent})
	if err != nil {
		l.Error = jsonrow.Ptr(err.Error())
		return
	}
	l.Registered, l.Error = true, nil
	l.ParentHost = got.Row.ParentHost
}

// foreground runs claude for the started session and records the outcome.
func (r *Runner) foreground(ctx context.Context, res *StartResult, prompt string, began func(StartFile)) (StartResult, error) {
	f := &res.File
	self := ""
	if len(f.DoormanCommand) > 0 {
		self = f.DoormanCommand[0]
	}
	args := claudeproc.StartArgs{SessionID: f.SessionID, Model: f.Model, MaxTurns: f.MaxTurns, Tools: f.Tools,
		AllowedTools: f.AllowedTools, Budget: f.BudgetUSD, Prompt: prompt}
	switch f.Doorman {
	case DoormanInjected:
		args.MCPConfig, args.StrictMCP = claudeproc.DoormanConfig(self), true
	case DoormanNone:
		args.StrictMCP = true
	}
	argv := claudeproc.StartArgv(args)
	f.Argv = redactLine(argv)
	env, fds := claudeproc.ScrubEnv(r.environ())
	timeout := time.Duration(f.TimeoutS * float64(time.Second))
	var startErr error
	out := claudeproc.RunProcess(ctx, claudeproc.Invocation{
		Path: r.Config.ClaudeBin, Args: argv, Env: env, Dir: f.CWD, FDs: fds,
		Timeout: timeout, KillGrace: r.KillGrace,
		OnStart: func(pid int) {
			// Who runs it and until when, before the run: a reader can
			// tell a live run from an abandoned one.
			f.PID = jsonrow.Ptr(pid)
			r.recordSupervisor(f)
			f.Deadline = jsonrow.Ptr(jsonrow.FormatTime(r.now().Add(timeout + r.killGrace())))
			r.registerLineage(ctx, f)
			startErr = writeFile(f)
			if began != nil {
				began(*f)
			}
		},
	})
	if out.PID != 0 {
		f.PID = jsonrow.Ptr(out.PID)
	}
	var exitCode *int
	if out.ExitCode >= 0 {
		exitCode = jsonrow.Ptr(out.ExitCode)
	}
	cr, parsed := parseResult(out.Stdout)
	stderrTail := tailLines(out.Stderr, 20, 4096)
	turns := parseTurns(out.Stdout, 0) // a new session: nothing before it
	f.Run = report(exitCode, stderrTail, out.Duration, cr, parsed, turns)
	var err error
	switch {
	case out.TimedOut:
		res.Class, res.Reason = Timeout, fmt.Sprintf("no result within %gs; the process group was stopped", f.TimeoutS)
	case out.Canceled:
		res.Class, res.Reason = Failed, "interrupted; the process group was stopped"
	case out.Err != nil:
		res.Class, res.Reason, err = Failed, out.Err.Error(), out.Err
	default:
		res.Class, res.Reason = classify(out.ExitCode, parsed, cr, f.SessionID, stderrTail)
	}
	f.State = res.Class
	if res.Reason != "" {
		f.Reason = jsonrow.Ptr(res.Reason)
	}
	r.readDoorman(f)
	if n := joinNotes(claudeSaid(parsed, cr), turnsNote(turns, 0)); n != "" {
		f.Note = jsonrow.Ptr(n)
	}
	f.EndedAt = jsonrow.Ptr(jsonrow.FormatTime(r.now()))
	if werr := writeFile(f); werr != nil && err == nil {
		err = werr
	}
	if err == nil {
		err = startErr
	}
	return *res, err
}

func (r *Runner) killGrace() time.Duration {
	if r.KillGrace > 0 {
		return r.KillGrace
	}
	return 3 * time.Second
}

// readDoorman records the doorman's heartbeat after the run and how many
// lines it delivered into this session.
func (r *Runner) readDoorman(f *StartFile) {
	files := inboxv1.FilesFor(r.Config.InboxDir, f.SessionID)
	if h, err := inbox.ReadHeartbeat(files.Heartbeat); err == nil {
		f.DoormanHeartbeat, _ = json.Marshal(h)
	}
	n := 0
	if fh, err := fsx.OpenRead(files.Ack); err == nil {
		_ = inbox.ScanAcks(fh, 0, func(a inboxv1.Ack, _ int64) bool {
			if (a.Class == inboxv1.AckDeliveredSteer || a.Class == inboxv1.AckDeliveredStart) &&
				(a.SessionID == "" || a.SessionID == f.SessionID) {
				n++
			}
			return true
		})
		fh.Close()
	}
	f.DoormanDelivered = jsonrow.Ptr(n)
}

// detach writes the prompt file and hands the run to its supervisor: the
// unit systemd-run starts, or a process of our own in a session of its
// own. It returns Started only once the supervisor has taken its prompt
// (so it runs); a systemd-run that hangs is stopped after
// Runner.SystemdRunTimeout, and a supervisor that starts nothing is a
// failure after Runner.UnitStartWait. The supervisor registers the
// lineage link when claude runs.
func (r *Runner) detach(ctx context.Context, res *StartResult, req StartRequest) (StartResult, error) {
	f := &res.File
	if err := fsx.WriteFileAtomic(*f.PromptFile, []byte(req.Prompt)); err != nil {
		return r.failEarly(res, "prompt-file", err)
	}
	what, err := "supervisor", error(nil)
	if req.Systemd {
		what, err = "systemd-run", r.systemdRun(ctx, f, req.Self)
	} else {
		_, err = claudeproc.SpawnDetached(claudeproc.Invocation{Path: req.Self, Args: claudeproc.SupervisorArgs(f.ResultFile), Env: r.environ(), Dir: f.CWD})
	}
	if err != nil {
		if p, cerr := claimPrompt(*f.PromptFile); cerr == nil {
			_ = os.Remove(p)
		}
		return r.failEarly(res, what, err)
	}
	wait := durationOr(r.UnitStartWait, 30*time.Second)
	if !waitGone(ctx, *f.PromptFile, wait) {
		// Take the prompt back: if the supervisor starts after all, it
		// finds none and runs nothing. If it took it first, it runs.
		if p, err := claimPrompt(*f.PromptFile); err == nil {
			_ = os.Remove(p)
			who := "the supervisor"
			if f.Unit != nil {
				who = "systemd-run exited 0 but unit " + *f.Unit
			}
			return r.failEarly(res, what, fmt.Errorf("%s did not start within %s", who, wait))
		}
	}
	res.Class = Started
	return *res, nil
}

// systemdRun starts the detached start's unit, bounded by
// Runner.SystemdRunTimeout; the error says why it did not.
func (r *Runner) systemdRun(ctx context.Context, f *StartFile, self string) error {
	flags, runEnv := claudeproc.UnitEnv(r.environ())
	argv := claudeproc.SystemdArgv(f.SessionID, time.Duration(f.TimeoutS*float64(time.Second)), flags, self, f.ResultFile)
	limit := durationOr(r.SystemdRunTimeout, 30*time.Second)
	out := claudeproc.RunProcess(ctx, claudeproc.Invocation{Path: r.Config.SystemdRun, Args: argv, Env: runEnv, Dir: f.CWD, Timeout: limit, KillGrace: r.KillGrace})
	if out.Err == nil && !out.TimedOut && !out.Canceled && out.ExitCode == 0 {
		return nil
	}
	f.StderrTail = jsonrow.Ptr(tailLines(out.Stderr, 20, 4096))
	switch {
	case out.Err != nil:
		return out.Err
	case out.TimedOut:
		return fmt.Errorf("systemd-run did not finish within %s; it was stopped", limit)
	case out.Canceled:
		return errors.New("interrupted while systemd-run ran")
	}
	return fmt.Errorf("systemd-run exit %d: %s", out.ExitCode, tailLines(out.Stderr, 5, 1024))
}

func durationOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// waitGone waits until path does not exist, up to wait, woken by its
// directory's events ([fsx.Waker]: armed before the first look).
func waitGone(ctx context.Context, path string, wait time.Duration) bool {
	k := fsx.NewWaker(50*time.Millisecond, path)
	defer k.Close()
	limit := time.NewTimer(wait)
	defer limit.Stop()
	for {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-limit.C:
			_, err := os.Lstat(path)
			return errors.Is(err, fs.ErrNotExist)
		case <-k.C:
		}
	}
}

// claimPrompt is [claudeproc.ClaimPrompt] by this process.
func claimPrompt(path string) (string, error) { return claudeproc.ClaimPrompt(path, os.Getpid()) }

// RunUnit is the body of a detached start's supervisor (its unit, or the
// process of its own that StartRequest.Detach starts): it reads the result
// file that the detaching start wrote (state started, a prompt file named), takes the
// prompt from its prompt file (and removes it), runs claude in the
// foreground and records the outcome in the same file, keeping the unit and
// the lineage block.
func (r *Runner) RunUnit(ctx context.Context, resultFile string) (StartResult, error) {
	res, err := r.runUnit(ctx, resultFile)
	res.At = r.now()
	res.ReceiptWriteError = r.appendReceipt(res.Row(r.ClientVersion))
	return res, err
}

func (r *Runner) runUnit(ctx context.Context, resultFile string) (StartResult, error) {
	res := StartResult{}
	bad := func(err error) (StartResult, error) {
		res.Class, res.Reason = Refused, string(ReasonBadResultFile)
		return res, &RefusedError{Op: "start", Reason: ReasonBadResultFile, Err: fmt.Errorf("%w: %w", errBadResultFile, err)}
	}
	if !filepath.IsAbs(resultFile) {
		return bad(errNotAbsolute)
	}
	b, err := fsx.ReadFile(resultFile)
	if err != nil {
		return bad(err)
	}
	if err := json.Unmarshal(b, &res.File); err != nil {
		return bad(err)
	}
	f := &res.File
	res.Systemd = f.Unit != nil
	switch {
	case f.State != Started || f.ResultFile != resultFile || !station.IsSessionID(f.SessionID):
		return bad(errors.New("not a started detached start"))
	case f.PromptFile == nil || *f.PromptFile != claudeproc.PromptFile(resultFile):
		return bad(errors.New("prompt file is not next to the result file"))
	}
	// One driver: the prompt claimed in one rename (a second body started
	// at once finds it taken), then the session's lock, which the
	// detaching start holds until it has seen the claim: wait for it,
	// bounded.
	claimed, err := claimPrompt(*f.PromptFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("prompt file already taken: %w", err)
		}
		return bad(err)
	}
	// The claimed copy stays until this process is recorded as the
	// supervisor: a reader that finds the detaching start gone meanwhile
	// sees the claim's live pid and does not take the run for lost.
	defer os.Remove(claimed)
	p, err := fsx.ReadFile(claimed)
	if err != nil {
		return bad(err)
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	lock, err := fsx.LockContext(lctx, claudeproc.ResumeLockPath(r.Config.Paths, f.SessionID))
	cancel()
	res.Prompt = string(p)
	if err != nil {
		return r.failEarly(&res, "lock", err)
	}
	defer lock.Unlock()
	// Under the lock, the file once more: a reader may have finalized it
	// as lost while the detaching start was gone and the lock free.
	if b, err := fsx.ReadFile(resultFile); err != nil || json.Unmarshal(b, &res.File) != nil || res.File.State != Started {
		return bad(errors.New("no longer a started detached start (a reader found it lost?)"))
	}
	r.recordSupervisor(f)
	if err := writeFile(f); err != nil {
		return r.failEarly(&res, "result-file", err)
	}
	_ = os.Remove(claimed)
	if err := checkPrompt(res.Prompt); err != nil {
		return bad(err)
	}
	if !filepath.IsAbs(r.Config.ClaudeBin) {
		return bad(fmt.Errorf("claude binary %q: %w", r.Config.ClaudeBin, errNotAbsolute))
	}
	if len(f.DoormanCommand) > 0 && !filepath.IsAbs(f.DoormanCommand[0]) {
		return bad(fmt.Errorf("doorman command: %w", errNotAbsolute))
	}
	return r.foreground(ctx, &res, res.Prompt, nil)
}

// Row is the receipt row of a start.
func (s StartResult) Row(clientVersion string) receipt.StartRow {
	f := s.File
	row := receipt.StartRow{
		Kind:             receipt.KindStart,
		Class:            string(s.Class),
		Name:             f.Name,
		PID:              f.PID,
		Unit:             f.Unit,
		Doorman:          nilIfEmpty(string(f.Doorman)),
		DoormanHeartbeat: f.DoormanHeartbeat,
		DoormanDelivered: f.DoormanDelivered,
		ParentSession:    f.Lineage.ParentSession,
		Systemd:          s.Systemd,
		Model:            nilIfEmpty(f.Model),
		Tools:            jsonrow.Ptr(f.Tools),
		AllowedTools:     f.AllowedTools,
		Argv:             f.Argv,
		Run:              f.Run,
		Note:             f.Note,
	}
	if !s.At.IsZero() {
		row.TS, row.TSMS = jsonrow.Stamp(s.At)
	}
	if s.Prompt != "" {
		row.Line, row.Bytes, row.SHA256 = jsonrow.Ptr(s.Prompt), jsonrow.Ptr(len(s.Prompt)), jsonrow.Ptr(inbox.SHA256([]byte(s.Prompt)))
	}
	if station.IsSessionID(f.SessionID) {
		row.SessionID = jsonrow.Ptr(f.SessionID)
	}
	if f.State != "" {
		row.State = jsonrow.Ptr(string(f.State))
	}
	if f.ResultFile != "" {
		row.ResultFile = jsonrow.Ptr(f.ResultFile)
	}
	if f.Inbox != "" {
		row.Inbox = jsonrow.Ptr(f.Inbox)
	}
	if f.CWD != "" {
		row.CWD = jsonrow.Ptr(f.CWD)
	}
	if f.MaxTurns != 0 {
		row.MaxTurns = jsonrow.Ptr(f.MaxTurns)
	}
	if f.BudgetUSD != 0 {
		row.BudgetUSD = finite(f.BudgetUSD)
	}
	if f.TimeoutS != 0 {
		row.TimeoutS = jsonrow.Ptr(f.TimeoutS)
	}
	if s.Reason != "" {
		row.Reason = jsonrow.Ptr(s.Reason)
	}
	if clientVersion != "" {
		row.ClientVersion = jsonrow.Ptr(clientVersion)
	}
	if f.SessionID != "" && (s.Class == Completed || s.Class == Failed || s.Class == Started) {
		row.Hint = jsonrow.Ptr("oo-claude read " + f.SessionID)
	}
	row.ReceiptWriteError = s.ReceiptWriteError
	return row
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ReadStartFile reads the result file at path as every reader of result
// files does: a started file whose supervisor is gone (its pid does not
// run with the recorded start time) and that no unit body holds is
// reported [Lost], and is written so (atomically, with ended_at, a reason
// and a note, every other key kept) when the session's lock is free; two
// readers at once write it once. An error means the file could not be
// read or is not a result file.
func (r *Runner) ReadStartFile(path string) (StartFile, error) {
	rr := claudeproc.ResultReader{Proc: r.station().Proc, Paths: r.Config.Paths, Now: r.Now, PID: r.PID}
	got, err := rr.Read(path)
	if err != nil {
		return StartFile{}, err
	}
	var f StartFile
	if err := json.Unmarshal(got.Raw, &f); err != nil {
		return StartFile{}, fmt.Errorf("%s: %w", path, err)
	}
	if got.State == claudeproc.StateLost && f.State != Lost {
		f.State, f.Reason = Lost, jsonrow.Ptr(got.Reason)
	}
	return f, nil
}
