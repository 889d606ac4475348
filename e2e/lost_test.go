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

// TestKilledStartIsLost: SIGKILL of `oo-claude start` (the supervisor
// alone, not its process group) takes the real claude with it; the next
// `oo-claude sessions` reports the run lost and finalizes its result file
// (state lost, ended_at, a supervisor-gone reason), and a second one
// reads what the file now says.
func TestKilledStartIsLost(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{})
	sid := uuid.NewString()
	w.model.Enqueue(fakemodel.Reply{Text: "later", Delay: 90 * time.Second})
	done := w.ooAsync([]string{"start", "work slowly", "--session-id", sid, "--json"})
	out := filepath.Join(w.stateDir(), "start", sid+".json")
	var f struct {
		State               string  `json:"state"`
		PID                 *int    `json:"pid"`
		SupervisorPID       *int    `json:"supervisor_pid"`
		SupervisorProcStart *string `json:"supervisor_proc_start"`
		EndedAt             *string `json:"ended_at"`
		Reason              *string `json:"reason"`
	}
	read := func() {
		b, _ := os.ReadFile(out)
		_ = json.Unmarshal(b, &f)
	}
	if _, err := waitRequest(w.model, 60*time.Second, nil); err != nil {
		t.Fatalf("the started session never asked the model: %v\n%s", err, drain(done))
	}
	read()
	if f.State != "started" || f.PID == nil || f.SupervisorPID == nil || f.SupervisorProcStart == nil || *f.SupervisorProcStart != procStart(t, *f.SupervisorPID) {
		t.Fatalf("running: %+v, want started naming claude and its supervisor with the supervisor's procStart", f)
	}
	claude := *f.PID
	if err := syscall.Kill(*f.SupervisorPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done // the killed start has exited
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(claude, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // claude dies with its supervisor (parent-death signal)
	}
	if syscall.Kill(claude, 0) == nil {
		t.Errorf("claude (pid %d) outlived its killed supervisor", claude)
	}

	doc, r := w.ooJSON([]string{"sessions"})
	starts, _ := doc["starts"].([]any)
	if r.code != 0 || len(starts) != 1 {
		t.Fatalf("sessions: want exit 0 and one start\n%s", r)
	}
	s, _ := starts[0].(map[string]any)
	if str(s, "state") != "lost" || s["finalized"] != true || str(s, "session") != sid || !strings.HasPrefix(str(s, "reason"), "supervisor-gone: ") {
		t.Errorf("sessions --json starts[0] = %v, want lost, finalized", s)
	}
	read()
	if f.State != "lost" || f.EndedAt == nil || f.Reason == nil {
		t.Errorf("result file after sessions: %+v, want lost with ended_at and reason", f)
	}
	doc, _ = w.ooJSON([]string{"sessions"})
	starts, _ = doc["starts"].([]any)
	if s, _ := starts[0].(map[string]any); len(starts) != 1 || str(s, "state") != "lost" || s["finalized"] != false {
		t.Errorf("second sessions: %v, want lost, not finalized again", starts)
	}
}
