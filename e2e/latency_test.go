package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// samplesEnv sets how many steers TestSteerLatency measures (default 5).
const samplesEnv = "OO_CLAUDE_E2E_STEER_SAMPLES"

// TestSteerLatency measures, through the real CLI, the time from the start
// of `oo-claude send` (a new process) to the model's next request carrying
// the line, for a busy turn. Each sample is one tool round of one session:
// the Bash tool runs until the doorman's ack file holds the sample's ack,
// so the round ends as soon as the line is delivered and the figure is the
// pipeline's (send's start-up, append, the doorman's file event, the door
// write and its settle, the ack, claude's next request), not a sleep's.
// It logs every sample and the median; BENCHMARKS.md records them.
func TestSteerLatency(t *testing.T) {
	t.Parallel()
	n := sampleCount(t, samplesEnv, 5)
	sid := uuid.NewString()
	w := newWorld(t, fakemodel.Options{})
	ackFile := w.inbox(sid) + ".ack"
	for i := 1; i <= n; i++ {
		// Wait (briefly polling, as a tool would) for the i-th ack.
		w.model.Enqueue(fakemodel.Bash(fmt.Sprintf(
			`for k in $(seq 1 3000); do [ "$(cat %q 2>/dev/null | wc -l)" -ge %d ] && break; sleep 0.01; done; echo round %d`, ackFile, i, i)))
	}
	w.model.Enqueue(fakemodel.Text("done"))
	s := w.start(w.withDoorman(pargs("take steers", "--allowedTools", "Bash", "--session-id", sid)...))
	s.waitHeartbeat(sid, 30*time.Second, "a following doorman", following(sid))

	var took []time.Duration
	last := 0
	for i := 1; i <= n; i++ {
		// The request answered with round i's tool call.
		q := s.waitModel(30*time.Second, fmt.Sprintf("for round %d", i), func(q *fakemodel.Request) bool {
			return q.Seq > last && !q.Side
		})
		last = q.Seq
		time.Sleep(300 * time.Millisecond) // the tool runs now
		line := fmt.Sprintf("latency %d %s", i, uuid.NewString())
		start := time.Now()
		done := w.ooAsync([]string{"send", sid, line, "--from", "e2e", "--json"})
		carried := s.waitModel(30*time.Second, "with "+line, func(q *fakemodel.Request) bool {
			return q.Seq > last && q.MessagesContain(line)
		})
		took = append(took, carried.Time.Sub(start))
		if r := <-done; r.code != 0 {
			s.fatalf("send %d: %s", i, r)
		}
		last = carried.Seq - 1 // the carrying request is the next round's
	}
	s.mustSucceed(60 * time.Second)
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	var parts []string
	for _, d := range took {
		parts = append(parts, d.Round(time.Millisecond).String())
	}
	t.Logf("send → the model's next request carrying the line, busy turn, %d samples: %s; median %v",
		n, strings.Join(parts, " "), sorted[len(sorted)/2].Round(time.Millisecond))
}
