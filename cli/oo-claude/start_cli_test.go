package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/claudeproc"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

func readStartFile(t *testing.T, path string) headless.StartFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f headless.StartFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return f
}

func TestStartClassesThroughBinary(t *testing.T) {
	t.Parallel()
	self := binary(t)
	doorman := claudeproc.DoormanConfig(self)
	// argv is claude's argv for session sid with mid between the fixed
	// head and tail.
	argv := func(mid ...string) func(sid string) []string {
		return func(sid string) []string {
			head := []string{"-p", "--session-id", sid, "--output-format", "stream-json", "--verbose", "--model", "claude-haiku-5-5", "--max-turns", "4",
				"--permission-mode", "dontAsk", "--tools", ""}
			return append(append(head, mid...), "--max-budget-usd", "0.25", "do it")
		}
	}
	tests := []struct {
		name     string
		script   fakeclaude.Script
		args     []string
		code     int
		state    headless.Class
		argv     func(sid string) []string
		doorman  headless.DoormanMode
		check    func(t *testing.T, r *hlRig, f headless.StartFile)
		noClaude bool
	}{
		{name: "completed with the injected doorman", script: fakeclaude.Script{Result: "READY", CostUSD: 0.015},
			args: []string{"start", "do it", "--session-id", "SID", "--name", "worker", "--json"}, code: 0, state: headless.Completed,
			argv: argv("--mcp-config", doorman, "--strict-mcp-config"), doorman: headless.DoormanInjected,
			check: func(t *testing.T, r *hlRig, f headless.StartFile) {
				if f.Result == nil || *f.Result != "READY" || *f.TotalCostUSD != 0.015 || f.Name == nil || *f.Name != "worker" ||
					*f.DoormanDelivered != 0 || f.Note != nil || string(f.DoormanHeartbeat) != "null" {
					t.Errorf("file %+v", f)
				}
				fi, err := os.Stat(r.fs.InboxPath(r.sid))
				if err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("inbox: %v %v", fi, err)
				}
				if f.Lineage.Skipped == nil || *f.Lineage.Skipped != "no-parent" {
					t.Errorf("lineage %+v", f.Lineage)
				}
			}},
		{name: "--no-doorman keeps --strict-mcp-config alone", args: []string{"start", "do it", "--session-id", "SID", "--no-doorman", "--json"},
			code: 0, state: headless.Completed, argv: argv("--strict-mcp-config"), doorman: headless.DoormanNone},
		{name: "--user-mcp and --allowed-tools", args: []string{"start", "do it", "--session-id", "SID", "--user-mcp", "--allowed-tools", "Bash(git status *) Read", "--json"},
			code: 0, state: headless.Completed, argv: argv("--allowedTools", "Bash(git status *) Read"), doorman: headless.DoormanUserScope},
		{name: "doorman delivered lines: count and note", script: fakeclaude.Script{Result: "STEERED", Acks: 2},
			args: []string{"start", "do it", "--session-id", "SID", "--json"}, code: 0, state: headless.Completed,
			argv: argv("--mcp-config", doorman, "--strict-mcp-config"), doorman: headless.DoormanInjected,
			check: func(t *testing.T, r *hlRig, f headless.StartFile) {
				if *f.DoormanDelivered != 2 || f.Note != nil || len(f.Turns) != 1 {
					t.Errorf("delivered %v note %v turns %v", *f.DoormanDelivered, f.Note, f.Turns)
				}
				var hb map[string]any
				if json.Unmarshal(f.DoormanHeartbeat, &hb) != nil || hb["state"] != "stopped" {
					t.Errorf("heartbeat %s", f.DoormanHeartbeat)
				}
			}},
		{name: "failed", script: fakeclaude.Script{IsError: true, Subtype: "error_max_turns", TerminalReason: "max_turns", Exit: 1, Stderr: "turns\n"},
			args: []string{"start", "do it", "--session-id", "SID", "--json"}, code: 4, state: headless.Failed,
			argv: argv("--mcp-config", doorman, "--strict-mcp-config"), doorman: headless.DoormanInjected,
			check: func(t *testing.T, r *hlRig, f headless.StartFile) {
				if *f.Subtype != "error_max_turns" || *f.TerminalReason != "max_turns" || *f.StderrTail != "turns" || *f.ExitCode != 1 {
					t.Errorf("file %+v", f)
				}
			}},
		{name: "timeout", script: fakeclaude.Script{DelayMS: 60_000, Grandchild: true},
			args: []string{"start", "do it", "--session-id", "SID", "--timeout", "5", "--json"}, code: 5, state: headless.Timeout,
			argv: argv("--mcp-config", doorman, "--strict-mcp-config"), doorman: headless.DoormanInjected,
			check: func(t *testing.T, r *hlRig, f headless.StartFile) {
				c := r.fk.Calls("claude")[0]
				for _, pid := range []int{c.PID, c.Grandchild} {
					if (station.Proc{}).Alive(pid, "") {
						t.Errorf("pid %d survived", pid)
					}
				}
			}},
		{name: "refused: prompt starting with -", args: []string{"start", "--json", "--", "-rf"}, code: 1, state: headless.Refused, noClaude: true},
		{name: "usage: --no-doorman with --user-mcp", args: []string{"start", "x", "--no-doorman", "--user-mcp"}, code: 2, noClaude: true},
		{name: "usage: --no-lineage with --parent", args: []string{"start", "x", "--no-lineage", "--parent", "8f0c5b8e-3a55-4d7e-9a7e-2d2b8f1e6a10"}, code: 2, noClaude: true},
		{name: "usage: no prompt", args: []string{"start"}, code: 2, noClaude: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newHLRig(t)
			r.fk.Script(tt.script)
			res := r.run(t, nil, append(r.args(tt.args), "--cwd", r.cwd)...)
			if res.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", res.code, tt.code, res.stdout, res.stderr)
			}
			calls := r.fk.Calls("claude")
			if tt.noClaude {
				if len(calls) != 0 {
					t.Errorf("claude ran")
				}
				if tt.state == "" {
					return
				}
			}
			var printed headless.StartFile
			if err := json.Unmarshal([]byte(res.stdout), &printed); err != nil {
				t.Fatalf("stdout %q: %v", res.stdout, err)
			}
			if printed.State != tt.state {
				t.Errorf("state %s, want %s", printed.State, tt.state)
			}
			if tt.noClaude {
				return
			}
			f := readStartFile(t, filepath.Join(r.fs.Paths.StateDir, "start", r.sid+".json"))
			for _, x := range []*headless.StartFile{&printed, &f} {
				var b bytes.Buffer
				if json.Compact(&b, x.DoormanHeartbeat) == nil {
					x.DoormanHeartbeat = b.Bytes()
				}
			}
			if d := cmp.Diff(printed, f); d != "" {
				t.Errorf("printed vs result file (-printed +file):\n%s", d)
			}
			if len(calls) != 1 {
				t.Fatalf("%d claude calls", len(calls))
			}
			if d := cmp.Diff(tt.argv(r.sid), calls[0].Args); d != "" {
				t.Errorf("claude argv (-want +got):\n%s", d)
			}
			if calls[0].Dir != r.cwd || f.Doorman != tt.doorman || f.SessionID != r.sid {
				t.Errorf("dir %s doorman %s sid %s", calls[0].Dir, f.Doorman, f.SessionID)
			}
			if f.Argv[len(f.Argv)-1] != "<line>" {
				t.Errorf("file argv %v", f.Argv)
			}
			rec := r.receipts(t)
			if len(rec) != 1 || rec[0]["kind"] != "start" || rec[0]["class"] != string(tt.state) {
				t.Errorf("receipts %v", rec)
			}
			if tt.check != nil {
				tt.check(t, r, f)
			}
		})
	}
}

func TestStartRecordsCallingSessionAsParent(t *testing.T) {
	t.Parallel()
	const parent = "9a4e0000-1111-4222-8333-444455556666"
	tests := []struct {
		name  string
		setup func(r *hlRig) []string
		args  []string
		want  *string
	}{
		{"nearest ancestor with a live row", func(r *hlRig) []string {
			// This test process is an ancestor of oo-claude.
			r.fs.AddSession(fakestation.Session{PID: os.Getpid(), SessionID: parent, HostSessionID: "local_9a4e0000aa", Entrypoint: "claude-desktop"})
			return []string{"CLAUDE_CODE_SESSION_ID=c0ffee00-1111-4111-8111-111111111111"}
		}, nil, ptrTo(parent)},
		{"else CLAUDE_CODE_SESSION_ID", func(r *hlRig) []string {
			return []string{"CLAUDE_CODE_SESSION_ID=" + parent}
		}, nil, ptrTo(parent)},
		{"--no-lineage", func(r *hlRig) []string {
			return []string{"CLAUDE_CODE_SESSION_ID=" + parent}
		}, []string{"--no-lineage"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newHLRig(t)
			env := tt.setup(r)
			res := r.run(t, env, append([]string{"start", "go", "--session-id", r.sid, "--cwd", r.cwd, "--json"}, tt.args...)...)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			f := readStartFile(t, filepath.Join(r.fs.Paths.StateDir, "start", r.sid+".json"))
			if d := cmp.Diff(tt.want, f.Lineage.ParentSession); d != "" {
				t.Errorf("lineage parent (-want +got):\n%s", d)
			}
			links, _ := (&lineage.Ledger{Path: r.fs.Paths.LineageFile()}).Links(context.Background())
			if tt.want == nil {
				if len(links) != 0 || f.Lineage.Skipped == nil {
					t.Errorf("links %v, lineage %+v", links, f.Lineage)
				}
				return
			}
			if len(links) != 1 || *links[0].ParentSession != parent || links[0].ChildSession != r.sid || links[0].By != lineage.ByParent || !f.Lineage.Registered {
				t.Errorf("links %+v, lineage %+v", links, f.Lineage)
			}
		})
	}
}

func TestStartSystemd(t *testing.T) {
	t.Parallel()
	r := newHLRig(t)
	r.fk.ScriptFor(fakeclaude.NameSystemdRun, fakeclaude.Script{RunUnit: true, UnitEnv: []string{"OO_CLAUDE_TEST_AS_BINARY=1"}})
	r.fk.Script(fakeclaude.Script{Result: "READY", CostUSD: 0.001})
	const parent = "9a4e0000-1111-4222-8333-444455556666"
	caller, secrets := callerEnv()
	env := append(caller, "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat-secret", "XDG_RUNTIME_DIR=/run/user/0", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus")
	// The caller's CLAUDE_CODE_SESSION_ID is the parent.
	for i, kv := range env {
		if strings.HasPrefix(kv, "CLAUDE_CODE_SESSION_ID=") {
			env[i] = "CLAUDE_CODE_SESSION_ID=" + parent
		}
	}
	res := r.run(t, env, "start", "do it", "--session-id", r.sid, "--systemd", "--timeout", "60", "--cwd", r.cwd, "--json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	resultFile := filepath.Join(r.fs.Paths.StateDir, "start", r.sid+".json")
	unit := "oo-claude-" + r.sid[:8] // the unit is named by the session id's first 8 characters
	var d headless.Detached
	if err := json.Unmarshal([]byte(res.stdout), &d); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(headless.Detached{State: headless.Started, Unit: unit, ResultFile: resultFile, SessionID: r.sid}, d); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	sr := r.fk.Calls(fakeclaude.NameSystemdRun)
	if len(sr) != 1 {
		t.Fatalf("%d systemd-run calls", len(sr))
	}
	var eflags []string
	for _, n := range claudeproc.UnitEnvNames() {
		if slices.ContainsFunc(append(append([]string{}, r.env...), env...), func(kv string) bool { return strings.HasPrefix(kv, n+"=") }) || n == "PATH" {
			eflags = append(eflags, "-E", n)
		}
	}
	want := append(append([]string{"--user", "--unit", unit, "--same-dir", "--collect", "--no-block", "--property=RuntimeMaxSec=90"},
		eflags...), "--", binary(t), "start", "--foreground-unit", resultFile)
	if diff := cmp.Diff(want, sr[0].Args); diff != "" {
		t.Errorf("systemd-run argv (-want +got):\n%s", diff)
	}
	// The unit runs oo-claude start, which runs claude.
	calls, _ := r.fk.WaitCalls(ctxT(t, 30*time.Second), "claude", 1)
	if len(calls) != 1 {
		t.Fatalf("the unit did not run claude")
	}
	var f headless.StartFile
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if f = readStartFile(t, resultFile); f.State != headless.Started {
			break
		}
	}
	if f.State != headless.Completed || f.Unit == nil || *f.Unit != unit || f.Result == nil || *f.Result != "READY" {
		t.Errorf("result file %+v", f)
	}
	if f.Lineage.ParentSession == nil || *f.Lineage.ParentSession != parent || !f.Lineage.Registered {
		t.Errorf("lineage block lost: %+v", f.Lineage)
	}
	if _, err := os.Stat(claudeproc.PromptFile(resultFile)); !os.IsNotExist(err) {
		t.Errorf("prompt file left behind: %v", err)
	}
	// The unit's body still writes its receipt after the result file: let
	// it end before the test's directories go.
	for deadline := time.Now().Add(30 * time.Second); sr[0].UnitPID != 0 && (station.Proc{}).Alive(sr[0].UnitPID, "") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	// Neither systemd-run nor the unit's claude got a token, a door or the
	// caller's identity.
	for _, c := range []fakeclaude.Call{sr[0], calls[0]} {
		for _, kv := range c.Env {
			name, val, _ := strings.Cut(kv, "=")
			if slices.Contains(claudeproc.CredentialEnv(), name) || strings.HasPrefix(name, "ANTHROPIC_") || slices.Contains(secrets, val) {
				t.Errorf("%s reached %s", kv, c.Name)
			}
			if strings.HasPrefix(name, "CLAUDE") && !slices.Contains(claudeproc.UnitEnvNames(), name) {
				t.Errorf("%s reached %s", name, c.Name)
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// A dispatcher that wraps its calls (timeout, bash -c, env, nohup, nice)
// is not refused by its own wrapper: the wrapper's command line names the
// session, but only a claude process holds one. A claude process that
// names the session still refuses the start and holds the resume.
func TestWrappedStartAndResumeThroughBinary(t *testing.T) {
	t.Parallel()
	wrappers := map[string]func(bin string, args []string) []string{
		"timeout": func(bin string, args []string) []string {
			return append([]string{"/usr/bin/timeout", "60", bin}, args...)
		},
		"bash -c": func(bin string, args []string) []string {
			return []string{"/usr/bin/bash", "-c", `"$0" "$@"; exit $?`, bin} // not exec'd: bash stays the parent
		},
		"env":   func(bin string, args []string) []string { return append([]string{"/usr/bin/env", "A=1", bin}, args...) },
		"nohup": func(bin string, args []string) []string { return append([]string{"/usr/bin/nohup", bin}, args...) },
		"nice": func(bin string, args []string) []string {
			return append([]string{"/usr/bin/nice", "-n", "1", bin}, args...)
		},
	}
	run := func(t *testing.T, r *hlRig, wrap func(string, []string) []string, args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := command(ctx, t, r.env, args...)
		argv := wrap(cmd.Path, args)
		if argv[0] == "/usr/bin/bash" {
			argv = append(argv, args...)
		}
		cmd.Path, cmd.Args = argv[0], argv
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{stdout: out.String(), stderr: errb.String(), code: code}
	}
	for name, wrap := range wrappers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newHLRig(t)
			res := run(t, r, wrap, "start", "do it", "--session-id", r.sid, "--cwd", r.cwd, "--json")
			if res.code != 0 || !strings.Contains(res.stdout, `"state":"completed"`) {
				t.Errorf("%s oo-claude start --session-id: exit %d, want 0 completed\nstdout: %s\nstderr: %s", name, res.code, res.stdout, res.stderr)
			}
			rsid := uuid.NewString()
			r.transcriptFor(t, rsid)
			res = run(t, r, wrap, "resume", rsid, "hi", "--json")
			if res.code != 0 || !strings.Contains(res.stdout, `"class":"delivered-resume"`) {
				t.Errorf("%s oo-claude resume: exit %d, want 0 delivered-resume\nstdout: %s\nstderr: %s", name, res.code, res.stdout, res.stderr)
			}
		})
	}
	t.Run("a claude holds it", func(t *testing.T) {
		t.Parallel()
		r := newHLRig(t)
		r.transcriptFor(t, r.sid)
		r.fk.Script(fakeclaude.Script{DelayMS: 60_000})
		cmd := exec.Command("/usr/bin/timeout", "60", r.fk.Claude, "-p", "--resume", r.sid, "working")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		calls, _ := r.fk.WaitCalls(ctxT(t, 30*time.Second), "claude", 1)
		if len(calls) != 1 {
			t.Fatal("the fake claude did not run")
		}
		r.fk.Script(fakeclaude.Script{})
		res := run(t, r, wrappers["timeout"], "resume", r.sid, "hi", "--json")
		if res.code != 3 || !strings.Contains(res.stdout, `"held_by":"process"`) || !strings.Contains(res.stdout, `"pid":`+strconv.Itoa(calls[0].PID)) {
			t.Errorf("resume beside claude %d: exit %d, want 3 held by that process\nstdout: %s", calls[0].PID, res.code, res.stdout)
		}
		res = run(t, r, wrappers["bash -c"], "start", "do it", "--session-id", r.sid, "--cwd", r.cwd, "--json")
		if res.code != 1 || !strings.Contains(res.stdout, "session-in-use") || !strings.Contains(res.stdout, "claude process "+strconv.Itoa(calls[0].PID)) {
			t.Errorf("start beside claude %d: exit %d, want 1 session-in-use naming it\nstdout: %s\nstderr: %s", calls[0].PID, res.code, res.stdout, res.stderr)
		}
	})
}

// A start whose supervisor is killed leaves its result file started; the
// next `sessions` reports the run as lost and finalizes the file (state
// lost, ended_at, a supervisor-gone reason), and claude died with it.
func TestKilledStartIsLost(t *testing.T) {
	t.Parallel()
	r := newHLRig(t)
	r.fk.Script(fakeclaude.Script{DelayMS: 120_000})
	out := filepath.Join(r.fs.Paths.StateDir, "start", r.sid+".json")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := command(ctx, t, r.env, "start", "do it", "--session-id", r.sid, "--cwd", r.cwd, "--json")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	calls, _ := r.fk.WaitCalls(ctxT(t, 30*time.Second), "claude", 1)
	if len(calls) != 1 {
		t.Fatal("claude did not run")
	}
	// The file names claude once it runs (written before claude is told to go on).
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(out); err == nil && strings.Contains(string(b), `"pid": `+strconv.Itoa(calls[0].PID)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the result file does not name claude")
		}
		time.Sleep(10 * time.Millisecond)
	}
	f := readStartFile(t, out)
	if f.State != headless.Started || f.SupervisorPID == nil || *f.SupervisorPID != cmd.Process.Pid || f.SupervisorProcStart == nil || *f.SupervisorProcStart == "" {
		t.Fatalf("running: state %s supervisor %v start %v, want started by %d with its start time", f.State, f.SupervisorPID, f.SupervisorProcStart, cmd.Process.Pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	res := r.run(t, nil, "sessions", "--json")
	if res.code != 0 {
		t.Fatalf("sessions: exit %d\n%s", res.code, res.stderr)
	}
	var doc struct {
		Starts []struct {
			Session, State, Reason string
			ResultFile             string `json:"result_file"`
			Finalized              bool
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Starts) != 1 || doc.Starts[0].State != "lost" || !doc.Starts[0].Finalized || doc.Starts[0].ResultFile != out ||
		!strings.HasPrefix(doc.Starts[0].Reason, "supervisor-gone: ") {
		t.Errorf("sessions --json starts: %+v, want the killed start lost and finalized", doc.Starts)
	}
	f = readStartFile(t, out)
	if f.State != headless.Lost || f.EndedAt == nil || f.Reason == nil || !strings.Contains(*f.Reason, strconv.Itoa(cmd.Process.Pid)) || f.Note == nil {
		t.Errorf("result file: state %s ended_at %v reason %v note %v, want lost with ended_at, reason and note", f.State, f.EndedAt, f.Reason, f.Note)
	}
	if (station.Proc{}).Alive(calls[0].PID, "") {
		t.Errorf("claude (pid %d) outlived its killed supervisor", calls[0].PID)
	}
	res = r.run(t, nil, "sessions")
	if !regexp.MustCompile(r.sid + ` +lost +supervisor ` + strconv.Itoa(cmd.Process.Pid) + ` +` + regexp.QuoteMeta(out)).MatchString(res.stdout) {
		t.Errorf("sessions does not show the lost start:\n%s", res.stdout)
	}
}

// sessionsStarts runs `sessions --json` and returns its starts.
func sessionsStarts(t *testing.T, r *hlRig) []observatory.Start {
	t.Helper()
	res := r.run(t, nil, "sessions", "--json")
	if res.code != 0 {
		t.Fatalf("sessions: exit %d\n%s", res.code, res.stderr)
	}
	var doc observatory.Document
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Starts
}

// A detached start's supervisor is the unit's process: while the unit runs
// claude its run reads started (the detaching start is long gone); once
// the unit's process is killed, lost.
func TestKilledUnitIsLost(t *testing.T) {
	t.Parallel()
	r := newHLRig(t)
	r.fk.ScriptFor(fakeclaude.NameSystemdRun, fakeclaude.Script{RunUnit: true, UnitEnv: []string{"OO_CLAUDE_TEST_AS_BINARY=1"}})
	r.fk.Script(fakeclaude.Script{DelayMS: 120_000})
	res := r.run(t, nil, "start", "do it", "--session-id", r.sid, "--systemd", "--timeout", "300", "--cwd", r.cwd, "--json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	resultFile := filepath.Join(r.fs.Paths.StateDir, "start", r.sid+".json")
	calls, _ := r.fk.WaitCalls(ctxT(t, 30*time.Second), "claude", 1)
	if len(calls) != 1 {
		t.Fatal("the unit did not run claude")
	}
	info, err := (station.Proc{}).Info(calls[0].PID)
	if err != nil {
		t.Fatal(err)
	}
	unitPID := info.PPID // the unit's body runs claude
	t.Cleanup(func() { syscall.Kill(unitPID, syscall.SIGKILL) })
	var f headless.StartFile
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if f = readStartFile(t, resultFile); f.PID != nil && *f.PID == calls[0].PID {
			break
		}
	}
	if f.State != headless.Started || f.SupervisorPID == nil || *f.SupervisorPID != unitPID || f.SupervisorProcStart == nil {
		t.Fatalf("running: state %s supervisor %v (start %v), want started by the unit's process %d", f.State, f.SupervisorPID, f.SupervisorProcStart, unitPID)
	}
	if got := sessionsStarts(t, r); len(got) != 1 || got[0].State != observatory.StartStarted || string(got[0].Unit) == "" {
		t.Errorf("while the unit runs: %+v, want started", got)
	}
	if err := syscall.Kill(unitPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); (station.Proc{}).Alive(unitPID, *f.SupervisorProcStart) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := sessionsStarts(t, r); len(got) != 1 || got[0].State != observatory.StartLost || !got[0].Finalized {
		t.Errorf("after the unit's process was killed: %+v, want lost", got)
	}
	if f := readStartFile(t, resultFile); f.State != headless.Lost || f.Unit == nil || f.EndedAt == nil {
		t.Errorf("result file: state %s unit %v ended_at %v, want lost, the unit kept", f.State, f.Unit, f.EndedAt)
	}
}
