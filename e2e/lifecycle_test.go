package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/claudeproc"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// turnsOf reads the turns list of a receipt row or result file.
func turnsOf(m map[string]any) []map[string]any {
	var out []map[string]any
	list, _ := m["turns"].([]any)
	for _, t := range list {
		if o, ok := t.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

// TestResumeDeliversWaitingLines: a line sent to a finished session is
// queued-offline with the hint `oo-claude resume <id>`; that command, run as
// printed, hands the waiting line to the model through the injected
// doorman, leaves nothing pending, and its receipt lists the turn the line
// started (started_by peer, with the ack's msg_id). A resume with a line of
// its own while another waits runs both.
func TestResumeDeliversWaitingLines(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"hint", "doctor", "line"} {
		withLine := how == "line"
		name := map[string]string{"hint": "the printed hint", "doctor": "doctor's fix", "line": "resume with a line"}[how]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			waiting := "waiting line " + uuid.NewString()
			own := "own line " + uuid.NewString()
			// Each line is answered once: the first request that holds
			// it without its answer.
			answer := func(r *fakemodel.Request) fakemodel.Reply {
				switch {
				case r.MessagesContain(waiting) && !r.MessagesContain("ANSWER-WAITING"):
					return fakemodel.Text("ANSWER-WAITING")
				case r.MessagesContain(own) && !r.MessagesContain("ANSWER-OWN"):
					return fakemodel.Text("ANSWER-OWN")
				}
				return fakemodel.Text("ok")
			}
			// The resumed turns run without tools: the side filter may
			// route them as side requests; both routes answer alike.
			w := newWorld(t, fakemodel.Options{Handler: answer, SideReply: answer})
			sid := uuid.NewString()
			w.start(pargs("the first turn", "--session-id", sid)).mustSucceed(60 * time.Second)

			rc, r := w.send(sid, waiting)
			if str(rc, "class") != "queued-offline" {
				t.Fatalf("send to a finished session: want queued-offline\n%s", r)
			}
			before, _ := w.ooJSON([]string{"sessions"})
			listed := false
			list, _ := before["offline_inboxes"].([]any)
			for _, o := range list {
				if m, _ := o.(map[string]any); m["session"] == sid && m["pending"] == 1.0 {
					listed = true
				}
			}
			if !listed {
				t.Errorf("before the resume, sessions does not list the inbox offline with 1 pending: %v", before["offline_inboxes"])
			}
			hint := strings.Fields(str(rc, "hint"))
			if len(hint) != 3 || hint[0] != "oo-claude" || hint[1] != "resume" || hint[2] != sid {
				t.Fatalf("hint %q, want oo-claude resume %s", rc["hint"], sid)
			}
			args := hint[1:]
			if withLine {
				args = append(args, own)
			}
			if how == "doctor" {
				dr := w.oo([]string{"doctor", "--json"})
				var rep struct {
					Findings []struct{ Kind, Session, Fix string }
				}
				if err := json.Unmarshal([]byte(dr.stdout), &rep); err != nil {
					t.Fatalf("doctor --json: %v\n%s", err, dr)
				}
				fix := ""
				for _, f := range rep.Findings {
					if f.Kind == "offline-inbox-waiting" && f.Session == sid {
						fix = f.Fix
					}
				}
				words := strings.Fields(fix)
				if len(words) < 2 || words[0] != "oo-claude" {
					t.Fatalf("doctor's fix for the offline inbox %q is not an oo-claude command\n%s", fix, dr)
				}
				args = words[1:]
			}
			row, rr := w.ooJSON(args)
			if rr.code != 0 || str(row, "class") != "delivered-resume" {
				t.Fatalf("%s: want delivered-resume, exit 0\n%s", name, rr)
			}
			saw := false
			for _, q := range w.model.Requests() {
				saw = saw || q.MessagesContain(waiting)
			}
			if !saw {
				t.Errorf("the fake model never received the waiting line")
			}
			// Before the resume the session's inbox is listed offline with
			// the line pending; after it, it is not (nothing waits).
			doc, sr := w.ooJSON([]string{"sessions"})
			list, _ = doc["offline_inboxes"].([]any)
			for _, o := range list {
				if m, _ := o.(map[string]any); m["session"] == sid {
					t.Errorf("sessions lists the inbox offline with %v pending after the resume\n%s", m["pending"], sr)
				}
			}
			turns := turnsOf(row)
			acks := w.acks(sid)
			if len(acks) != 1 || acks[0].Class != "delivered-steer" && acks[0].Class != "delivered-start" {
				t.Fatalf("acks %+v, want the waiting line delivered once", acks)
			}
			wantTurns := 1
			if withLine {
				wantTurns = 2
			}
			if len(turns) != wantTurns {
				t.Fatalf("receipt turns %v, want %d", row["turns"], wantTurns)
			}
			// The doorman may deliver the waiting line before claude reads
			// its own: the turns come in either order.
			peer, prompt := turns[0], turns[len(turns)-1]
			if peer["started_by"] != "peer" {
				peer, prompt = prompt, peer
			}
			if withLine && (prompt["started_by"] != "prompt" || prompt["result"] != "ANSWER-OWN") {
				t.Errorf("the line's turn %v, want started_by prompt, result ANSWER-OWN", prompt)
			}
			if peer["started_by"] != "peer" || peer["msg_id"] != acks[0].MsgID || peer["result"] != "ANSWER-WAITING" {
				t.Errorf("peer turn %v, want started_by peer, msg_id %s, result ANSWER-WAITING", peer, acks[0].MsgID)
			}
		})
	}
}

// TestStartSteeredRecordsBothTurns: a foreground start steered while its
// first turn waits for the model records two turns: the prompt's answer,
// then the steered line's turn with the line's msg_id.
func TestStartSteeredRecordsBothTurns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Reply{Text: "FIRST", Delay: 3 * time.Second}, fakemodel.Text("SECOND")}})
	sid := uuid.NewString()
	out := filepath.Join(w.root, "start.json")
	done, _ := w.startSteerable(sid, "answer first", "--session-id", sid, "--out", out, "--json")
	line := "steered " + uuid.NewString()
	rc, r := w.send(sid, line)
	if !strings.HasPrefix(str(rc, "class"), "delivered-") {
		t.Fatalf("send: want delivered-*\n%s", r)
	}
	res, b := w.startResult(done, out)
	turns := turnsOf(res)
	if len(turns) != 2 {
		t.Fatalf("result file turns %v, want 2\n%s", res["turns"], b)
	}
	if turns[0]["started_by"] != "prompt" || turns[0]["result"] != "FIRST" {
		t.Errorf("turn 1 %v, want the prompt's answer FIRST", turns[0])
	}
	if turns[1]["started_by"] != "peer" || turns[1]["msg_id"] != str(rc, "msg_id") || turns[1]["result"] != "SECOND" {
		t.Errorf("turn 2 %v, want the steered line's (msg_id %s)", turns[1], rc["msg_id"])
	}
	if res["result"] != "SECOND" {
		t.Errorf("result %v, want the final turn's SECOND", res["result"])
	}
	rows := decodeLines[map[string]any](t, filepath.Join(w.stateDir(), "receipts.jsonl"))
	last := rows[len(rows)-1]
	if last["kind"] != "start" || len(turnsOf(last)) != 2 {
		t.Errorf("start receipt turns %v, want 2", last["turns"])
	}
}

// TestNoLoginSaysWhy: without a login (no API key), start and resume fail
// with claude's own reason on stderr and in the verdict's reason.
func TestNoLoginSaysWhy(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{})
	sid := uuid.NewString()
	w.model.Enqueue(fakemodel.Text("ok"))
	w.start(pargs("the first turn", "--session-id", sid)).mustSucceed(60 * time.Second)
	const reason = "Not logged in"
	for _, args := range [][]string{
		{"start", "hello", "--json"},
		{"resume", sid, "hello", "--json"},
	} {
		r := w.oo(args, "ANTHROPIC_API_KEY=")
		var v map[string]any
		_ = json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &v)
		if r.code != 4 || !strings.Contains(str(v, "reason"), reason) || !strings.Contains(str(v, "note"), reason) || !strings.Contains(r.stderr, reason) {
			t.Errorf("%s: want exit 4 and claude's reason %q in the verdict's reason and note and on stderr\n%s", args[0], reason, r)
		}
		r = w.oo(args[:len(args)-1], "ANTHROPIC_API_KEY=")
		if r.code != 4 || !strings.Contains(r.stderr, reason) {
			t.Errorf("%s: want claude's reason %q on stderr\n%s", args[0], reason, r)
		}
	}
}

// TestProcessScanFormsOfTheRealCLI: the real binary reads -r<sid> and
// -pr <sid> as a resume of sid (its registry row names the session), and
// claudeproc.NamesSession reads the same from its command line, so resume
// and start --session-id see such a process as the session's driver.
func TestProcessScanFormsOfTheRealCLI(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{})
	sid := uuid.NewString()
	w.model.Enqueue(fakemodel.Text("ok"))
	w.start(pargs("the first turn", "--session-id", sid)).mustSucceed(60 * time.Second)
	forms := [][]string{
		{"-r" + sid, "-p", "go on"},
		{"-pr", sid, "go on"},
	}
	for _, form := range forms {
		w.model.Enqueue(fakemodel.Reply{Text: "later", Delay: 20 * time.Second})
		s := w.start(append(form, "--output-format", "json", "--model", testModel))
		row := s.waitRow(30 * time.Second)
		if row.SessionID != sid {
			t.Errorf("claude %v runs session %s, want the resumed %s", form, row.SessionID, sid)
		}
		b, err := os.ReadFile(filepath.Join("/proc", itoa(s.pid()), "cmdline"))
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if !claudeproc.NamesSession(args, sid) {
			t.Errorf("NamesSession(%q) is false for a process the real CLI runs as session %s", args, sid)
		}
		_ = syscall.Kill(-s.pid(), syscall.SIGKILL)
		_ = s.wait(10 * time.Second)
	}
}
