package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// TestWrappedStartOfTheRealCLI: a dispatcher that wraps its calls —
// timeout, bash -c, env, nohup, nice — starts a session with
// `oo-claude start --session-id X` and the real claude completes it: the
// wrapper, whose command line names X, is not taken for the session's
// driver.
func TestWrappedStartOfTheRealCLI(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{})
	wrappers := []struct {
		name string
		argv []string
	}{
		{"timeout", []string{"timeout", "120"}},
		{"bash -c", []string{"bash", "-c", `"$0" "$@"; exit $?`}},
		{"env", []string{"env", "DISPATCHER=1"}},
		{"nohup", []string{"nohup"}},
		{"nice", []string{"nice", "-n", "1"}},
	}
	for _, wr := range wrappers {
		sid := uuid.NewString()
		w.model.Enqueue(fakemodel.Text("ok"))
		r := <-w.ooAsyncVia(wr.argv, []string{"start", "say ok", "--session-id", sid, "--json"})
		var f map[string]any
		_ = json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &f)
		if r.code != 0 || str(f, "state") != "completed" || str(f, "session_id") != sid {
			t.Errorf("%s oo-claude start --session-id: want exit 0, completed\n%s", wr.name, r)
		}
	}
}

// TestRealClaudeHoldsTheSession: a real claude running session X (started
// directly, or wrapped by timeout) still holds it: with the registry and
// heartbeat out of sight (oo-claude reads another config dir, so only the
// process scan can see it), `oo-claude start --session-id X` is refused
// session-in-use and `oo-claude resume X` is held-by-session, both naming
// the claude process, never its wrapper.
func TestRealClaudeHoldsTheSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{})
	other := filepath.Join(w.root, "other-config")
	if err := os.MkdirAll(filepath.Join(other, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, wrapped := range []bool{false, true} {
		sid := uuid.NewString()
		w.model.Enqueue(fakemodel.Reply{Text: "later", Delay: 60 * time.Second})
		var claudePID int
		if !wrapped {
			s := w.start(pargs("work", "--session-id", sid))
			claudePID = s.pid()
			s.waitRow(60 * time.Second)
		} else {
			cmd := exec.Command("timeout", "120", w.claude, "-p", "work", "--output-format", "json", "--model", testModel, "--session-id", sid)
			cmd.Dir, cmd.Env = w.cwd, w.env()
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
			// claude is timeout's child; wait for its registry row.
			deadline := time.Now().Add(60 * time.Second)
			for claudePID == 0 {
				if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "task", strconv.Itoa(cmd.Process.Pid), "children")); err == nil {
					if f := strings.Fields(string(b)); len(f) > 0 {
						claudePID, _ = strconv.Atoi(f[0])
					}
				}
				if time.Now().After(deadline) {
					t.Fatal("timeout never ran claude")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if _, err := waitRegistryRow(w.rowPath(claudePID), 60*time.Second, func() bool { return false }); err != nil {
				t.Fatalf("the wrapped claude wrote no registry row: %v", err)
			}
		}
		env := "CLAUDE_CONFIG_DIR=" + other
		r := w.oo([]string{"start", "x", "--session-id", sid, "--json"}, env)
		if r.code != 1 || !strings.Contains(r.stdout, "session-in-use") || !strings.Contains(r.stdout, "claude process "+strconv.Itoa(claudePID)+" ") {
			t.Errorf("wrapped %v: start beside the real claude %d: want exit 1 session-in-use naming it\n%s", wrapped, claudePID, r)
		}
		res, r := w.ooJSON([]string{"resume", sid, "hi"}, env)
		if r.code != 3 || str(res, "class") != "held-by-session" || str(res, "held_by") != "process" || res["pid"] != float64(claudePID) {
			t.Errorf("wrapped %v: resume beside the real claude %d: want exit 3 held-by-session by that process\n%s", wrapped, claudePID, r)
		}
	}
}
