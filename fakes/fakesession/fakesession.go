// Package fakesession is a scripted Claude Code session, for tests of
// programs that ask sessions and watch them (a dispatcher's ask-and-answer,
// an observatory) without Claude Code.
//
// A [Session] is a live registry row on a fake station (fakestation, with a
// process of its own), a door that takes lines by the real receiver's rules
// and writes its enqueue rows (fakedoor), a doorman that carries the inbox's
// lines through that door and acks them (fakedoorman), and a scripted model
// that reacts to each line the door takes by writing the rest of the
// transcript as Claude Code 2.1.332 does:
//
//   - an idle session starts a turn with the line: a dequeue row, the user
//     row with isMeta, turnOrigin "peer" and the peer origin (with the
//     frame's msg_id), then the turn;
//   - a busy session (Options.Busy) absorbs it into its running turn: the
//     queued_command attachment with the origin, the queue-operation remove
//     with absorbed_mid_turn, then the rest of the turn;
//   - the turn: for each scripted tool an assistant tool_use row and its
//     tool_result row, a sub-agent (rider) under <session>/subagents/ with
//     its meta file and sidechain rows, then the final answer (an assistant
//     row with stop_reason end_turn).
//
// The registry status follows (busy during an idle session's turn, then
// idle again). The rows' keys are held to the recorded real transcripts in
// transcript/testdata/real by this package's tests.
//
// A line sent with priority later into a busy session is not absorbed: it
// runs as a turn of its own (the user row), as the real CLI runs it after
// the running turn.
//
// Not modelled: the model itself (answers come from [Options.Answer]), the
// api-request and attachment rows Claude Code writes around a request, a
// now line's effect on the running tool, and a line that arrives while an
// idle session's turn runs is answered by its own turn right after.
package fakesession

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes"
	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/fakedoorman"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// Model is the model name the rows carry.
const Model = "claude-haiku-5-5"

// Version is the Claude Code version the rows carry.
const Version = "2.1.332"

// Turn is what the scripted model does with one line.
type Turn struct {
	// Tools are the tools it calls before it answers, in order (Bash,
	// Read, ...); each gets a tool_use row and a tool_result row.
	Tools []string
	// Rider, when set, runs a sub-agent during the turn.
	Rider *Rider
	// Text is the final answer.
	Text string
	// Delay holds the turn back before its first row after the line's.
	Delay time.Duration
}

// Rider is a sub-agent run.
type Rider struct {
	Description string // the Agent call's description (the meta file's)
	Text        string // its final answer
	// Delay is how long it rides (between its first and last row).
	Delay time.Duration
}

// Options configure a [Session]. The zero value is an idle session named
// "proj-<2 hex>" in <station root>/proj (a directory that exists, so
// headless.Runner.Resume takes the session's recorded cwd) on a new station
// that answers "ok".
type Options struct {
	// Station is the fake station; nil makes a new one.
	Station *fakestation.Station
	// Name is the registry name; "" derives one from the cwd.
	Name string
	// CWD is the session's project directory; "" means <station root>/proj,
	// made (0700) when absent. A CWD given is used as it is, existing or not.
	CWD string
	// Busy makes it a session in a long running turn: each line is
	// absorbed into that turn (delivered-steer) and the session stays busy.
	// Otherwise it is idle and each line starts a turn (delivered-start).
	Busy bool
	// Answer scripts the model: the turn for a line (the text the door
	// took). nil answers every line with Turn{Text: "ok"}.
	Answer func(line string) Turn
}

// Session is a running fake session. Make one with [Start]: a Session
// not made by it (the zero value) runs nothing (Stop does nothing,
// Handled is 0, Err nil).
type Session struct {
	Station *fakestation.Station
	Row     station.Row
	Door    *fakedoor.Door
	Doorman *fakedoorman.Doorman
	// Transcript is the session's transcript path.
	Transcript string

	opts   Options
	tb     fakes.TB
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex
	last    string // uuid of the last main-chain row
	turns   int
	handled int
	err     error
}

// Start runs a fake session and stops it when the test ends.
func Start(tb fakes.TB, o Options) *Session {
	tb.Helper()
	if o.Station == nil {
		o.Station = fakestation.New(tb)
	}
	if o.CWD == "" {
		o.CWD = filepath.Join(o.Station.Root, "proj")
		if err := os.MkdirAll(o.CWD, 0o700); err != nil {
			tb.Fatalf("fakesession: %v", err)
		}
	}
	if o.Answer == nil {
		o.Answer = func(string) Turn { return Turn{Text: "ok"} }
	}
	status := station.StatusIdle
	if o.Busy {
		status = station.StatusBusy
	}
	sid := uuid.NewString()
	tp := filepath.Join(o.Station.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(o.CWD), sid+transcriptfile.Ext)
	if err := os.MkdirAll(filepath.Dir(tp), 0o700); err != nil {
		tb.Fatalf("fakesession: %v", err)
	}
	d := fakedoor.New(tb, fakedoor.Options{SessionID: sid, Transcript: tp})
	row := o.Station.AddSession(fakestation.Session{SessionID: sid, CWD: o.CWD, Name: o.Name, Status: status, Socket: d.Path()})
	s := &Session{Station: o.Station, Row: row, Door: d, Transcript: tp, opts: o, tb: tb, done: make(chan struct{})}
	s.Doorman = fakedoorman.Start(tb, o.Station.Paths.InboxDir, sid, fakedoorman.Options{PeerStatus: status, Door: d.Path(), Transcript: tp})
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go s.loop(ctx)
	tb.Cleanup(s.Stop)
	return s
}

// SessionID is the session's id.
func (s *Session) SessionID() string {
	return s.Row.SessionID
}

// Handled is how many lines the session has answered so far.
func (s *Session) Handled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handled
}

// Err is the first error the session met writing its files, if any.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Stop ends the session as a clean exit does: the script stops, the doorman
// writes its stopped heartbeat, the registry row goes and the session's
// process with it. It is safe to call more than once.
func (s *Session) Stop() {
	if s.cancel == nil {
		return
	}
	s.once.Do(func() {
		s.cancel()
		<-s.done
		s.Doorman.Stop()
		s.Station.RemoveSession(s.Row.PID)
	})
}

func (s *Session) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// loop answers each line the door queues, in order.
func (s *Session) loop(ctx context.Context) {
	defer close(s.done)
	n := 0
	for {
		frames, err := s.Door.WaitFrames(ctx, n+1)
		if err != nil {
			return
		}
		for _, f := range frames[n:] {
			if f.Disposition == fakedoor.Queued && f.Type == "user" {
				if err := s.answer(ctx, f); err != nil {
					if ctx.Err() == nil {
						s.fail(err)
					}
					return
				}
			}
		}
		n = len(frames)
	}
}

func (s *Session) now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// answer writes the rows of one line and its turn.
func (s *Session) answer(ctx context.Context, f fakedoor.Frame) error {
	s.waitAck(ctx, f.MsgID)
	origin := map[string]any{"kind": "peer", "from": f.From, "verifiedPeerPid": f.PeerPID, "verifiedPeerProcStart": procStart(f.PeerPID), "msg_id": f.MsgID}
	if f.MsgID == "" {
		delete(origin, "msg_id")
	}
	if s.opts.Busy && f.Priority != "later" {
		cmd, delivery := uuid.NewString(), uuid.NewString()
		ts := s.now()
		if err := s.main(map[string]any{
			"type": "attachment",
			"attachment": map[string]any{
				"type": "queued_command", "prompt": f.Content, "source_uuid": cmd, "delivery_id": delivery,
				"commandMode": "prompt", "origin": origin, "timestamp": ts, "isMeta": true,
			},
			"rendered":     []any{map[string]any{"content": "<system-reminder>\nAnother Claude session sent a message while you were working:\n" + f.Content + "\n</system-reminder>"}},
			"renderedRole": "system",
		}); err != nil {
			return err
		}
		if err := s.append(map[string]any{
			"type": "queue-operation", "operation": "remove", "timestamp": s.now(), "sessionId": s.Row.SessionID,
			"content": f.Content, "reason": "absorbed_mid_turn", "commandUuid": cmd, "deliveryId": delivery,
		}); err != nil {
			return err
		}
	} else {
		if !s.opts.Busy {
			s.Station.SetStatus(s.Row.PID, station.StatusBusy)
		}
		if err := s.append(map[string]any{"type": "queue-operation", "operation": "dequeue", "timestamp": s.now(), "sessionId": s.Row.SessionID}); err != nil {
			return err
		}
		s.mu.Lock()
		s.turns++
		turn := s.turns
		s.mu.Unlock()
		if err := s.main(map[string]any{
			"type": "user", "promptId": uuid.NewString(),
			"message":        map[string]any{"role": "user", "content": "Another Claude session sent a message:\n" + f.Content},
			"isMeta":         true,
			"permissionMode": "default", "origin": origin, "promptSource": "system", "queueSkipSlashCommands": true,
			"sentAtMs": f.Time.UnixMilli(), "turnOrigin": "peer", "turnPosition": map[string]any{"promptIndex": 0, "turnIndex": turn},
			"queueSkipAttachments": true,
		}); err != nil {
			return err
		}
	}
	t := s.opts.Answer(f.Content)
	if t.Delay > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(t.Delay):
		}
	}
	tools := t.Tools
	if t.Rider != nil {
		tools = append(tools, "Agent")
	}
	for i, name := range tools {
		id := fmt.Sprintf("toolu_fake_%s_%d", f.MsgID[:min(8, len(f.MsgID))], i)
		input := map[string]any{}
		if name == "Agent" && t.Rider != nil {
			input = map[string]any{"description": t.Rider.Description, "prompt": t.Rider.Description, "subagent_type": "general-purpose"}
		}
		row := assistantRow(map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}, "tool_use")
		row["toolInputStreamMs"] = 2
		if err := s.main(row); err != nil {
			return err
		}
		if name == "Agent" && t.Rider != nil {
			if err := s.rider(ctx, id, *t.Rider); err != nil {
				return err
			}
		}
		if err := s.main(map[string]any{
			"type": "user", "promptId": uuid.NewString(),
			"message":                 map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": id, "type": "tool_result", "content": "(" + name + " completed with no output)", "is_error": false}}},
			"toolUseResult":           map[string]any{"stdout": "", "stderr": "", "interrupted": false},
			"sandboxed":               false,
			"sourceToolAssistantUUID": s.lastUUID(),
			"permissionDecision":      "allow",
		}); err != nil {
			return err
		}
	}
	if err := s.main(assistantRow(map[string]any{"type": "text", "text": t.Text}, "end_turn")); err != nil {
		return err
	}
	if !s.opts.Busy {
		s.Station.SetStatus(s.Row.PID, station.StatusIdle)
	}
	s.mu.Lock()
	s.handled++
	s.mu.Unlock()
	return nil
}

// waitAck waits (up to 2 s) until the doorman has acked the frame's line:
// the real receiver shows a line to the model tens of milliseconds after
// its enqueue row, by which time the doorman has acked it. It looks at the
// ack file again at each ack the doorman writes.
func (s *Session) waitAck(ctx context.Context, msgID string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for {
		n := s.Doorman.Acked()
		found := false
		if f, err := fsx.OpenRead(s.Doorman.Files.Ack); err == nil {
			inbox.ScanAcks(f, 0, func(a inboxv1.Ack, _ int64) bool {
				found = a.MsgID == msgID
				return !found
			})
			f.Close()
		}
		if found || s.Doorman.WaitAcked(ctx, n+1) != nil {
			return
		}
	}
}

// rider writes a sub-agent's meta file and transcript.
func (s *Session) rider(ctx context.Context, toolUseID string, r Rider) error {
	agent := fmt.Sprintf("a%016x", uuid.New().ID())
	dir := filepath.Join(filepath.Dir(s.Transcript), s.Row.SessionID, riderwalk.Dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	base := filepath.Join(dir, "agent-"+agent)
	meta := func(finished bool) error {
		b, _ := json.Marshal(map[string]any{
			"agentType": "general-purpose", "isBuiltIn": true, "description": r.Description, "toolUseId": toolUseID,
			"spawnDepth": 1, "requestShape": "foreground", "requestNonInteractive": true, "model": Model, "finished": finished,
		})
		return fsx.WriteFileAtomic(base+".meta.json", b)
	}
	if err := meta(false); err != nil {
		return err
	}
	side := func(row map[string]any) error {
		s.stamp(row)
		row["isSidechain"], row["agentId"] = true, agent
		return s.write(base+transcriptfile.Ext, row)
	}
	if err := side(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": r.Description}}); err != nil {
		return err
	}
	if r.Delay > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.Delay):
		}
	}
	if err := side(assistantRow(map[string]any{"type": "text", "text": r.Text}, "end_turn")); err != nil {
		return err
	}
	return meta(true)
}

func assistantRow(block map[string]any, stop string) map[string]any {
	id := "msg_fake_" + uuid.NewString()[:8]
	return map[string]any{
		"type": "assistant",
		"message": map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": Model, "content": []any{block},
			"stop_reason": stop, "stop_sequence": nil,
			"usage":        map[string]any{"input_tokens": 10, "output_tokens": 5},
			"stop_details": nil,
		},
		"apiBlockIndex": 0, "requestRef": uuid.NewString(), "requestedModel": Model, "promptCacheRequested": "5m",
		"effort": "medium", "perTurnEffort": "medium", "madeBy": "model",
	}
}

// stamp adds the keys every conversation row carries.
func (s *Session) stamp(row map[string]any) {
	row["uuid"] = uuid.NewString()
	row["timestamp"] = s.now()
	row["userType"] = "external"
	row["entrypoint"] = "sdk-cli"
	row["cwd"] = s.opts.CWD
	row["sessionId"] = s.Row.SessionID
	row["version"] = Version
	row["gitBranch"] = "HEAD"
	if _, ok := row["isSidechain"]; !ok {
		row["isSidechain"] = false
	}
}

// main appends a main-chain conversation row, chained to the last one.
func (s *Session) main(row map[string]any) error {
	s.stamp(row)
	s.mu.Lock()
	if s.last == "" {
		row["parentUuid"] = nil
	} else {
		row["parentUuid"] = s.last
	}
	s.last = row["uuid"].(string)
	s.mu.Unlock()
	return s.write(s.Transcript, row)
}

func (s *Session) lastUUID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// append appends a bookkeeping row (queue-operation) as it is.
func (s *Session) append(row map[string]any) error { return s.write(s.Transcript, row) }

func (s *Session) write(path string, row map[string]any) error {
	b, err := json.Marshal(row)
	if err != nil {
		return err
	}
	_, err = fsx.AppendLine(path, b)
	return err
}

// procStart is the start time of pid as /proc says, "" when unknown.
func procStart(pid int) string {
	info, err := (station.Proc{}).Info(pid)
	if err != nil {
		return ""
	}
	return info.StartTicks
}
