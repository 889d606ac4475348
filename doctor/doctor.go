// Package doctor checks whether a station is ready for oo-claude: the
// claude binary and its version, the programs oo-claude runs beside itself
// (its doorman's and its live view's), the registry, the inbox and state
// directories, the doorman's MCP registration, the doorman of the session
// doctor runs in, inboxes of sessions that are gone with lines still
// waiting (and of session ids nothing knows), live sessions whose doorman
// follows another inbox directory, and live sessions whose door (socket)
// is missing.
//
// It guarantees: every problem is a [Finding] with a typed [Kind], a
// message and a fix hint, and every check appears in the report as ok,
// finding or skipped; nothing is written, and claude is only ever run as
// `--version` and `mcp get claude-inbox`, through the [Options.Exec] seam,
// each bounded by a timeout.
package doctor

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/claudeproc"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/programs"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// Kind is the type of a finding.
type Kind string

// Finding kinds.
const (
	KindClaudeMissing       Kind = "claude-missing"         // OO_CLAUDE_BIN does not exist
	KindClaudeNotExecutable Kind = "claude-not-executable"  // it exists but is not an executable file
	KindClaudeVersion       Kind = "claude-version-failed"  // `claude --version` failed
	KindInboxUntrusted      Kind = "inbox-untrusted"        // this session's inbox (or a file of it) is another user's, writable by others, or not a regular file
	KindClaudeNotClaude     Kind = "claude-not-claude-code" // `--version` answered, but not as Claude Code does ("2.1.332 (Claude Code)")
	KindRegistryUnreadable  Kind = "registry-unreadable"    // the registry dir cannot be listed
	KindRegistryRowHostile  Kind = "registry-row-untrusted" // a registry row is not a regular file, is another user's or others can write it: left out of every listing
	KindInboxDirMissing     Kind = "inbox-dir-missing"      // no inbox dir
	KindInboxDirUnusable    Kind = "inbox-dir-unusable"     // a symlink or not a directory
	KindInboxDirMode        Kind = "inbox-dir-mode"         // not 0700 (contract v1)
	KindStateDirUnusable    Kind = "state-dir-unusable"     // a symlink or not a directory
	KindStateDirMode        Kind = "state-dir-mode"         // open to group or others
	KindMCPNotRegistered    Kind = "mcp-not-registered"     // `claude mcp get claude-inbox`: no such server
	KindMCPOtherCommand     Kind = "mcp-other-command"      // it is registered, but not as `<this binary> doorman --mcp`
	KindMCPNotConnected     Kind = "mcp-not-connected"      // registered, and its health check failed
	KindMCPCheckFailed      Kind = "mcp-check-failed"       // `claude mcp get` could not be run or answered oddly
	KindDoormanNotFresh     Kind = "doorman-not-fresh"      // the current session's doorman heartbeat is not fresh
	KindOfflineInbox        Kind = "offline-inbox-waiting"  // a session that does not run has lines waiting
	KindUnknownSessionInbox Kind = "unknown-session-inbox"  // lines wait for a session id that does not run and has no transcript here: nothing can deliver them
	KindInboxDirMismatch    Kind = "inbox-dir-mismatch"     // a live session's doorman follows another inbox directory than this one
	KindSocketMissing       Kind = "socket-missing"         // a live session's door is missing
	KindProgramMissing      Kind = "program-missing"        // oo-claude-doorman or oo-claude-top is not installed beside oo-claude
	KindProgramUnusable     Kind = "program-unusable"       // it is there, but not a regular executable file of this user's (or root's) that others cannot write
)

// Finding is one problem, with how to fix it.
type Finding struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
	// Fix is for the person at the station: what to run or change. It
	// names the oo-claude command where one is the fix (an offline inbox's
	// is "oo-claude resume <session id>", runnable as it stands: the
	// report's "fix" key carries it, as a receipt's hint does); a program
	// acts on Kind and Session instead.
	Fix     string `json:"fix"`
	Path    string `json:"path,omitempty"`
	Session string `json:"session,omitempty"`
}

// Status is a check's outcome.
type Status string

// Check outcomes.
const (
	StatusOK      Status = "ok"
	StatusFinding Status = "finding" // at least one finding
	StatusSkipped Status = "skipped"
)

// Check names, in the order they run.
const (
	CheckBinary         = "binary"
	CheckPrograms       = "programs"
	CheckRegistry       = "registry"
	CheckInboxDir       = "inbox-dir"
	CheckStateDir       = "state-dir"
	CheckMCP            = "mcp"
	CheckDoorman        = "doorman"
	CheckOfflineInboxes = "offline-inboxes"
	CheckDoormanDirs    = "doorman-dirs"
	CheckSockets        = "sockets"
)

// Check is one check's outcome and what it saw.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// Report is what Run found. Findings is empty (not nil) when all is well.
type Report struct {
	Checks        []Check   `json:"checks"`
	Findings      []Finding `json:"findings"`
	ClaudeVersion string    `json:"claude_version"` // what `claude --version` printed, "" when it did not run
	Session       string    `json:"session"`        // the session doctor runs in, "" outside one

	// Station is the station's name (Options.Station).
	Station string `json:"station"`
	// StationFile is the station file's path ("" when there is none to
	// read); it need not exist.
	StationFile string `json:"station_file"`
	// Knobs are every knob with its value and where the value came
	// from, in the README's order; empty without Options.Environ.
	Knobs []Knob `json:"knobs"`
}

// Knob is one knob as doctor saw it.
type Knob struct {
	Name  string `json:"name"`
	Value string `json:"value"` // "" when not set (the default applies)
	// From is "environment", the station file's path and line
	// ("…/station.env:3"), or "default".
	From string `json:"from"`
}

// OK reports whether there are no findings.
func (r Report) OK() bool { return len(r.Findings) == 0 }

// ExecFunc runs a program and returns its standard output and its exit
// code. err is for a program that could not be started or did not finish
// (the context ended); a non-zero exit is not an error.
type ExecFunc func(ctx context.Context, name string, args ...string) (stdout []byte, exit int, err error)

// Options are doctor's inputs.
type Options struct {
	// Config gives the paths, the claude binary (ClaudeBin) and whether to
	// run `claude mcp get` (DoctorMCP).
	Config station.Config
	// Proc is the process table; the zero value reads /proc.
	Proc station.Proc
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// EUID is the uid the trust checks demand of the inbox, state and
	// registry files; nil means os.Geteuid (as [station.Station.EUID]).
	EUID func() int
	// Self is the absolute path of this oo-claude binary, which the MCP
	// registration must name and beside which its programs must be
	// installed; "" skips those checks (but Program's).
	Self string
	// Program looks up the program name that oo-claude runs beside
	// itself (oo-claude-doorman, oo-claude-top) and says why it is not
	// one to run; nil looks beside Self by the rule oo-claude runs them by.
	Program func(name string) error
	// PID is this process; its nearest ancestor with a live registry row
	// is the session doctor runs in. 0 skips the ancestor walk.
	PID int
	// SessionID is CLAUDE_CODE_SESSION_ID, used when no ancestor has a
	// live row.
	SessionID string
	// Exec runs claude; nil runs it with os/exec (inheriting this
	// process's environment, as `claude mcp get` needs HOME).
	Exec ExecFunc
	// Timeout bounds each claude run; <= 0 means 30 s.
	Timeout time.Duration
	// ProvenAgainst is the Claude Code version the caller's build of
	// oo-claude is proven against, named in the binary check's detail;
	// "" leaves that remark out.
	ProvenAgainst string
	// Environ is the environment the knobs were read from; the report
	// lists every knob with its origin. nil lists none.
	Environ *station.Environ
	// Station is the station's name, as the report names it.
	Station string
}

// Run runs every check and returns the report.
func Run(ctx context.Context, o Options) Report {
	d := &doc{o: o, r: Report{Checks: []Check{}, Findings: []Finding{}, Knobs: []Knob{}, Station: o.Station}}
	if o.Environ != nil {
		d.r.StationFile = o.Environ.File
		for _, k := range station.Knobs() {
			d.r.Knobs = append(d.r.Knobs, Knob{Name: k, Value: o.Environ.Getenv(k), From: o.Environ.Origin(k)})
		}
	}
	if d.o.Now == nil {
		d.o.Now = time.Now
	}
	if d.o.Exec == nil {
		d.o.Exec = execCommand
	}
	if d.o.Timeout <= 0 {
		d.o.Timeout = 30 * time.Second
	}
	st := &station.Station{Paths: o.Config.Paths, Proc: o.Proc, Now: d.o.Now, EUID: o.EUID}
	d.uid = st.UID()
	binOK := d.binary(ctx)
	d.programs()
	live := d.registry(st)
	d.privateDir(CheckInboxDir, o.Config.InboxDir, true, KindInboxDirMissing, KindInboxDirUnusable, KindInboxDirMode)
	d.privateDir(CheckStateDir, o.Config.StateDir, false, "", KindStateDirUnusable, KindStateDirMode)
	d.mcp(ctx, binOK)
	d.doorman(st, live)
	d.offlineInboxes(live)
	d.doormanDirs(live)
	d.sockets(live)
	return d.r
}

type doc struct {
	o   Options
	r   Report
	uid int // the station's user: the owner every trust check demands
}

func (d *doc) check(name string, findings []Finding, detail string) {
	status := StatusOK
	if len(findings) > 0 {
		status = StatusFinding
		if detail == "" {
			kinds := make([]string, len(findings))
			for i, f := range findings {
				kinds[i] = string(f.Kind)
			}
			detail = strings.Join(kinds, ", ")
		}
	}
	d.r.Checks = append(d.r.Checks, Check{Name: name, Status: status, Detail: detail})
	d.r.Findings = append(d.r.Findings, findings...)
}

func (d *doc) skip(name, why string) {
	d.r.Checks = append(d.r.Checks, Check{Name: name, Status: StatusSkipped, Detail: why})
}

func (d *doc) run(ctx context.Context, args ...string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	return d.o.Exec(ctx, d.o.Config.ClaudeBin, args...)
}

// binary: OO_CLAUDE_BIN exists, is an executable file, and answers
// --version.
func (d *doc) binary(ctx context.Context) bool {
	bin := d.o.Config.ClaudeBin
	fi, err := os.Stat(bin)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.check(CheckBinary, []Finding{{Kind: KindClaudeMissing, Path: bin,
			Message: fmt.Sprintf("the claude binary %s does not exist", bin),
			Fix:     `export OO_CLAUDE_BIN="$(command -v claude)" when a claude is on your PATH (oo-claude never looks it up itself), or install Claude Code at ` + bin}}, "")
		return false
	case err != nil:
		d.check(CheckBinary, []Finding{{Kind: KindClaudeMissing, Path: bin, Message: err.Error(),
			Fix: "make OO_CLAUDE_BIN readable, or point it at the claude binary"}}, "")
		return false
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		d.check(CheckBinary, []Finding{{Kind: KindClaudeNotExecutable, Path: bin,
			Message: fmt.Sprintf("%s is not an executable file (mode %v)", bin, fi.Mode()),
			Fix:     "chmod +x it, or point OO_CLAUDE_BIN at the claude binary"}}, "")
		return false
	}
	out, code, err := d.run(ctx, "--version")
	v := strings.TrimSpace(firstLine(out))
	if err == nil && code == 0 && !isClaudeVersion(v) {
		// Any program that exits 0 is not claude: /bin/true, /bin/ls.
		d.check(CheckBinary, []Finding{{Kind: KindClaudeNotClaude, Path: bin,
			Message: fmt.Sprintf("%s --version printed %s, not a Claude Code version (like %q)", bin, quoteBounded(out), cmp.Or(d.o.ProvenAgainst, "X.Y.Z")+" (Claude Code)"),
			Fix:     "point OO_CLAUDE_BIN at the claude binary of Claude Code"}}, "")
		return false
	}
	if err != nil || code != 0 || v == "" {
		why := fmt.Sprintf("exit %d", code)
		if err != nil {
			why = err.Error()
		}
		d.check(CheckBinary, []Finding{{Kind: KindClaudeVersion, Path: bin,
			Message: fmt.Sprintf("%s --version failed (%s)", bin, why),
			Fix:     "run it by hand to see why; reinstall Claude Code if it is broken"}}, "")
		return false
	}
	d.r.ClaudeVersion = v
	detail := fmt.Sprintf("%s: %s", bin, v)
	if d.o.ProvenAgainst != "" {
		detail += fmt.Sprintf(" (oo-claude is proven against %s)", d.o.ProvenAgainst)
	}
	d.check(CheckBinary, nil, detail)
	return true
}

// programs: the doorman's and the view's programs are installed beside
// oo-claude, each one to run. Without the doorman's, no session started
// with oo-claude's doorman can take a line; without the view's, top
// cannot run.
func (d *doc) programs() {
	look := d.o.Program
	if look == nil {
		if d.o.Self == "" {
			d.skip(CheckPrograms, "this binary's path is unknown")
			return
		}
		look = func(name string) error {
			_, err := programs.Beside(d.o.Self, name)
			return err
		}
	}
	role := map[string]string{programs.Doorman: "no session can start oo-claude's doorman", programs.Top: "oo-claude top cannot run"}
	var findings []Finding
	for _, name := range programs.All() {
		err := look(name)
		if err == nil {
			continue
		}
		f := Finding{Kind: KindProgramUnusable, Message: fmt.Sprintf("%s: %s", role[name], err),
			Fix: "reinstall from the oo-claude source with `CGO_ENABLED=0 go install ./cli/...`, or make it a regular executable file of this user's (or root's) that others cannot write"}
		if errors.Is(err, programs.ErrMissing) {
			f.Kind, f.Fix = KindProgramMissing, "install it with oo-claude: `CGO_ENABLED=0 go install ./cli/...` from the oo-claude source puts oo-claude, oo-claude-doorman and oo-claude-top in one directory"
		}
		if d.o.Self != "" {
			f.Path = filepath.Join(filepath.Dir(d.o.Self), name)
		}
		findings = append(findings, f)
	}
	detail := ""
	if len(findings) == 0 {
		detail = strings.Join(programs.All(), " and ") + " beside oo-claude"
	}
	d.check(CheckPrograms, findings, detail)
}

// registry: the sessions dir can be listed, and each of its rows is a
// regular file of the user; returns the live sessions.
func (d *doc) registry(st *station.Station) []station.Session {
	dir := d.o.Config.SessionsDir
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fix := "run oo-claude as the user who runs Claude Code, or set CLAUDE_CONFIG_DIR / OO_CLAUDE_SESSIONS_DIR"
		if fi, lerr := os.Lstat(dir); lerr == nil && !fi.IsDir() {
			fix = fmt.Sprintf("remove %s (a %s, not the registry directory); Claude Code creates the directory itself", dir, fileKind(fi))
		}
		d.check(CheckRegistry, []Finding{{Kind: KindRegistryUnreadable, Path: dir,
			Message: fmt.Sprintf("the registry %s cannot be read: %v", dir, err),
			Fix:     fix}}, "")
		return nil
	}
	live, err := st.Live()
	if err != nil {
		d.check(CheckRegistry, []Finding{{Kind: KindRegistryUnreadable, Path: dir, Message: err.Error(),
			Fix: "check the registry directory's permissions"}}, "")
		return nil
	}
	var findings []Finding
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e.Name(), ".json")
		if pid, err := strconv.Atoi(stem); !ok || err != nil || pid <= 0 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			continue // gone since the listing
		}
		why := ""
		if !fi.Mode().IsRegular() {
			why = "a " + fileKind(fi) + ", not a regular file"
		} else if err := fsx.CheckTrust(p, fi, d.uid); err != nil {
			var te *fsx.TrustError
			if errors.As(err, &te) {
				why = te.Problem
			}
		}
		if why != "" {
			findings = append(findings, Finding{Kind: KindRegistryRowHostile, Path: p,
				Message: fmt.Sprintf("the registry row %s is %s: it is left out of every listing (its session looks offline)", p, why),
				Fix:     fmt.Sprintf("remove %s; Claude Code writes its row when the session starts", p)})
		}
	}
	d.check(CheckRegistry, findings, fmt.Sprintf("%s: %d live sessions", dir, len(live)))
	return live
}

// fileKind names fi's type for a person: "FIFO", "socket", "device",
// "directory", "symlink" or "file".
func fileKind(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	}
	return "file"
}

// privateDir: dir is a directory (not a symlink) with mode 0700. A
// missing dir is a finding only when required.
func (d *doc) privateDir(name, dir string, required bool, missing, unusable, mode Kind) {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && required:
		d.check(name, []Finding{{Kind: missing, Path: dir,
			Message: fmt.Sprintf("%s does not exist", dir),
			Fix:     fmt.Sprintf("mkdir -m 0700 -p %s", dir)}}, "")
	case errors.Is(err, fs.ErrNotExist):
		d.check(name, nil, dir+": absent (created 0700 on first use)")
	case err != nil:
		d.check(name, []Finding{{Kind: unusable, Path: dir, Message: err.Error(), Fix: "check the permissions of its parents"}}, "")
	case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
		d.check(name, []Finding{{Kind: unusable, Path: dir,
			Message: fmt.Sprintf("%s is not a directory (a %s); oo-claude never follows a symlink there", dir, fileKind(fi)),
			Fix:     fmt.Sprintf("move the %s away, then make a real directory: mkdir -m 0700 %s", fileKind(fi), dir)}}, "")
	case fsx.CheckTrust(dir, fi, d.uid) != nil:
		var te *fsx.TrustError
		errors.As(fsx.CheckTrust(dir, fi, d.uid), &te)
		d.check(name, []Finding{{Kind: mode, Path: dir,
			Message: fmt.Sprintf("%s is %s: another user could plant or move its files, so oo-claude does not trust them", dir, te.Problem),
			Fix:     te.Fix}}, "")
	case fi.Mode().Perm() != 0o700:
		d.check(name, []Finding{{Kind: mode, Path: dir,
			Message: fmt.Sprintf("%s has mode %04o, the contract wants 0700", dir, fi.Mode().Perm()),
			Fix:     fmt.Sprintf("chmod 0700 %s", dir)}}, "")
	default:
		d.check(name, nil, dir+": 0700")
	}
}

// mcp: `claude mcp get claude-inbox` names `<Self> doorman --mcp` and
// connects.
func (d *doc) mcp(ctx context.Context, binOK bool) {
	switch {
	case !d.o.Config.DoctorMCP:
		d.skip(CheckMCP, "OO_CLAUDE_DOCTOR_MCP=0")
		return
	case !binOK:
		d.skip(CheckMCP, "no working claude binary")
		return
	}
	add := fmt.Sprintf("%s mcp add --scope user %s -- %s doorman --mcp", d.o.Config.ClaudeBin, claudeproc.MCPServerName, orSelf(d.o.Self))
	out, code, err := d.run(ctx, "mcp", "get", claudeproc.MCPServerName)
	if err != nil {
		d.check(CheckMCP, []Finding{{Kind: KindMCPCheckFailed, Message: fmt.Sprintf("claude mcp get %s: %v", claudeproc.MCPServerName, err),
			Fix: "run it by hand; set OO_CLAUDE_DOCTOR_MCP=0 to skip this check"}}, "")
		return
	}
	reg, ok := parseMCPGet(out)
	switch {
	case code != 0 || !ok:
		d.check(CheckMCP, []Finding{{Kind: KindMCPNotRegistered,
			Message: fmt.Sprintf("the doorman is not registered as the MCP server %s", claudeproc.MCPServerName),
			Fix:     add}}, "")
		return
	}
	var findings []Finding
	cmdline := strings.TrimSpace(reg.Command + " " + reg.Args)
	if reg.Args != "doorman --mcp" || (d.o.Self != "" && !samePath(reg.Command, d.o.Self)) {
		findings = append(findings, Finding{Kind: KindMCPOtherCommand,
			Message: fmt.Sprintf("%s runs %q, not this binary's doorman (%s doorman --mcp)", claudeproc.MCPServerName, cmdline, orSelf(d.o.Self)),
			Fix:     fmt.Sprintf("%s mcp remove --scope user %s && %s", d.o.Config.ClaudeBin, claudeproc.MCPServerName, add)})
	}
	if !reg.Connected {
		findings = append(findings, Finding{Kind: KindMCPNotConnected,
			Message: fmt.Sprintf("%s is registered but its health check failed: %s", claudeproc.MCPServerName, strings.TrimSpace(reg.Status+" "+reg.Issue)),
			Fix:     fmt.Sprintf("run %q by hand to see why it does not start", cmdline)})
	}
	d.check(CheckMCP, findings, fmt.Sprintf("%s: %s (%s)", claudeproc.MCPServerName, cmdline, reg.Status))
}

// mcpRegistration is what `claude mcp get NAME` printed about a server.
type mcpRegistration struct {
	Scope     string
	Status    string // e.g. "✔ Connected", "✘ Failed to connect"
	Issue     string // why it failed, when it did
	Type      string
	Command   string
	Args      string
	Connected bool
}

// parseMCPGet parses the output of `claude mcp get NAME` (Claude Code
// 2.1.332: "NAME:" then indented "Key: value" lines). ok is false when the
// output names no server (no Command line).
func parseMCPGet(out []byte) (reg mcpRegistration, ok bool) {
	for _, line := range strings.Split(string(out), "\n") {
		k, v, found := strings.Cut(strings.TrimSpace(line), ":")
		if !found || !strings.HasPrefix(line, " ") {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Scope":
			reg.Scope = v
		case "Status":
			reg.Status = v
		case "Issue":
			reg.Issue = v
		case "Type":
			reg.Type = v
		case "Command":
			reg.Command, ok = v, v != ""
		case "Args":
			reg.Args = v
		}
	}
	reg.Connected = strings.Contains(reg.Status, "Connected") && !strings.Contains(reg.Status, "✘")
	return reg, ok
}

// doorman: when doctor runs inside a session (its nearest ancestor with a
// live registry row, else CLAUDE_CODE_SESSION_ID), that session's doorman
// heartbeat must be fresh.
func (d *doc) doorman(st *station.Station, live []station.Session) {
	sid, _, _ := st.CallingSession(d.o.PID, d.o.SessionID)
	if sid == "" {
		d.skip(CheckDoorman, "not run inside a session")
		return
	}
	d.r.Session = sid
	files := inboxv1.FilesFor(d.o.Config.InboxDir, sid)
	// The directory has its own check (inbox-dir); here, its files.
	if err := inbox.CheckTrust(files, d.uid); err != nil && fsx.CheckDirTrust(filepath.Dir(files.Inbox), d.uid) == nil {
		fix := "remove what another user or a non-regular file put there; oo-claude recreates the inbox files 0600"
		var te *fsx.TrustError
		if errors.As(err, &te) {
			fix = te.Fix
		}
		d.check(CheckDoorman, []Finding{{Kind: KindInboxUntrusted, Session: sid, Path: files.Inbox,
			Message: fmt.Sprintf("the inbox of this session is not trusted: %v; senders refuse it and its doorman delivers nothing from it", err),
			Fix:     fix}}, "")
		return
	}
	hb, fr := inbox.HeartbeatFreshness(files.Heartbeat, d.o.Now(), sid, func(pid int) bool { return d.o.Proc.Alive(pid, "") })
	if fr.Fresh {
		d.check(CheckDoorman, nil, fmt.Sprintf("session %s: doorman pid %d %s, last seen %.1f s ago", sid, hb.PID, hb.State, fr.Age.Seconds()))
		return
	}
	why := string(fr.Reason)
	if fr.Detail != "" && fr.Reason != inboxv1.ReasonHeartbeatUnreadable {
		why += " (" + fr.Detail + ")"
	}
	if hb.State == inboxv1.StateUntrusted && hb.LastError != "" {
		why += ": " + hb.LastError
	}
	d.check(CheckDoorman, []Finding{{Kind: KindDoormanNotFresh, Session: sid, Path: files.Heartbeat,
		Message: fmt.Sprintf("the doorman of this session %s is not fresh: %s; lines sent to it wait", sid, why),
		Fix: fmt.Sprintf("register the doorman (%s mcp add --scope user %s -- %s doorman --mcp), then restart this session's MCP servers (/mcp) or the session",
			d.o.Config.ClaudeBin, claudeproc.MCPServerName, orSelf(d.o.Self))}}, "")
}

// offlineInboxes: inboxes of sessions that do not run with lines waiting.
func (d *doc) offlineInboxes(live []station.Session) {
	running := map[string]bool{}
	for _, s := range live {
		running[s.SessionID] = true
	}
	ents, err := inbox.ScanState(d.o.Config.InboxDir, func(sid string) bool { return station.IsSessionID(sid) && !running[sid] }, d.o.Now(),
		func(pid int) bool { return d.o.Proc.Alive(pid, "") })
	var findings []Finding
	for _, e := range ents {
		if e.Inbox.Pending == 0 {
			continue
		}
		if transcriptfile.Absent(d.o.Config.ProjectsDir, e.Session) {
			// A mistyped id, or a start that never came: resume needs a
			// transcript, so nothing will ever deliver these lines.
			findings = append(findings, Finding{Kind: KindUnknownSessionInbox, Session: e.Session, Path: e.Inbox.Path,
				Message: fmt.Sprintf("%d line(s) wait in the inbox %s for session id %s, which does not run and has no transcript on this station (a mistyped id?): nothing will deliver them", e.Inbox.Pending, e.Inbox.Path, e.Session),
				Fix:     fmt.Sprintf("unless a session with this id is about to be started, delete it: rm %s* (or oo-claude gc --older-than 1s, which also collects every other quiet inbox)", e.Inbox.Path)})
			continue
		}
		findings = append(findings, Finding{Kind: KindOfflineInbox, Session: e.Session, Path: e.Inbox.Path,
			Message: fmt.Sprintf("session %s does not run and %d line(s) wait in its inbox %s (resume delivers them in one headless run)", e.Session, e.Inbox.Pending, e.Inbox.Path),
			Fix:     fmt.Sprintf("oo-claude resume %s", e.Session)})
	}
	detail := fmt.Sprintf("%d inboxes of sessions not running", len(ents))
	if err != nil {
		detail += "; some unreadable: " + err.Error()
	}
	d.check(CheckOfflineInboxes, findings, detail)
}

// doormanDirs: the doorman of every live session that has no fresh
// heartbeat in this inbox directory follows this directory, when the
// process table shows one following at all (claudeinbox.FollowedInbox):
// a sender with this shell's knobs would write where no doorman reads.
func (d *doc) doormanDirs(live []station.Session) {
	var findings []Finding
	for _, s := range live {
		files := inboxv1.FilesFor(d.o.Config.InboxDir, s.SessionID)
		if _, fr := inbox.HeartbeatFreshness(files.Heartbeat, d.o.Now(), s.SessionID, func(pid int) bool { return d.o.Proc.Alive(pid, "") }); fr.Fresh {
			continue
		}
		f := claudeinbox.FollowedInbox(d.o.Proc, s, d.o.Config.InboxDir)
		if !f.Elsewhere {
			continue
		}
		findings = append(findings, Finding{Kind: KindInboxDirMismatch, Session: s.SessionID, Path: f.Dir,
			Message: fmt.Sprintf("the doorman (pid %d) of session %s (pid %d) follows the inbox directory %s, not this one, %s: a send from here is refused (inbox-dir-mismatch)", f.DoormanPID, s.SessionID, s.PID, f.Dir, d.o.Config.InboxDir),
			Fix:     fmt.Sprintf("send where OO_CLAUDE_INBOX_DIR is the doorman's (export OO_CLAUDE_INBOX_DIR=%s), or set one value for the session and every sender, then restart the session", f.Dir)})
	}
	d.check(CheckDoormanDirs, findings, fmt.Sprintf("%d live sessions checked", len(live)))
}

// sockets: every live session's messagingSocketPath is a socket. Claude
// Code sessions started in the same second can lose theirs.
func (d *doc) sockets(live []station.Session) {
	var findings []Finding
	for _, s := range live {
		p := s.MessagingSocketPath
		if p == "" {
			findings = append(findings, Finding{Kind: KindSocketMissing, Session: s.SessionID,
				Message: fmt.Sprintf("session %s (pid %d) names no socket: it has no door (Claude Code older than 2.1.308?)", s.SessionID, s.PID),
				Fix:     "update Claude Code and restart the session"})
			continue
		}
		fi, err := os.Lstat(p)
		if err == nil && fi.Mode()&fs.ModeSocket != 0 {
			continue
		}
		findings = append(findings, Finding{Kind: KindSocketMissing, Session: s.SessionID, Path: p,
			Message: fmt.Sprintf("session %s (pid %d) has lost its socket %s (a known Claude Code bug when sessions start in the same second); its doorman cannot deliver", s.SessionID, s.PID, p),
			Fix:     "restart the session (or resume it after it exits); nothing else brings the socket back"})
	}
	d.check(CheckSockets, findings, fmt.Sprintf("%d live sessions checked", len(live)))
}

// isClaudeVersion reports whether v is how Claude Code answers
// --version: "2.1.332 (Claude Code)", three dot-separated numbers, any
// suffix of letters, digits and ".+-", then " (Claude Code)". It is
// matched by hand: a regular expression would link package regexp, whose
// tables every start of oo-claude builds.
func isClaudeVersion(v string) bool {
	v, ok := strings.CutSuffix(v, " (Claude Code)")
	if !ok {
		return false
	}
	for part := 0; part < 3; part++ {
		n := 0
		for n < len(v) && '0' <= v[n] && v[n] <= '9' {
			n++
		}
		if n == 0 {
			return false
		}
		v = v[n:]
		if part < 2 {
			if v == "" || v[0] != '.' {
				return false
			}
			v = v[1:]
		}
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '.', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}

// maxShown bounds what doctor repeats of a program's output.
const maxShown = 200

// quoteBounded is out, cut to maxShown bytes, quoted with Go's escapes: a
// program's output is shown, never obeyed (escapes, NUL), and never long.
func quoteBounded(out []byte) string {
	s := string(out)
	cut := len(s) > maxShown
	if cut {
		s = s[:maxShown]
	}
	q := strconv.Quote(strings.ToValidUTF8(s, "\ufffd"))
	if cut {
		q += "…"
	}
	return q
}

func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func orSelf(self string) string {
	if self == "" {
		return "/absolute/path/to/oo-claude"
	}
	return self
}

// execCommand is the default ExecFunc.
func execCommand(ctx context.Context, name string, args ...string) ([]byte, int, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	// Its own process group, so a check doctor gives up on ends with all
	// its descendants (claude mcp get spawns the server it health-checks).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// claude may leave a child (the health-checked MCP server) holding
	// stdout for a moment; do not wait on it for long.
	cmd.WaitDelay = 2 * time.Second
	out := &boundedBuffer{max: maxOutput}
	cmd.Stdout = out
	err := cmd.Run()
	if err != nil || ctx.Err() != nil {
		// Timed out, or a descendant held stdout past WaitDelay: end
		// the whole group, grandchildren too.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		return out.b.Bytes(), ee.ExitCode(), nil
	}
	if err != nil {
		return out.b.Bytes(), -1, err
	}
	return out.b.Bytes(), 0, nil
}

// maxOutput bounds what doctor keeps of a program's stdout.
const maxOutput = 64 << 10

// boundedBuffer keeps the first max bytes written and drops the rest
// (reporting them written, so the program is not stopped by EPIPE).
type boundedBuffer struct {
	b   bytes.Buffer
	max int
}

func (w *boundedBuffer) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
