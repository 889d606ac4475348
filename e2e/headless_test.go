package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// pong answers "PONG" to any request that carries marker, else "ok". The
// resumed turn runs without tools, so the fake model's side filter routes
// it as a side request; both routes answer alike.
func pong(marker string) func(*fakemodel.Request) fakemodel.Reply {
	return func(r *fakemodel.Request) fakemodel.Reply {
		if r.MessagesContain(marker) {
			return fakemodel.Text("PONG")
		}
		return fakemodel.Text("ok")
	}
}

// TestResume: `oo-claude resume` against the real CLI (OO_CLAUDE_BIN): a
// finished session gets one more turn, delivered-resume with the model's
// answer, in the same session and transcript; a session that runs is
// held-by-session (exit 3) and left alone.
func TestResume(t *testing.T) {
	t.Parallel()
	t.Run("finished session", func(t *testing.T) {
		t.Parallel()
		line := "resume line " + uuid.NewString()
		w := newWorld(t, fakemodel.Options{Handler: pong(line), SideReply: pong(line)})
		sid := uuid.NewString()
		first := w.start(pargs("the first turn", "--session-id", sid))
		first.mustSucceed(60 * time.Second)

		rc, r := w.ooJSON([]string{"resume", sid, line})
		if r.code != 0 || str(rc, "class") != "delivered-resume" {
			t.Fatalf("resume: want delivered-resume, exit 0\n%s\nfake model: %d requests", r, w.model.Len())
		}
		if str(rc, "result") != "PONG" || str(rc, "result_session_id") != sid {
			t.Errorf("resume receipt result %q, result_session_id %q; want PONG, %s", rc["result"], rc["result_session_id"], sid)
		}
		if str(rc, "cwd") != w.cwd {
			t.Errorf("resume ran in %q, want the session's cwd %q", rc["cwd"], w.cwd)
		}
		seen := false
		for _, q := range w.model.Requests() {
			if q.MessagesContain(line) {
				seen = q.MessagesContain("the first turn") // the resumed conversation
			}
		}
		if !seen {
			t.Errorf("no request carried the line with the session's earlier turn")
		}
		tp := w.transcriptPath(w.cwd, sid)
		rows := readJSONL(t, tp)
		var entry []string
		for _, row := range rows {
			if row["type"] == "user" {
				entry = append(entry, str(row, "entrypoint"))
			}
		}
		if len(entry) < 2 {
			t.Errorf("transcript has %d user rows, want the first turn's and the resumed one's", len(entry))
		}
		w.record(tp, "resumed-turn")
	})
	t.Run("running session", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 3"), fakemodel.Text("done")}})
		sid := uuid.NewString()
		s := w.start(pargs("stay busy", "--allowedTools", "Bash", "--session-id", sid))
		s.waitModel(30*time.Second, "the first time", nil)
		s.waitRow(30 * time.Second)
		line := "must not land " + uuid.NewString()
		rc, r := w.ooJSON([]string{"resume", sid, line})
		if r.code != 3 || str(rc, "class") != "held-by-session" {
			s.fatalf("resume of a running session: want held-by-session, exit 3\n%s", r)
		}
		res := s.mustSucceed(60 * time.Second)
		if res["result"] != "done" || res["session_id"] != sid {
			t.Errorf("the running session ended with result %v, session %v; want done, %s (untouched)", res["result"], res["session_id"], sid)
		}
		for _, q := range w.model.Requests() {
			if q.Contains(line) {
				t.Errorf("%s carries the held line", &q)
			}
		}
	})
}

// TestStartSteered: `oo-claude start` in the foreground runs a real session
// with the doorman injected; a line sent while it works reaches the model,
// and the result file records doorman injected, doorman_delivered 1 and
// the run's turns.
func TestStartSteered(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 3"), fakemodel.Text("done")}})
	sid := uuid.NewString()
	out := filepath.Join(w.root, "start.json")
	done, first := w.startSteerable(sid, "work a little", "--tools", "Bash", "--allowed-tools", "Bash",
		"--session-id", sid, "--out", out, "--name", "e2e-start", "--json")
	ctx := w.model
	line := "steer the start " + uuid.NewString()
	rc, r := w.send(sid, line)
	if r.code != 0 || !strings.HasPrefix(str(rc, "class"), "delivered-") {
		t.Fatalf("send: want delivered-*, exit 0\n%s\nstart: %s", r, drain(done))
	}
	if _, err := waitRequest(ctx, 30*time.Second, func(q *fakemodel.Request) bool {
		return q.Seq > first.Seq && q.MessagesContain(line)
	}); err != nil {
		t.Fatalf("the model never saw the steered line: %v\nstart: %s", err, drain(done))
	}
	res, b := w.startResult(done, out)
	want := map[string]any{"state": "completed", "session_id": sid, "doorman": "injected", "doorman_delivered": 1.0, "name": "e2e-start"}
	for k, v := range want {
		if res[k] != v {
			t.Errorf("result file %s = %v, want %v", k, res[k], v)
		}
	}
	if len(turnsOf(res)) == 0 {
		t.Errorf("result file has no turns:\n%s", b)
	}
	var hb heartbeat
	if err := json.Unmarshal(mustRaw(res["doorman_heartbeat"]), &hb); err != nil || hb.State != "stopped" || hb.SessionID != sid {
		t.Errorf("result file doorman_heartbeat = %v (%v), want the injected doorman's, stopped", res["doorman_heartbeat"], err)
	}
}

// TestStartSystemd: `oo-claude start --systemd` needs a user systemd
// manager; where there is one, the detached unit completes the session and
// its result file names the unit. The model's address reaches the unit
// through the session's settings (the unit gets a fixed list of plain
// variables, never ANTHROPIC_*).
func TestStartSystemd(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{})
	if why := noUserSystemd(w.env()); why != "" {
		t.Skipf("no user systemd manager here (%s); the fake systemd-run test in cli/oo-claude covers the argv", why)
	}
	settings, _ := json.Marshal(map[string]any{"env": map[string]string{
		"ANTHROPIC_BASE_URL": w.model.URL, "ANTHROPIC_API_KEY": "sk-ant-test",
		"DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	}})
	if err := os.WriteFile(filepath.Join(w.config, "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
	w.model.Enqueue(fakemodel.Text("READY"))
	out := filepath.Join(w.root, "start.json")
	rc, r := w.ooJSON([]string{"start", "say READY", "--systemd", "--out", out},
		"OO_CLAUDE_SYSTEMD_RUN=/usr/bin/systemd-run")
	if r.code != 0 || str(rc, "state") != "started" || !strings.HasPrefix(str(rc, "unit"), "oo-claude-") {
		t.Fatalf("start --systemd: want state started with a unit, exit 0\n%s", r)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		var res map[string]any
		if json.Unmarshal(b, &res) == nil && str(res, "state") != "started" {
			if str(res, "state") != "completed" || str(res, "result") != "READY" || str(res, "unit") != str(rc, "unit") {
				t.Errorf("unit result: state %v, result %v, unit %v; want completed, READY, %s", res["state"], res["result"], res["unit"], rc["unit"])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the unit %s did not finish within 90 s; result file: %s", rc["unit"], b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// noUserSystemd says why there is no user systemd manager to run units in,
// or "" when there is one.
func noUserSystemd(env []string) string {
	if _, err := exec.LookPath("systemd-run"); err != nil {
		return "no systemd-run in PATH"
	}
	rt := os.Getenv("XDG_RUNTIME_DIR")
	if rt == "" {
		rt = filepath.Join("/run/user", itoa(os.Getuid()))
	}
	if _, err := os.Stat(filepath.Join(rt, "systemd", "private")); err != nil {
		out, _ := exec.Command("systemctl", "--user", "is-system-running").CombinedOutput()
		return "no " + filepath.Join(rt, "systemd", "private") + "; systemctl --user is-system-running: " + strings.TrimSpace(string(out))
	}
	return ""
}

// startSteerable runs `oo-claude start <prompt> args…` in the background
// and waits until the started session (sid) has asked the model once and
// its injected doorman follows it, so a line sent now steers it.
func (w *world) startSteerable(sid, prompt string, args ...string) (<-chan ooRun, *fakemodel.Request) {
	w.t.Helper()
	done := w.ooAsync(append([]string{"start", prompt}, args...))
	first, err := waitRequest(w.model, 30*time.Second, nil)
	if err != nil {
		w.t.Fatalf("the started session never asked the model: %v\nstart: %s", err, drain(done))
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if h, ok := w.readHeartbeat(sid); ok && following(sid)(h) {
			return done, first
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the injected doorman never followed: heartbeat %s\nstart: %s", w.heartbeatText(sid), drain(done))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startResult waits for a background start to exit 0 and returns its
// result file, decoded and raw.
func (w *world) startResult(done <-chan ooRun, out string) (map[string]any, []byte) {
	w.t.Helper()
	if sr := <-done; sr.code != 0 {
		w.t.Fatalf("start: want exit 0\n%s", sr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		w.t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		w.t.Fatalf("result file: %v\n%s", err, b)
	}
	return res, b
}

// waitRequest waits for a model request matching match (nil: any).
func waitRequest(m *fakemodel.Server, timeout time.Duration, match func(*fakemodel.Request) bool) (*fakemodel.Request, error) {
	ctx, cancel := contextWithTimeout(timeout)
	defer cancel()
	return m.WaitRequest(ctx, match)
}

// drain describes a background oo-claude run: finished, or still going.
func drain(done <-chan ooRun) string {
	select {
	case r := <-done:
		return r.String()
	case <-time.After(100 * time.Millisecond):
		return "still running"
	}
}

func mustRaw(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestStartRelativeConfigDir: with a relative CLAUDE_CONFIG_DIR (taken
// against the working directory, as Claude Code takes it), `oo-claude
// start --cwd <elsewhere>` hands the real claude the absolute dir: the
// session writes its transcript under the config dir oo-claude reads, and
// `read` finds it. A relative value was a usage error of every verb; passed
// on as it was, claude (run in --cwd) would have resolved it elsewhere.
func TestStartRelativeConfigDir(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Text("done")}})
	sid := uuid.NewString()
	sub := filepath.Join(w.cwd, "sub")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(w.cwd, w.config)
	if err != nil {
		t.Fatal(err)
	}
	env := "CLAUDE_CONFIG_DIR=" + rel // from w.cwd; from sub it names another dir
	r := w.oo([]string{"start", "hello", "--cwd", sub, "--session-id", sid, "--no-lineage", "--json"}, env)
	if r.code != 0 {
		t.Fatalf("start: want exit 0\n%s", r)
	}
	want := filepath.Join(w.config, "projects", transcriptfile.EncodeProjectDir(sub), sid+".jsonl")
	if _, err := os.Stat(want); err != nil {
		t.Errorf("no transcript where oo-claude reads: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sub, rel)); err == nil {
		t.Errorf("claude resolved %s against --cwd: %s exists", rel, filepath.Join(sub, rel))
	}
	if rd := w.oo([]string{"read", sid}, env); rd.code != 0 || !strings.Contains(rd.stdout, "done") {
		t.Errorf("read: want exit 0 and the answer\n%s", rd)
	}
}
