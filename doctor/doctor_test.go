package doctor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/doctor"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/internal/programs"
	"github.com/oo-family/oo-claude/station"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const (
	sidLive    = "dddddddd-0000-4000-8000-000000000001"
	sidGone    = "dddddddd-0000-4000-8000-000000000002"
	pidSession = 400 // the live session's claude
	pidDoctor  = 500 // doctor, a grandchild of the session (via pid 450)
)

// fixture is a station on which every check passes; cases break one thing.
type fixture struct {
	fs      *fakestation.Station
	self    string // oo-claude, with its doorman and top programs beside it
	opts    doctor.Options
	procDir string
	// claude's answers, by first argument ("--version", "mcp").
	version, mcpGet string
	mcpExit         int
	mcpErr          error
	versionExit     int
}

func writeStat(t *testing.T, root string, pid, ppid int, start string) {
	t.Helper()
	dir := filepath.Join(root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fields := []string{"S", strconv.Itoa(ppid)}
	for range 17 {
		fields = append(fields, "0")
	}
	fields = append(fields, start, "0", "0")
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(fmt.Sprintf("%d (x) %s\n", pid, strings.Join(fields, " "))), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	fs := fakestation.New(t)
	procDir := filepath.Join(fs.Root, "proc")
	writeStat(t, procDir, pidSession, 1, "4000")
	writeStat(t, procDir, 450, pidSession, "4500")
	writeStat(t, procDir, pidDoctor, 450, "5000")
	writeStat(t, procDir, 600, pidSession, "6000") // the doorman

	// The live session's door: a real socket (short path: sun_path is small).
	sockDir, err := os.MkdirTemp("", "dr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "400.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	fs.WriteRow(station.Row{PID: pidSession, SessionID: sidLive, CWD: fs.Root, ProcStart: "4000", StartedAt: now.UnixMilli(),
		MessagingSocketPath: sock, Status: station.StatusBusy, Name: "work-aa"})
	writeJSON(t, inboxv1.FilesFor(fs.Paths.InboxDir, sidLive).Heartbeat, inboxv1.Heartbeat{
		PID: 600, SessionID: sidLive, LastSeen: jsonrow.FormatTime(now.Add(-time.Second)), State: inboxv1.StateFollowing,
	})

	bin := filepath.Join(fs.Root, "claude-bin")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := station.DefaultConfig(fs.Paths)
	cfg.ClaudeBin = bin
	binDir := filepath.Join(fs.Root, "bin")
	if err := os.Mkdir(binDir, 0o700); err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(binDir, "oo-claude")
	for _, name := range []string{"oo-claude", "oo-claude-doorman", "oo-claude-top"} {
		if err := os.WriteFile(filepath.Join(binDir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{
		fs: fs, procDir: procDir, self: self,
		version: "2.1.332 (Claude Code)\n",
		mcpGet: "claude-inbox:\n  Scope: User config (available in all your projects)\n  Status: ✔ Connected\n  Type: stdio\n" +
			"  Command: " + self + "\n  Args: doorman --mcp\n  Environment:\n\nTo remove this server, run: claude mcp remove claude-inbox -s user\n",
	}
	f.opts = doctor.Options{
		Config: cfg, Proc: station.Proc{Root: procDir}, Now: func() time.Time { return now },
		Self: self, PID: pidDoctor,
		Exec: func(ctx context.Context, name string, args ...string) ([]byte, int, error) {
			if name != bin {
				t.Errorf("ran %s, want %s", name, bin)
			}
			switch strings.Join(args, " ") {
			case "--version":
				return []byte(f.version), f.versionExit, nil
			case "mcp get claude-inbox":
				return []byte(f.mcpGet), f.mcpExit, f.mcpErr
			}
			t.Errorf("unexpected claude %q", args)
			return nil, 1, nil
		},
	}
	return f
}

// holdOpen makes the fake process pid hold path open: the link
// <proc>/<pid>/fd/3 names it, as the kernel's does.
func holdOpen(t *testing.T, procDir string, pid int, path string) {
	t.Helper()
	dir := filepath.Join(procDir, strconv.Itoa(pid), "fd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(path, filepath.Join(dir, "3")); err != nil {
		t.Fatal(err)
	}
}

// errTopMissing is a lookup's error for a program that is not there.
var errTopMissing = fmt.Errorf("%w: oo-claude-top is %w", programs.ErrUnusable, programs.ErrMissing)

func kinds(r doctor.Report) []doctor.Kind {
	var out []doctor.Kind
	for _, f := range r.Findings {
		out = append(out, f.Kind)
	}
	return out
}

func TestRun(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(t *testing.T, f *fixture)
		want    []doctor.Kind
	}{
		{"all well", func(*testing.T, *fixture) {}, nil},
		{"claude missing", func(t *testing.T, f *fixture) { f.opts.Config.ClaudeBin = filepath.Join(f.fs.Root, "nope") },
			[]doctor.Kind{doctor.KindClaudeMissing}},
		{"claude not executable", func(t *testing.T, f *fixture) { os.Chmod(f.opts.Config.ClaudeBin, 0o600) },
			[]doctor.Kind{doctor.KindClaudeNotExecutable}},
		{"claude --version fails", func(t *testing.T, f *fixture) { f.versionExit = 1 },
			[]doctor.Kind{doctor.KindClaudeVersion}},
		{"registry unreadable", func(t *testing.T, f *fixture) {
			f.opts.Config.SessionsDir = f.opts.Config.ClaudeBin // a file
		}, []doctor.Kind{doctor.KindRegistryUnreadable}},
		{"inbox dir missing", func(t *testing.T, f *fixture) { f.opts.Config.InboxDir = filepath.Join(f.fs.Root, "none") },
			[]doctor.Kind{doctor.KindInboxDirMissing, doctor.KindDoormanNotFresh}},
		{"inbox dir 0755", func(t *testing.T, f *fixture) { os.Chmod(f.opts.Config.InboxDir, 0o755) },
			[]doctor.Kind{doctor.KindInboxDirMode}},
		{"inbox dir is a symlink", func(t *testing.T, f *fixture) {
			link := filepath.Join(f.fs.Root, "inbox-link")
			if err := os.Symlink(f.opts.Config.InboxDir, link); err != nil {
				t.Fatal(err)
			}
			f.opts.Config.InboxDir = link
		}, []doctor.Kind{doctor.KindInboxDirUnusable}},
		{"state dir 0750", func(t *testing.T, f *fixture) { os.Chmod(f.opts.Config.StateDir, 0o750) },
			[]doctor.Kind{doctor.KindStateDirMode}},
		{"state dir is a file", func(t *testing.T, f *fixture) { f.opts.Config.StateDir = f.opts.Config.ClaudeBin },
			[]doctor.Kind{doctor.KindStateDirUnusable}},
		{"state dir absent is fine", func(t *testing.T, f *fixture) { f.opts.Config.StateDir = filepath.Join(f.fs.Root, "later") }, nil},
		{"mcp not registered", func(t *testing.T, f *fixture) {
			f.mcpGet, f.mcpExit = `No MCP server named "claude-inbox". Configured servers: other`+"\n", 1
		}, []doctor.Kind{doctor.KindMCPNotRegistered}},
		{"mcp names another command", func(t *testing.T, f *fixture) {
			f.mcpGet = strings.Replace(f.mcpGet, "Command: "+f.self+"\n  Args: doorman --mcp", "Command: /usr/bin/python3\n  Args: -I /x/doorman.py --mcp", 1)
		}, []doctor.Kind{doctor.KindMCPOtherCommand}},
		{"mcp names another oo-claude", func(t *testing.T, f *fixture) {
			f.mcpGet = strings.Replace(f.mcpGet, "Command: "+f.self, "Command: /usr/local/bin/oo-claude", 1)
		}, []doctor.Kind{doctor.KindMCPOtherCommand}},
		{"mcp fails to connect", func(t *testing.T, f *fixture) {
			f.mcpGet = strings.Replace(f.mcpGet, "Status: ✔ Connected", "Status: ✘ Failed to connect\n  Issue: ENOENT", 1)
		}, []doctor.Kind{doctor.KindMCPNotConnected}},
		{"mcp check cannot run", func(t *testing.T, f *fixture) { f.mcpErr = context.DeadlineExceeded },
			[]doctor.Kind{doctor.KindMCPCheckFailed}},
		{"mcp check skipped by OO_CLAUDE_DOCTOR_MCP=0", func(t *testing.T, f *fixture) {
			f.opts.Config.DoctorMCP = false
			f.mcpExit = 1 // would be a finding
		}, nil},
		{"this session's doorman stopped", func(t *testing.T, f *fixture) {
			writeJSON(t, inboxv1.FilesFor(f.fs.Paths.InboxDir, sidLive).Heartbeat, inboxv1.Heartbeat{
				PID: 600, SessionID: sidLive, LastSeen: jsonrow.FormatTime(now), State: inboxv1.StateStopped,
			})
		}, []doctor.Kind{doctor.KindDoormanNotFresh}},
		{"session from CLAUDE_CODE_SESSION_ID without a heartbeat", func(t *testing.T, f *fixture) {
			f.opts.PID = 0
			f.opts.SessionID = "dddddddd-0000-4000-8000-0000000000ff"
		}, []doctor.Kind{doctor.KindDoormanNotFresh}},
		{"not inside a session", func(t *testing.T, f *fixture) { f.opts.PID = 0 }, nil},
		{"offline inbox with a waiting line", func(t *testing.T, f *fixture) {
			f.fs.AddTranscript(sidGone, "")
			os.WriteFile(f.fs.InboxPath(sidGone), []byte("[mama 📡] still there\n"), 0o600)
		}, []doctor.Kind{doctor.KindOfflineInbox}},
		// A mistyped id: no live session, no transcript. Its fix was
		// resume, which refuses it (no-transcript), for good.
		{"waiting lines for a session id nothing knows", func(t *testing.T, f *fixture) {
			os.WriteFile(f.fs.InboxPath(sidGone), []byte("[mama 📡] still there\n"), 0o600)
		}, []doctor.Kind{doctor.KindUnknownSessionInbox}},
		// OO_CLAUDE_INBOX_DIR differs from the doorman's: doctor with the
		// same knobs found nothing.
		{"a live session's doorman follows another inbox dir", func(t *testing.T, f *fixture) {
			os.Remove(inboxv1.FilesFor(f.fs.Paths.InboxDir, sidLive).Heartbeat)
			theirs := filepath.Join(f.fs.Root, "their-inbox")
			holdOpen(t, f.procDir, 600, inboxv1.FilesFor(theirs, sidLive).Lock)
		}, []doctor.Kind{doctor.KindDoormanNotFresh, doctor.KindInboxDirMismatch}},
		{"a live session's doorman follows this inbox dir", func(t *testing.T, f *fixture) {
			os.Remove(inboxv1.FilesFor(f.fs.Paths.InboxDir, sidLive).Heartbeat)
			holdOpen(t, f.procDir, 600, inboxv1.FilesFor(f.fs.Paths.InboxDir, sidLive).Lock)
		}, []doctor.Kind{doctor.KindDoormanNotFresh}},
		{"offline inbox all delivered", func(t *testing.T, f *fixture) {
			os.WriteFile(f.fs.InboxPath(sidGone), []byte("[mama 📡] done\n"), 0o600)
			os.WriteFile(inboxv1.FilesFor(f.fs.Paths.InboxDir, sidGone).Offset, []byte("17"), 0o600)
		}, nil},
		{"socket missing", func(t *testing.T, f *fixture) {
			writeStat(t, f.procDir, 700, 1, "7000")
			f.fs.WriteRow(station.Row{PID: 700, SessionID: sidGone, ProcStart: "7000", MessagingSocketPath: filepath.Join(f.fs.Root, "700.sock")})
		}, []doctor.Kind{doctor.KindSocketMissing}},
		{"a stale row's missing socket is not a finding", func(t *testing.T, f *fixture) {
			f.fs.WriteRow(station.Row{PID: 701, SessionID: sidGone, ProcStart: "1", MessagingSocketPath: filepath.Join(f.fs.Root, "701.sock")})
		}, nil},
		// A partial install (go build ./cli/oo-claude): sessions cannot
		// start the doorman, top cannot run.
		{"the doorman's program missing", func(t *testing.T, f *fixture) {
			os.Remove(filepath.Join(filepath.Dir(f.self), "oo-claude-doorman"))
		}, []doctor.Kind{doctor.KindProgramMissing}},
		{"both programs missing", func(t *testing.T, f *fixture) {
			os.Remove(filepath.Join(filepath.Dir(f.self), "oo-claude-doorman"))
			os.Remove(filepath.Join(filepath.Dir(f.self), "oo-claude-top"))
		}, []doctor.Kind{doctor.KindProgramMissing, doctor.KindProgramMissing}},
		{"the top program writable by every user", func(t *testing.T, f *fixture) {
			os.Chmod(filepath.Join(filepath.Dir(f.self), "oo-claude-top"), 0o777)
		}, []doctor.Kind{doctor.KindProgramUnusable}},
		{"the doorman's program a directory", func(t *testing.T, f *fixture) {
			p := filepath.Join(filepath.Dir(f.self), "oo-claude-doorman")
			os.Remove(p)
			os.Mkdir(p, 0o755)
		}, []doctor.Kind{doctor.KindProgramUnusable}},
		{"the caller's own lookup", func(t *testing.T, f *fixture) {
			f.opts.Self = ""
			f.opts.Program = func(name string) error {
				if name == "oo-claude-top" {
					return errTopMissing
				}
				return nil
			}
		}, []doctor.Kind{doctor.KindProgramMissing}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tt.breakIt(t, f)
			rep := doctor.Run(context.Background(), f.opts)
			if diff := cmp.Diff(tt.want, kinds(rep)); diff != "" {
				t.Errorf("finding kinds (-want +got):\n%s\nreport: %+v", diff, rep)
			}
			if rep.OK() != (len(tt.want) == 0) {
				t.Errorf("OK() = %v with %d findings", rep.OK(), len(rep.Findings))
			}
			for _, fd := range rep.Findings {
				if fd.Message == "" || fd.Fix == "" {
					t.Errorf("finding %s without message or fix: %+v", fd.Kind, fd)
				}
				if fd.Kind == doctor.KindUnknownSessionInbox && (strings.Contains(fd.Fix, "resume") || !strings.Contains(fd.Fix, "gc") || !strings.Contains(fd.Fix, "rm ")) {
					t.Errorf("fix %q: want gc or deleting it, never resume", fd.Fix)
				}
				if fd.Kind == doctor.KindInboxDirMismatch && (!strings.Contains(fd.Message, filepath.Join(f.fs.Root, "their-inbox")) || !strings.Contains(fd.Message, f.fs.Paths.InboxDir)) {
					t.Errorf("message %q does not name both directories", fd.Message)
				}
			}
			if len(rep.Checks) != 10 {
				t.Errorf("%d checks, want 10: %+v", len(rep.Checks), rep.Checks)
			}
			for _, fd := range rep.Findings {
				if (fd.Kind == doctor.KindProgramMissing || fd.Kind == doctor.KindProgramUnusable) && !strings.Contains(fd.Fix, "go install ./cli/...") {
					t.Errorf("fix %q: want the install command", fd.Fix)
				}
			}
		})
	}
}

// TestDirNotADirectoryNamesWhatItIs: a state dir that is a regular file
// is named so ("a file"), and the fix moves it away first (mkdir alone
// fails while it is there).
func TestDirNotADirectoryNamesWhatItIs(t *testing.T) {
	f := newFixture(t)
	f.opts.Config.StateDir = f.opts.Config.ClaudeBin
	rep := doctor.Run(context.Background(), f.opts)
	for _, fd := range rep.Findings {
		if fd.Kind == doctor.KindStateDirUnusable {
			if !strings.Contains(fd.Message, "is not a directory (a file)") || !strings.HasPrefix(fd.Fix, "move the file away") {
				t.Errorf("message %q fix %q", fd.Message, fd.Fix)
			}
			return
		}
	}
	t.Errorf("no %s finding: %+v", doctor.KindStateDirUnusable, rep.Findings)
}

func TestRunReportsTheSession(t *testing.T) {
	f := newFixture(t)
	rep := doctor.Run(context.Background(), f.opts)
	got := []any{rep.Session, rep.ClaudeVersion}
	want := []any{sidLive, "2.1.332 (Claude Code)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session, version (-want +got):\n%s", diff)
	}
	var statuses []string
	for _, c := range rep.Checks {
		statuses = append(statuses, c.Name+"="+string(c.Status))
	}
	wantStatuses := []string{"binary=ok", "programs=ok", "registry=ok", "inbox-dir=ok", "state-dir=ok", "mcp=ok", "doorman=ok", "offline-inboxes=ok", "doorman-dirs=ok", "sockets=ok"}
	if diff := cmp.Diff(wantStatuses, statuses); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
}

// TestBinaryDetailNamesTheCallersVersion: the version oo-claude is proven
// against comes from the caller (the library does not import the
// binary's version), and is left out when the caller gives none.
func TestBinaryDetailNamesTheCallersVersion(t *testing.T) {
	for _, tt := range []struct{ proven, want string }{
		{"1.2.3", " (oo-claude is proven against 1.2.3)"},
		{"", ""},
	} {
		f := newFixture(t)
		f.opts.ProvenAgainst = tt.proven
		rep := doctor.Run(context.Background(), f.opts)
		want := f.opts.Config.ClaudeBin + ": 2.1.332 (Claude Code)" + tt.want
		if got := rep.Checks[0].Detail; rep.Checks[0].Name != doctor.CheckBinary || got != want {
			t.Errorf("ProvenAgainst %q: %s detail %q, want %q", tt.proven, rep.Checks[0].Name, got, want)
		}
	}
}

func TestParseMCPGet(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want doctor.MCPRegistration
		ok   bool
	}{
		{"connected", "claude-inbox:\n  Scope: User config\n  Status: ✔ Connected\n  Type: stdio\n  Command: /x/oo-claude\n  Args: doorman --mcp\n  Environment:\n",
			doctor.MCPRegistration{Scope: "User config", Status: "✔ Connected", Type: "stdio", Command: "/x/oo-claude", Args: "doorman --mcp", Connected: true}, true},
		{"failed (recorded from Claude Code 2.1.332)", "claude-inbox:\n  Scope: User config (available in all your projects)\n  Status: ✘ Failed to connect\n  Issue: ENOENT: no such file or directory, posix_spawn '/usr/local/bin/oo-claude'\n  Type: stdio\n  Command: /usr/local/bin/oo-claude\n  Args: doorman --mcp\n  Environment:\n\nTo remove this server, run: claude mcp remove claude-inbox -s user\n",
			doctor.MCPRegistration{Scope: "User config (available in all your projects)", Status: "✘ Failed to connect",
				Issue: "ENOENT: no such file or directory, posix_spawn '/usr/local/bin/oo-claude'", Type: "stdio",
				Command: "/usr/local/bin/oo-claude", Args: "doorman --mcp"}, true},
		{"not registered", `No MCP server named "claude-inbox". Configured servers: x`, doctor.MCPRegistration{}, false},
		{"empty", "", doctor.MCPRegistration{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := doctor.ParseMCPGet([]byte(tt.out))
			if diff := cmp.Diff(tt.want, got); diff != "" || ok != tt.ok {
				t.Errorf("ok %v, want %v; (-want +got):\n%s", ok, tt.ok, diff)
			}
		})
	}
}

// ParseMCPGet never panics; it is ok only with a command and connected
// only when the status says so, and what `claude mcp get` prints for any
// registration parses back to it.
func FuzzParseMCPGet(f *testing.F) {
	f.Add("claude-inbox:\n  Status: ✔ Connected\n  Command: /x\n  Args: doorman --mcp\n", "claude-inbox", "User config", "✔ Connected", "", "stdio", "/x/oo-claude", "doorman --mcp")
	f.Add("No MCP server named \"x\"", "x", "Local", "✘ Failed to connect", "ENOENT: no such file", "stdio", "", "")
	f.Add("  Command: a\r\n  Command:\n", "Command: y", "", "Connected ✘", "Command: z", "", "c:d", "Args: x")
	f.Fuzz(func(t *testing.T, out, name, scope, status, issue, typ, command, args string) {
		reg, ok := doctor.ParseMCPGet([]byte(out))
		if ok && reg.Command == "" {
			t.Errorf("ok without a command: %+v", reg)
		}
		if reg.Connected && !strings.Contains(reg.Status, "Connected") {
			t.Errorf("connected with status %q", reg.Status)
		}
		for _, v := range []string{scope, status, issue, typ, command, args} {
			if strings.ContainsAny(v, "\n") || strings.TrimSpace(v) != v {
				return // not a value the CLI prints on one line
			}
		}
		if strings.ContainsAny(name, "\n") || strings.HasPrefix(name, " ") {
			return
		}
		printed := name + ":\n  Scope: " + scope + "\n  Status: " + status + "\n"
		if issue != "" {
			printed += "  Issue: " + issue + "\n"
		}
		printed += "  Type: " + typ + "\n  Command: " + command + "\n  Args: " + args + "\n  Environment:\n\nTo remove this server, run: claude mcp remove " + name + " -s user\n"
		want := doctor.MCPRegistration{Scope: scope, Status: status, Issue: issue, Type: typ, Command: command, Args: args,
			Connected: strings.Contains(status, "Connected") && !strings.Contains(status, "✘")}
		got, ok := doctor.ParseMCPGet([]byte(printed))
		if diff := cmp.Diff(want, got); diff != "" || ok != (command != "") {
			t.Fatalf("ParseMCPGet(%q): ok %v (-want +got):\n%s", printed, ok, diff)
		}
	})
}

func TestRealExec(t *testing.T) {
	// The default Exec runs a real program: /bin/sh stands in for claude.
	f := newFixture(t)
	f.opts.Exec = nil
	f.opts.Config.DoctorMCP = false
	if err := os.WriteFile(f.opts.Config.ClaudeBin, []byte("#!/bin/sh\necho '9.9.9 (Claude Code)'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	rep := doctor.Run(context.Background(), f.opts)
	if rep.ClaudeVersion != "9.9.9 (Claude Code)" || !rep.OK() {
		t.Errorf("version %q, findings %+v", rep.ClaudeVersion, rep.Findings)
	}
	// A claude that hangs is cut by the timeout.
	if err := os.WriteFile(f.opts.Config.ClaudeBin, []byte("#!/bin/sh\nexec sleep 30\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	f.opts.Timeout = 200 * time.Millisecond
	start := time.Now()
	rep = doctor.Run(context.Background(), f.opts)
	if d := time.Since(start); d > 20*time.Second { // well before the 30 s sleep ends; generous for a loaded machine
		t.Errorf("took %v", d)
	}
	if diff := cmp.Diff([]doctor.Kind{doctor.KindClaudeVersion}, kinds(rep)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func ExampleParseMCPGet() {
	out := "claude-inbox:\n  Scope: User config (available in all your projects)\n  Status: ✔ Connected\n  Type: stdio\n  Command: /usr/local/bin/oo-claude\n  Args: doorman --mcp\n"
	reg, ok := doctor.ParseMCPGet([]byte(out))
	fmt.Println(ok, reg.Connected, reg.Command, reg.Args)
	// Output: true true /usr/local/bin/oo-claude doorman --mcp
}
