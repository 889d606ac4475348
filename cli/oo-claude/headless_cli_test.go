package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/claudeproc"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// hlRig is a fake station, the fake claude and systemd-run, and the
// environment that points oo-claude at them.
type hlRig struct {
	fs  *fakestation.Station
	fk  *fakeclaude.Fakes
	env []string
	cwd string // a project directory (symlink-free)
	// sid is a session id of this run only: the process scan of resume
	// sees every process of the machine, also other runs of these tests.
	sid string
}

func newHLRig(t *testing.T) *hlRig {
	t.Helper()
	fs := fakestation.New(t)
	fk := fakeclaude.Install(t)
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := append(fs.Env(), "OO_CLAUDE_BIN="+fk.Claude, "OO_CLAUDE_SYSTEMD_RUN="+fk.SystemdRun)
	return &hlRig{fs: fs, fk: fk, env: env, cwd: cwd, sid: uuid.NewString()}
}

// args returns a copy of args with the placeholders SID and CWD replaced
// by the rig's session id and project directory.
func (r *hlRig) args(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch a {
		case "SID":
			a = r.sid
		case "CWD":
			a = r.cwd
		}
		out[i] = a
	}
	return out
}

func (r *hlRig) run(t *testing.T, extraEnv []string, args ...string) result {
	t.Helper()
	return runBinary(t, append(append([]string{}, r.env...), extraEnv...), "", args...)
}

// transcriptFor writes a finished session's transcript recorded in r.cwd.
func (r *hlRig) transcriptFor(t *testing.T, sid string) string {
	t.Helper()
	dir := filepath.Join(r.fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(r.cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, sid+".jsonl")
	row := `{"type":"user","sessionId":"` + sid + `","cwd":"` + r.cwd + `","message":{"role":"user","content":"hi"}}` + "\n"
	if err := os.WriteFile(p, []byte(row), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func (r *hlRig) receipts(t *testing.T) []map[string]any {
	t.Helper()
	b, _ := os.ReadFile(r.fs.Paths.ReceiptsFile())
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func TestResumeClassesThroughBinary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(t *testing.T, r *hlRig)
		script  fakeclaude.Script
		args    []string
		code    int
		class   string
		heldBy  string
		ranOnce bool
		check   func(t *testing.T, r *hlRig, row map[string]any)
	}{
		{
			name: "delivered-resume", setup: func(t *testing.T, r *hlRig) { r.transcriptFor(t, r.sid) },
			script: fakeclaude.Script{Result: "PONG", CostUSD: 0.028},
			args:   []string{"resume", "SID", "say PONG", "--json"}, code: 0, class: "delivered-resume", ranOnce: true,
			check: func(t *testing.T, r *hlRig, row map[string]any) {
				c := r.fk.Calls("claude")[0]
				want := []string{"-p", "--resume", r.sid, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
					"--model", "claude-haiku-5-5", "--max-turns", "1",
					"--tools", "", "--permission-mode", "dontAsk", "--mcp-config", claudeproc.DoormanConfig(binary(t)), "--strict-mcp-config",
					"--max-budget-usd", "0.25"}
				if d := cmp.Diff(want, c.Args); d != "" {
					t.Errorf("claude argv (-want +got):\n%s", d)
				}
				if c.Dir != r.cwd {
					t.Errorf("claude ran in %s, want the recorded cwd %s", c.Dir, r.cwd)
				}
				turns, _ := row["turns"].([]any)
				if row["result"] != "PONG" || row["total_cost_usd"] != 0.028 || len(turns) != 1 || strings.Contains(fmt.Sprint(row["argv"]), "say PONG") {
					t.Errorf("row %v", row)
				}
			},
		},
		{
			name: "flags and --cwd", setup: func(t *testing.T, r *hlRig) { r.transcriptFor(t, r.sid) },
			args: []string{"resume", "SID", "hi", "--model", "claude-x", "--max-turns", "3", "--budget", "0.5", "--tools", "Read,Grep", "--cwd", "CWD", "--json"},
			code: 0, class: "delivered-resume", ranOnce: true,
			check: func(t *testing.T, r *hlRig, row map[string]any) {
				c := r.fk.Calls("claude")[0]
				want := []string{"-p", "--resume", r.sid, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
					"--model", "claude-x", "--max-turns", "3",
					"--tools", "Read,Grep", "--permission-mode", "dontAsk", "--mcp-config", claudeproc.DoormanConfig(binary(t)), "--strict-mcp-config",
					"--max-budget-usd", "0.5"}
				if d := cmp.Diff(want, c.Args); d != "" {
					t.Errorf("claude argv (-want +got):\n%s", d)
				}
			},
		},
		{name: "refused: line starting with -", setup: func(t *testing.T, r *hlRig) { r.transcriptFor(t, r.sid) },
			args: []string{"resume", "SID", "--json", "--", "--help"}, code: 1, class: "refused"},
		{name: "refused: no transcript", args: []string{"resume", "SID", "hi", "--json"}, code: 1, class: "refused"},
		{name: "refused: --cwd of another project", setup: func(t *testing.T, r *hlRig) { r.transcriptFor(t, r.sid) },
			args: []string{"resume", "SID", "hi", "--cwd", "/", "--json"}, code: 1, class: "refused"},
		{name: "refused: no line and none waits", setup: func(t *testing.T, r *hlRig) { r.transcriptFor(t, r.sid) },
			args: []string{"resume", "SID", "--json"}, code: 1, class: "refused",
			check: func(t *testing.T, r *hlRig, row map[string]any) {
				if !strings.Contains(fmt.Sprint(row["reason"]), "nothing-to-deliver") {
					t.Errorf("reason %v", row["reason"])
				}
			}},
		{name: "usage: no session", args: []string{"resume"}, code: 2},
		{
			name: "held: registry row", setup: func(t *testing.T, r *hlRig) {
				r.transcriptFor(t, r.sid)
				r.fs.AddSession(fakestation.Session{SessionID: r.sid})
			},
			args: []string{"resume", "SID", "hi", "--json"}, code: 3, class: "held-by-session", heldBy: headless.HeldByRegistry,
		},
		{
			name: "held: fresh doorman heartbeat", setup: func(t *testing.T, r *hlRig) {
				r.transcriptFor(t, r.sid)
				now := time.Now().UTC().Format(time.RFC3339Nano)
				hb := `{"pid":` + strconv.Itoa(os.Getpid()) + `,"session_id":"` + r.sid + `","since":"` + now + `","last_seen":"` + now + `","delivered":0,"offset":0,"state":"following"}`
				if err := os.WriteFile(r.fs.InboxPath(r.sid)+".doorman.json", []byte(hb), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			args: []string{"resume", "SID", "hi", "--json"}, code: 3, class: "held-by-session", heldBy: headless.HeldByHeartbeat,
		},
		{
			name: "held: a running claude names it", setup: func(t *testing.T, r *hlRig) {
				r.transcriptFor(t, r.sid)
				r.fk.Script(fakeclaude.Script{DelayMS: 60_000})
				cmd := exec.Command(r.fk.Claude, "-p", "--resume", r.sid, "working")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				r.fk.WaitCalls(ctxT(t, 10*time.Second), "claude", 1)
			},
			args: []string{"resume", "SID", "hi", "--json"}, code: 3, class: "held-by-session", heldBy: headless.HeldByProcess,
		},
		{
			name: "held: another resume holds the lock", setup: func(t *testing.T, r *hlRig) {
				r.transcriptFor(t, r.sid)
				l, err := fsx.TryLock(claudeproc.ResumeLockPath(r.fs.Paths, r.sid))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Unlock() })
			},
			args: []string{"resume", "SID", "hi", "--json"}, code: 3, class: "held-by-session", heldBy: headless.HeldByLock,
		},
		{
			name: "error: budget exhausted", setup: func(t *testing.T, r *hlRig) { r.transcriptFor(t, r.sid) },
			script: fakeclaude.Script{IsError: true, Subtype: "error_max_budget_usd", TerminalReason: "budget_exhausted", CostUSD: 0.26, Exit: 1, Stderr: "over budget\n"},
			args:   []string{"resume", "SID", "hi", "--json"}, code: 4, class: "error", ranOnce: true,
			check: func(t *testing.T, r *hlRig, row map[string]any) {
				if row["subtype"] != "error_max_budget_usd" || row["terminal_reason"] != "budget_exhausted" || row["total_cost_usd"] != 0.26 ||
					row["exit_code"] != 1.0 || row["stderr_tail"] != "over budget" {
					t.Errorf("row %v", row)
				}
			},
		},
		{
			name: "error: no parseable result", setup: func(t *testing.T, r *hlRig) { r.transcriptFor(t, r.sid) },
			script: fakeclaude.Script{Stdout: "Error: boom\n", Exit: 1},
			args:   []string{"resume", "SID", "hi"}, code: 4, ranOnce: true,
		},
		{
			name: "error: another session id", setup: func(t *testing.T, r *hlRig) { r.transcriptFor(t, r.sid) },
			script: fakeclaude.Script{SessionID: "99999999-0000-4000-8000-000000000000"},
			args:   []string{"resume", "SID", "hi", "--json"}, code: 4, class: "error", ranOnce: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newHLRig(t)
			if tt.setup != nil {
				tt.setup(t, r)
			}
			before := len(r.fk.Calls("claude"))
			r.fk.Script(tt.script)
			res := r.run(t, nil, r.args(tt.args)...)
			if res.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", res.code, tt.code, res.stdout, res.stderr)
			}
			if ran := len(r.fk.Calls("claude")) - before; ran != map[bool]int{true: 1}[tt.ranOnce] {
				t.Errorf("claude ran %d times", ran)
			}
			if tt.class == "" {
				return
			}
			var row map[string]any
			if err := json.Unmarshal([]byte(res.stdout), &row); err != nil {
				t.Fatalf("stdout %q: %v", res.stdout, err)
			}
			if row["class"] != tt.class || row["kind"] != "resume" {
				t.Errorf("class %v, want %s (reason %v)", row["class"], tt.class, row["reason"])
			}
			if tt.heldBy != "" && row["held_by"] != tt.heldBy {
				t.Errorf("held_by %v, want %s", row["held_by"], tt.heldBy)
			}
			rec := r.receipts(t)
			if len(rec) != 1 || rec[0]["class"] != tt.class {
				t.Errorf("receipts %v", rec)
			}
			if tt.check != nil {
				tt.check(t, r, row)
			}
		})
	}
}

// callerEnv is a calling session's environment: 40 CLAUDE* variables (the
// 18 of the keep-list and 22 others, among them the caller's door, token and
// session id), a provider companion, and plain variables.
func callerEnv() (env []string, secrets []string) {
	drop := []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_MESSAGING_SOCKET",
		"CLAUDE_CODE_MESSAGING_TOKEN", "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_CHILD_NOTES_DIR", "CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS",
		"CLAUDE_CODE_CHILD_SESSION", "CLAUDE_CODE_SESSION_ATTENDED", "CLAUDE_CODE_SDK_HAS_HOST_AUTH_REFRESH",
		"CLAUDE_CODE_HOST_SESSION_ID", "CLAUDE_PID", "CLAUDE_AGENT_SDK_VERSION", "CLAUDE_AGENT_SDK_CLIENT_APP",
		"CLAUDE_CODE_SESSION_KIND", "CLAUDE_CODE_SESSION_NAME", "CLAUDE_CODE_PROJECT_DIR_NAME", "CLAUDE_CODE_TMPDIR",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR", "CLAUDEX"}
	for _, n := range drop {
		v := "caller-" + strings.ToLower(n)
		switch n {
		case "CLAUDE_CODE_SESSION_ID":
			v = "c0ffee00-1111-4111-8111-111111111111"
		case "CLAUDE_CODE_MESSAGING_TOKEN":
			v = "0123456789abcdef0123456789abcdef"
		case "CLAUDE_CODE_MESSAGING_SOCKET":
			v = "/run/user/0/cc-socks/1.sock"
		}
		env = append(env, n+"="+v)
		secrets = append(secrets, v)
	}
	for _, n := range claudeproc.KeepEnv() {
		if strings.HasSuffix(n, "_FILE_DESCRIPTOR") || n == "CLAUDE_CONFIG_DIR" {
			continue // set by the test
		}
		env = append(env, n+"=kept-"+strings.ToLower(n))
	}
	env = append(env, "ANTHROPIC_BASE_URL=http://127.0.0.1:1", "LANG=C.UTF-8")
	return env, secrets
}

func TestResumeScrubsEnvironmentExactly(t *testing.T) {
	t.Parallel()
	r := newHLRig(t)
	r.transcriptFor(t, r.sid)
	caller, _ := callerEnv()
	// The descriptors: the oauth token at 4 and the api key at 3 in
	// oo-claude; named in that order, the child gets them as 3 and 4.
	dir := t.TempDir()
	var files []*os.File
	for _, c := range []string{"api-key-secret", "oauth-secret"} {
		p := filepath.Join(dir, c)
		os.WriteFile(p, []byte(c), 0o600)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
	}
	env := append(append(append([]string{}, r.env...), caller...),
		"CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR=4", "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR=3")
	n := 0
	for _, kv := range env {
		if strings.HasPrefix(kv, "CLAUDE") {
			n++
		}
	}
	if n != 40 {
		t.Fatalf("the caller has %d CLAUDE* variables, want 40", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := command(ctx, t, env, "resume", r.sid, "hi")
	cmd.ExtraFiles = files
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	calls := r.fk.Calls("claude")
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	// Exactly our environment (without the test harness's switch) minus
	// the 22, the descriptors renumbered.
	var want []string
	for _, kv := range append([]string{"PATH=/usr/bin:/bin", childGORACE()}, env...) {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR":
			want = append(want, name+"=3")
		case name == "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR":
			want = append(want, name+"=4")
		case strings.HasPrefix(name, "CLAUDE") && !slices.Contains(claudeproc.KeepEnv(), name):
		default:
			want = append(want, kv)
		}
	}
	slices.Sort(want)
	if d := cmp.Diff(want, calls[0].Env); d != "" {
		t.Errorf("child env (-want +got):\n%s", d)
	}
	kept := 0
	for _, kv := range calls[0].Env {
		if strings.HasPrefix(kv, "CLAUDE") {
			kept++
		}
	}
	if kept != 18 {
		t.Errorf("%d CLAUDE* variables reached the child, want 18", kept)
	}
	wantFDs := map[string]string{"CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR": "oauth-secret", "CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR": "api-key-secret"}
	if d := cmp.Diff(wantFDs, calls[0].FDs); d != "" {
		t.Errorf("descriptors the child read (-want +got):\n%s", d)
	}
}

func TestResumeTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	r := newHLRig(t)
	r.transcriptFor(t, r.sid)
	r.fk.Script(fakeclaude.Script{DelayMS: 120_000, Grandchild: true, IgnoreTERM: true})
	start := time.Now()
	// --timeout 1 could end before the fake claude had started its
	// grandchild on a loaded machine; the bound is the point (the fake
	// runs 120 s, ignoring SIGTERM) and is generous.
	res := r.run(t, nil, "resume", r.sid, "hi", "--timeout", "5", "--json")
	if res.code != 5 {
		t.Fatalf("exit %d, want 5; stderr %s", res.code, res.stderr)
	}
	if el := time.Since(start); el > 60*time.Second {
		t.Errorf("took %s", el)
	}
	calls := r.fk.Calls("claude")
	if len(calls) != 1 || calls[0].Grandchild == 0 {
		t.Fatalf("calls %+v", calls)
	}
	if calls[0].PGID != calls[0].PID {
		t.Errorf("claude runs in process group %d, not its own (%d)", calls[0].PGID, calls[0].PID)
	}
	for _, pid := range []int{calls[0].PID, calls[0].Grandchild} {
		if (station.Proc{}).Alive(pid, "") {
			t.Errorf("pid %d survived the timeout", pid)
		}
	}
	if !strings.Contains(res.stdout, `"class":"timeout"`) {
		t.Errorf("stdout %s", res.stdout)
	}
}

// TestStartTakesTheProcessFromEnv: start in process, with a proc whose
// working directory and environment are the test's, not the os package's:
// claude runs in that directory (no --cwd given) with that environment.
func TestStartTakesTheProcessFromEnv(t *testing.T) {
	t.Parallel()
	r := newHLRig(t)
	r.fk.Script(fakeclaude.Script{Result: "READY"})
	env := append(append([]string{}, r.env...), "OO_CLAUDE_SEAM_PROBE=from-env")
	getenv := func(k string) string {
		for _, kv := range env {
			if n, v, _ := strings.Cut(kv, "="); n == k {
				return v
			}
		}
		return ""
	}
	p := testProc(getenv)
	p.environ = func() []string { return env }
	p.getwd = func() (string, error) { return r.cwd, nil }
	var out, errb strings.Builder
	err := run(context.Background(), []string{"start", "hi", "--session-id", r.sid, "--no-doorman", "--json"}, strings.NewReader(""), &out, &errb, p)
	if code := exitCode(err, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	calls := r.fk.Calls("claude")
	if len(calls) != 1 || calls[0].Dir != r.cwd || !slices.Contains(calls[0].Env, "OO_CLAUDE_SEAM_PROBE=from-env") {
		t.Fatalf("claude calls %+v, want one in %s with the env's environment", calls, r.cwd)
	}
}
