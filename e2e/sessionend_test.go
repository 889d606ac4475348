package e2e

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// TestReplyWaitEndsWithTheSession: `send --reply 60` into a busy -p
// session; once the doorman acked the line, the claude process is killed
// (SIGKILL). The wait ends with the session, not with its 60 s: exit 0
// (the class's, delivered-steer), wait_end session-ended, a note that says
// so, and no timeout. The tool waits in python3: the Bash tool refuses a
// standalone long sleep, and the session would end on its own.
func TestReplyWaitEndsWithTheSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Reply{Text: "working", ToolUse: &fakemodel.ToolUse{Name: "Bash", Input: map[string]any{"command": "python3 -c 'import time; time.sleep(60)'"}}},
		fakemodel.Text("never reached")}})
	s := w.start(w.withDoorman(pargs("work for a while", "--allowedTools", "Bash")...))
	s.waitModel(30*time.Second, "the first time", nil)
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))

	line := "are you there " + uuid.NewString()
	done := w.ooAsync([]string{"send", sid, line, "--from", "e2e", "--reply", "60", "--json"})
	ackFile := w.inbox(sid) + ".ack"
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(ackFile)
		if strings.Contains(string(b), `"msg_id"`) {
			break
		}
		if time.Now().After(deadline) {
			s.fatalf("no ack within 30 s")
		}
		time.Sleep(10 * time.Millisecond) // a poll of the ack file
	}
	killed := time.Now()
	if err := syscall.Kill(s.pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The tool's process outlives claude in claude's process group.
	t.Cleanup(func() { _ = syscall.Kill(-s.pid(), syscall.SIGKILL) })
	var r ooRun
	select {
	case r = <-done:
	case <-time.After(90 * time.Second):
		s.fatalf("send did not return within 90 s of the kill")
	}
	took := time.Since(killed)
	t.Logf("send --reply 60 returned %v after the SIGKILL of claude (pid %d): %s", took, s.pid(), r.stdout)
	rc, err := verdictRow(r.stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if r.code != 0 || str(rc, "class") != "delivered-steer" || str(rc, "wait_end") != "session-ended" || rc["interrupted"] != nil {
		t.Fatalf("want delivered-steer, exit 0, wait_end session-ended\n%s", r)
	}
	// Within 1 s of the end on an idle machine (measured: milliseconds);
	// generous here, for a loaded one. The old wait ran out its 60 s.
	if took > 20*time.Second {
		t.Errorf("the wait ended %v after the session", took)
	}
	if note := str(rc, "note"); !strings.HasPrefix(note, "the session ended (its process ") || strings.Contains(note, "within") {
		t.Errorf("note %q: want the session's end, never a timeout", note)
	}
}
