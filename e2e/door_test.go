package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// doorLine is one peer line for the door.
type doorLine struct {
	from, msgID, text string
}

func newDoorLine(from string) doorLine {
	id := uuid.NewString()
	return doorLine{from: from, msgID: id, text: fmt.Sprintf("e2e %s line %s", from, id)}
}

// frame is the user frame carrying the line to session sid.
func (l doorLine) frame(sid string) string {
	b, err := json.Marshal(map[string]any{
		"type": "user", "session_id": sid, "from": l.from, "msg_id": l.msgID, "priority": "next",
		"message": map[string]any{"role": "user", "content": l.text},
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestDoor: who is shown. A line from the session's own MCP child (a
// descendant) and a line from a foreign process (this test process), both
// written while a tool runs; in the default mode both reach the model, in
// bypassPermissions only the descendant's does (origin selfSent true) and
// the foreign one is held and never shown.
func TestDoor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		args         []string
		env          []string
		foreignShown bool
		selfSent     bool
	}{
		{name: "default mode", args: []string{"--allowedTools", "Bash"}, foreignShown: true},
		{name: "bypassPermissions", args: []string{"--permission-mode", "bypassPermissions"}, env: []string{"IS_SANDBOX=1"}, selfSent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 3"), fakemodel.Text("done")}})
			cfg, p := w.mcpProbe("probe", true)
			s := w.start(pargs("wait for peers", append(tt.args, "--mcp-config", cfg, "--strict-mcp-config")...), tt.env...)
			first := s.waitModel(30*time.Second, "the first time", nil)
			row := s.waitRow(30 * time.Second)

			mine, foreign := newDoorLine("e2e-descendant"), newDoorLine("e2e-foreign")
			if err := p.send(true, mine.frame(row.SessionID)); err != nil {
				s.fatalf("the probe could not write to the door: %v", err)
			}
			if err := writeUnixLines(row.MessagingSocketPath, foreign.frame(row.SessionID)+"\n"); err != nil {
				s.fatalf("write to the door: %v", err)
			}

			s.waitModel(30*time.Second, "with the descendant's line", func(r *fakemodel.Request) bool {
				return r.Seq > first.Seq && r.MessagesContain(mine.text)
			})
			if tt.foreignShown {
				s.waitModel(30*time.Second, "with the foreign line", func(r *fakemodel.Request) bool {
					return r.Seq > first.Seq && r.MessagesContain(foreign.text)
				})
			}
			s.mustSucceed(60 * time.Second)
			if !tt.foreignShown {
				for _, r := range w.model.Requests() {
					if r.Contains(foreign.text) {
						s.errorf("%s showed the model the foreign line; the facts say it is held", &r)
					}
				}
			}

			rows := readJSONL(t, w.transcriptPath(w.cwd, row.SessionID))
			check := func(l doorLine, wantPid int, wantShown, wantSelf bool) {
				t.Helper()
				o := findOrigin(rows, l.msgID)
				if !wantShown {
					if o != nil {
						t.Errorf("transcript has an origin for the held line %s: %v", l.from, o)
					}
					return
				}
				if o == nil {
					t.Errorf("transcript has no origin with msg_id %s (%s)", l.msgID, l.from)
					return
				}
				if o["kind"] != "peer" || o["from"] != l.from {
					t.Errorf("origin kind, from = %v, %v; want peer, %s", o["kind"], o["from"], l.from)
				}
				if pid, _ := o["verifiedPeerPid"].(float64); int(pid) != wantPid {
					t.Errorf("origin verifiedPeerPid = %v, want the writer's pid %d", o["verifiedPeerPid"], wantPid)
				}
				if ps, ok := o["verifiedPeerProcStart"].(string); !ok || ps == "" {
					t.Errorf("origin verifiedPeerProcStart = %v, want the writer's start ticks", o["verifiedPeerProcStart"])
				}
				if got := o["selfSent"] == true; got != wantSelf {
					t.Errorf("origin selfSent = %v, want %v", o["selfSent"], wantSelf)
				}
			}
			check(mine, p.events()[0].Pid, true, tt.selfSent)
			check(foreign, os.Getpid(), tt.foreignShown, false)
		})
	}
}

// findOrigin returns the first object under a transcript row's "origin"
// key (at any depth) whose msg_id is msgID.
func findOrigin(rows []map[string]any, msgID string) map[string]any {
	var walk func(v any) map[string]any
	walk = func(v any) map[string]any {
		switch v := v.(type) {
		case map[string]any:
			if o, ok := v["origin"].(map[string]any); ok && o["msg_id"] == msgID {
				return o
			}
			for _, x := range v {
				if o := walk(x); o != nil {
					return o
				}
			}
		case []any:
			for _, x := range v {
				if o := walk(x); o != nil {
					return o
				}
			}
		}
		return nil
	}
	for _, r := range rows {
		if o := walk(r); o != nil {
			return o
		}
	}
	return nil
}
