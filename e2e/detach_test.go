package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// TestStartDetach: `oo-claude start --detach` returns with the session's id
// once its injected doorman follows (the run still going), a send right
// after is delivered and confirmed by the receiver's enqueue row, the
// model sees the line, and the result file ends completed, written by the
// supervisor the start left running.
func TestStartDetach(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 3"), fakemodel.Text("done")}})
	sid := uuid.NewString()
	out := filepath.Join(w.root, "start.json")
	t.Cleanup(func() { stopSupervisor(out) })
	rc, r := w.ooJSON([]string{"start", "work a little", "--tools", "Bash", "--allowed-tools", "Bash",
		"--session-id", sid, "--out", out, "--timeout", "120", "--detach"})
	t.Logf("start --detach returned after %v", r.took.Round(time.Millisecond))
	if r.code != 0 || str(rc, "state") != "started" || str(rc, "session_id") != sid || rc["supervisor_pid"] == nil {
		t.Fatalf("start --detach: want state started, its id and supervisor, exit 0\n%s", r)
	}
	if h, ok := w.readHeartbeat(sid); ok {
		since, err1 := time.Parse(time.RFC3339Nano, h.Since)
		began, err2 := time.Parse(time.RFC3339Nano, str(rc, "started_at"))
		if err1 == nil && err2 == nil {
			t.Logf("the session's doorman followed %v after the start began", since.Sub(began).Round(time.Millisecond))
		}
	}
	if r.took > 60*time.Second {
		t.Errorf("start --detach took %v, want the session's start-up time (well under 60 s)", r.took)
	}
	line := "steer the detached start " + uuid.NewString()
	sc, sr := w.send(sid, line)
	if sr.code != 0 || !strings.HasPrefix(str(sc, "class"), "delivered-") || str(sc, "confirm") != "transcript" {
		t.Fatalf("send right after: want delivered-*, confirm transcript, exit 0\n%s\nresult file: %s", sr, readFileText(out))
	}
	if _, err := waitRequest(w.model, 60*time.Second, func(q *fakemodel.Request) bool { return q.MessagesContain(line) }); err != nil {
		t.Fatalf("the model never saw the steered line: %v\nresult file: %s", err, readFileText(out))
	}
	var res map[string]any
	deadline := time.Now().Add(90 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if json.Unmarshal(b, &res) == nil && str(res, "state") != "started" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the detached run did not end within 90 s; result file: %s", b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if str(res, "state") != "completed" || res["doorman_delivered"] != 1.0 || str(res, "doorman") != "injected" {
		t.Errorf("result file: state %v doorman %v doorman_delivered %v, want completed, injected, 1\n%s",
			res["state"], res["doorman"], res["doorman_delivered"], readFileText(out))
	}
}

func readFileText(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// stopSupervisor ends a detached start's supervisor (and with it claude)
// if it still runs when the test ends: it left the test's process group.
func stopSupervisor(resultFile string) {
	var f struct {
		State string `json:"state"`
		PID   *int   `json:"supervisor_pid"`
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		b, err := os.ReadFile(resultFile)
		if err != nil || json.Unmarshal(b, &f) != nil || f.PID == nil || syscall.Kill(*f.PID, 0) != nil {
			return
		}
		if f.State != "started" {
			continue // it writes its receipt, then exits
		}
		_ = syscall.Kill(*f.PID, syscall.SIGTERM)
	}
	if f.PID != nil {
		_ = syscall.Kill(*f.PID, syscall.SIGKILL)
	}
}
