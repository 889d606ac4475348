package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// TestDoormanGate: who is shown, through our doorman. In the default mode a
// line sent through the doorman and the same kind of line written to the
// door by a foreign process (this test) both reach the model; in
// bypassPermissions only the doorman's does, with origin selfSent true, and
// the foreign one is held and never shown. This is why senders go through
// the doorman (the raw-socket variant is TestDoor).
func TestDoormanGate(t *testing.T) {
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
			s := w.start(w.withDoorman(pargs("wait for peers", tt.args...)...), tt.env...)
			first := s.waitModel(30*time.Second, "the first time", nil)
			row := s.waitRow(30 * time.Second)
			sid := row.SessionID
			hb := s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))

			line := "gate doorman " + uuid.NewString()
			rc, r := w.send(sid, line)
			if r.code != 0 || str(rc, "class") != "delivered-steer" {
				s.fatalf("send: want delivered-steer, exit 0\n%s", r)
			}
			foreign := newDoorLine("e2e-foreign")
			if err := writeUnixLines(row.MessagingSocketPath, foreign.frame(sid)+"\n"); err != nil {
				s.fatalf("write to the door: %v", err)
			}
			s.waitModel(30*time.Second, "with the doorman's line", func(q *fakemodel.Request) bool {
				return q.Seq > first.Seq && q.MessagesContain(line)
			})
			if tt.foreignShown {
				s.waitModel(30*time.Second, "with the foreign line", func(q *fakemodel.Request) bool {
					return q.Seq > first.Seq && q.MessagesContain(foreign.text)
				})
			}
			s.mustSucceed(60 * time.Second)
			if !tt.foreignShown {
				for _, q := range w.model.Requests() {
					if q.Contains(foreign.text) {
						s.errorf("%s showed the model the foreign line; the pinned CLI holds it in bypass mode", &q)
					}
				}
			}
			rows := readJSONL(t, w.transcriptPath(w.cwd, sid))
			o := findOrigin(rows, str(rc, "msg_id"))
			if o == nil {
				t.Fatalf("the transcript has no origin with the receipt's msg_id %s", str(rc, "msg_id"))
			}
			if pid, _ := o["verifiedPeerPid"].(float64); int(pid) != hb.PID {
				t.Errorf("origin verifiedPeerPid %v, want the doorman %d", o["verifiedPeerPid"], hb.PID)
			}
			if got := o["selfSent"] == true; got != tt.selfSent {
				t.Errorf("origin selfSent %v, want %v", o["selfSent"], tt.selfSent)
			}
			if o := findOrigin(rows, foreign.msgID); (o != nil) != tt.foreignShown {
				t.Errorf("transcript origin of the foreign line: %v; want one: %v", o, tt.foreignShown)
			}
		})
	}
}

// TestQueueThenDeliver: lines sent with --expect-start to a session id that
// does not run yet are queued-offline (exit 3) and wait in its inbox; once a session with
// that id runs with our doorman, the doorman replays them and every one
// reaches the model, each acked with the msg_id its transcript origin
// carries.
func TestQueueThenDeliver(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 2"), fakemodel.Text("done")}})
	sid := uuid.NewString()
	var lines []string
	for i := range 3 {
		// Distinct lines: the door drops an identical body from the same
		// sender within 30 s.
		line := fmt.Sprintf("queued %d %s", i, uuid.NewString())
		rc, r := w.send(sid, line, "--expect-start")
		if r.code != 3 || str(rc, "class") != "queued-offline" {
			t.Fatalf("send before the session runs: want queued-offline, exit 3\n%s", r)
		}
		lines = append(lines, line)
	}
	s := w.start(w.withDoorman(pargs("work while lines wait", "--allowedTools", "Bash", "--session-id", sid)...))
	for _, line := range lines {
		s.waitModel(30*time.Second, "with "+line, func(q *fakemodel.Request) bool { return q.MessagesContain(line) })
	}
	s.mustSucceed(60 * time.Second)
	acks := w.acks(sid)
	if len(acks) != len(lines) {
		t.Fatalf("%d acks, want %d: %+v", len(acks), len(lines), acks)
	}
	rows := readJSONL(t, w.transcriptPath(w.cwd, sid))
	for _, a := range acks {
		if !strings.HasPrefix(a.Class, "delivered-") {
			t.Errorf("ack class %q, want delivered-*", a.Class)
		}
		if findOrigin(rows, a.MsgID) == nil {
			t.Errorf("the transcript has no origin for the acked msg_id %s", a.MsgID)
		}
	}
	w.checkConfirmed(t, sid)
}

// TestBashDoorman: a doorman started in --mcp mode from the session's own
// Bash tool (its parent is the tool's shell, not claude) writes nothing and
// delivers nothing, although a line waits in the session's inbox; a send
// while it runs finds no doorman (queued-no-doorman, exit 3).
func TestBashDoorman(t *testing.T) {
	t.Parallel()
	sid := uuid.NewString()
	w := newWorld(t, fakemodel.Options{})
	var env strings.Builder
	for k, v := range w.knobs() {
		fmt.Fprintf(&env, "%s=%s ", k, v)
	}
	// sleep keeps the doorman's stdin open for three seconds, so it has
	// time to misbehave; then EOF stops it.
	cmd := fmt.Sprintf("sleep 3 | env %s%s doorman --mcp 2>&1; echo doorman-exit=$?", env.String(), ooClaude(t))
	w.model.Enqueue(fakemodel.Bash(cmd), fakemodel.Text("done"))

	early := "waiting " + uuid.NewString()
	if rc, r := w.send(sid, early, "--expect-start"); str(rc, "class") != "queued-offline" {
		t.Fatalf("send before the session runs: want queued-offline\n%s", r)
	}
	s := w.start(pargs("run the doorman yourself", "--allowedTools", "Bash", "--session-id", sid))
	s.waitModel(30*time.Second, "the first time", nil)
	s.waitRow(30 * time.Second)
	time.Sleep(time.Second) // the tool's doorman runs now
	late := "late " + uuid.NewString()
	rc, r := w.send(sid, late)
	if r.code != 3 || str(rc, "class") != "queued-no-doorman" {
		s.errorf("send while the Bash doorman runs: want queued-no-doorman, exit 3\n%s", r)
	}
	after := s.waitModel(30*time.Second, "with the tool's result", func(q *fakemodel.Request) bool {
		return len(q.ToolResults()) > 0
	})
	s.mustSucceed(60 * time.Second)
	out := after.ToolResults()[0].Content
	t.Logf("the Bash doorman's output: %q", blockText(out))
	if !strings.Contains(blockText(out), "doorman-exit=") {
		t.Errorf("the Bash command did not run the doorman to its end: %q", blockText(out))
	}
	for _, q := range w.model.Requests() {
		for _, l := range []string{early, late} {
			if q.MessagesContain(l) {
				t.Errorf("%s shows %q; the Bash doorman must deliver nothing", &q, l)
			}
		}
	}
	if names := dirEntries(t, w.inboxDir()); len(names) != 1 || names[0] != sid+".inbox" {
		t.Errorf("inbox dir holds %q; want only %s.inbox (the Bash doorman writes nothing)", names, sid)
	}
}

func blockText(bs fakemodel.Blocks) string {
	var sb strings.Builder
	for _, b := range bs {
		sb.WriteString(b.Text)
	}
	return sb.String()
}

// TestDoormanStop: at the session's end the real stop sequence (SIGINT,
// SIGTERM, SIGKILL) leaves a stopped heartbeat, and no line is lost: every
// line appended while the session ends is either acked or still pending
// behind the doorman's offset.
func TestDoormanStop(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 2"), fakemodel.Text("done")}})
	// --debug: Claude Code's debug log keeps the doorman's stderr and the
	// stop sequence, printed if the stopped heartbeat does not come.
	s := w.start(w.withDoorman(pargs("end while lines come", "--allowedTools", "Bash", "--debug")...))
	s.waitModel(30*time.Second, "the first time", nil)
	sid := s.waitRow(30 * time.Second).SessionID
	hb := s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	// From the turn's last request on, a line every 100 ms, as a sender
	// appending to the file would.
	s.waitModel(30*time.Second, "after the tool", func(q *fakemodel.Request) bool { return len(q.ToolResults()) > 0 })
	f, err := os.OpenFile(w.inbox(sid), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type sent struct {
		line string
		off  int64
	}
	var mu sync.Mutex
	var lines []sent
	for i := range 10 {
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		l := fmt.Sprintf("[e2e 📡] closing %d %s", i, uuid.NewString())
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		lines = append(lines, sent{l, fi.Size()})
		mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
	s.mustSucceed(60 * time.Second)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Claude Code's debug log, its doorman's lines:\n%s", w.debugLines(`"claude-inbox"`, 80))
		}
	})
	h := s.waitHeartbeat(sid, 5*time.Second, "state stopped", func(h heartbeat) bool { return h.State == "stopped" })
	if h.PID != hb.PID {
		t.Errorf("stopped heartbeat of pid %d, want the doorman %d", h.PID, hb.PID)
	}
	// No offset file: the doorman handled no line before the session
	// ended (a race the loaded machine sometimes loses), so all wait at 0.
	b, err := os.ReadFile(w.inbox(sid) + ".offset")
	if errors.Is(err, fs.ErrNotExist) {
		b = []byte("0")
	} else if err != nil {
		t.Fatal(err)
	}
	offset, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	acked := map[int64]ack{}
	for _, a := range w.acks(sid) {
		if a.LineOffset != nil {
			acked[*a.LineOffset] = a
		}
	}
	var nAcked, nPending int
	for _, l := range lines {
		_, ok := acked[l.off]
		switch {
		case ok:
			nAcked++
			// An ack means the door took the line from the session's
			// own child; a headless session that is exiting may still
			// not show it (a known gap), so this is logged, not failed.
			seen := false
			for _, q := range w.model.Requests() {
				seen = seen || q.MessagesContain(l.line)
			}
			t.Logf("acked line %d seen by the model: %v", l.off, seen)
		case l.off >= offset:
			nPending++
		default:
			t.Errorf("line at %d (%q) is lost: not acked, and the offset %d is past it", l.off, l.line, offset)
		}
	}
	t.Logf("of %d lines appended at the end: %d acked, %d pending (offset %d, heartbeat %+v)", len(lines), nAcked, nPending, offset, h)
}

// TestDoormanTool: Claude Code, probing with server/discover (2026-07-28),
// connects to the real doorman, offers its tool to the model and calls it;
// a call with an argument the tool's inputSchema forbids comes back an
// error, and the session goes on.
func TestDoormanTool(t *testing.T) {
	t.Parallel()
	const tool = "mcp__claude-inbox__claude_inbox_status"
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Tool(tool, map[string]any{}),
		fakemodel.Tool(tool, map[string]any{"verbose": true}),
		fakemodel.Text("done")}})
	// Tool search would defer MCP tools behind ToolSearch; off, the tool
	// is offered by name.
	s := w.start(w.withDoorman(pargs("report the inbox", "--allowedTools", tool)...), "ENABLE_TOOL_SEARCH=false")
	first := s.waitModel(30*time.Second, "the first time", nil)
	if !slices.Contains(first.ToolNames(), tool) {
		s.fatalf("the model was not offered %s; tools: %q", tool, first.ToolNames())
	}
	s.mustSucceed(60 * time.Second)
	var results []fakemodel.Block
	for _, q := range w.model.Requests() {
		if r := q.ToolResults(); len(r) > len(results) {
			results = r
		}
	}
	if len(results) != 2 {
		t.Fatalf("%d tool results, want 2: %+v", len(results), results)
	}
	text := func(b fakemodel.Block) string {
		var sb strings.Builder
		sb.WriteString(b.Text)
		for _, c := range b.Content {
			sb.WriteString(c.Text)
		}
		return sb.String()
	}
	if got := text(results[0]); results[0].IsError || !strings.Contains(got, `"inbox"`) || !strings.Contains(got, `"state"`) {
		t.Errorf("first call: is_error %v, %q; want the report", results[0].IsError, got)
	}
	if got := text(results[1]); !results[1].IsError {
		t.Errorf("call with a forbidden argument: is_error %v, %q; want an error", results[1].IsError, got)
	} else {
		t.Logf("call with a forbidden argument: %q", got)
	}
}

// TestDoormanSpeaks20260728: the frames Claude Code sends the real doorman, read
// through a tee in front of its stdin: server/discover succeeds, so Claude
// Code speaks 2026-07-28 (no initialize; each request names the revision in
// its _meta), and every request it sends is answered with its own id.
func TestDoormanSpeaks20260728(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Text("done")}})
	in, out := filepath.Join(w.root, "doorman.stdin"), filepath.Join(w.root, "doorman.stdout")
	cfg := map[string]any{"mcpServers": map[string]any{"claude-inbox": map[string]any{
		"type": "stdio", "command": "/bin/sh",
		"args": []string{"-c", `tee -a "$1" | "$2" doorman --mcp | tee -a "$3"`, "sh", in, ooClaude(t), out},
		"env":  w.knobs(),
	}}}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(w.root, "tee.mcp.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s := w.start(pargs("hello", "--mcp-config", p, "--strict-mcp-config", "--debug"))
	s.waitModel(30*time.Second, "the first time", nil)
	s.mustSucceed(60 * time.Second)
	// Claude Code patches a result that lacks what the revision requires
	// and says so in its debug log (issue 21: the caching hints).
	if logs, _ := filepath.Glob(filepath.Join(w.config, "debug", "*.txt")); len(logs) == 0 {
		t.Errorf("no debug log under %s", filepath.Join(w.config, "debug"))
	}
	if l := w.debugLines("omits required fields", 20); l != "" {
		t.Errorf("Claude Code's debug log:\n%s", l)
	}
	type frame struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
		Error *rpcError `json:"error"`
	}
	read := func(path string) []frame {
		b, _ := os.ReadFile(path)
		var fs []frame
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var f frame
			if err := json.Unmarshal([]byte(l), &f); err != nil {
				t.Fatalf("%s: not JSON-RPC: %q", filepath.Base(path), l)
			}
			fs = append(fs, f)
		}
		return fs
	}
	reqs, answers := read(in), read(out)
	var methods []string
	asked := map[string]bool{}
	for _, f := range reqs {
		methods = append(methods, f.Method)
		if len(f.ID) > 0 {
			asked[string(f.ID)] = true
		}
		if f.Method != "server/discover" && len(f.ID) > 0 && string(f.Params.Meta["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` {
			t.Errorf("%s without the 2026-07-28 _meta: %s", f.Method, f.Params.Meta)
		}
	}
	t.Logf("Claude Code sent: %q", methods)
	if len(methods) == 0 || methods[0] != "server/discover" || slices.Contains(methods, "initialize") {
		t.Errorf("methods %q: want server/discover first and no initialize", methods)
	}
	if !slices.Contains(methods, "tools/list") {
		t.Errorf("methods %q lack tools/list", methods)
	}
	for _, a := range answers {
		if !asked[string(a.ID)] {
			t.Errorf("answer to id %s, which was not asked", a.ID)
		}
		delete(asked, string(a.ID))
		if a.Error != nil {
			t.Errorf("answer %s is an error: %+v", a.ID, *a.Error)
		}
	}
	if len(asked) > 0 {
		t.Errorf("requests never answered: %v", asked)
	}
}

// TestDoormanStopTiming: Claude Code's own stop sequence (SIGINT, SIGTERM
// 100 ms later, SIGKILL 400 ms after that) reaches the real doorman and a
// probe beside it at once; the probe stamps the signals, and the doorman's
// stopped heartbeat is on disk before the SIGTERM. The time from SIGINT is
// logged; BenchmarkDoormanSIGINT (cli/oo-claude) measures it, and the CLI's
// TestDoormanSIGINT holds it within the SIGTERM's 100 ms.
func TestDoormanStopTiming(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 2"), fakemodel.Text("done")}})
	probeCfg, p := w.mcpProbe("probe", false)
	s := w.start(pargs("stop with a probe beside", "--allowedTools", "Bash", "--mcp-config", w.doormanConfig(), probeCfg, "--strict-mcp-config"))
	sid := s.waitRow(30 * time.Second).SessionID
	hb := s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))
	s.mustSucceed(60 * time.Second)
	if _, err := p.waitEvent(5*time.Second, func(ev probeEvent) bool { return ev.Ev == "signal" && ev.Signal == "SIGTERM" }); err != nil {
		s.fatalf("the probe never saw SIGTERM: %v\nevents: %s", err, summarize(p.events()))
	}
	var sigint, sigterm int64
	for _, ev := range p.events() {
		switch {
		case ev.Ev == "signal" && ev.Signal == "SIGINT" && sigint == 0:
			sigint = ev.T
		case ev.Ev == "signal" && ev.Signal == "SIGTERM" && sigterm == 0:
			sigterm = ev.T
		}
	}
	h := s.waitHeartbeat(sid, 5*time.Second, "state stopped", func(h heartbeat) bool { return h.State == "stopped" })
	if h.PID != hb.PID {
		t.Errorf("stopped heartbeat of pid %d, want the doorman %d", h.PID, hb.PID)
	}
	at, err := time.Parse(time.RFC3339Nano, h.StoppedAt)
	if err != nil || sigint == 0 {
		t.Fatalf("stopped_at %q (%v), probe's SIGINT at %d", h.StoppedAt, err, sigint)
	}
	// stopped_at has millisecond precision: allow one.
	fromInt := at.Sub(time.Unix(0, sigint))
	t.Logf("stopped heartbeat %v after the probe's SIGINT; SIGTERM %v after it", fromInt, time.Duration(sigterm-sigint))
	if at.After(time.Unix(0, sigterm).Add(time.Millisecond)) {
		t.Errorf("stopped heartbeat at %s, after the SIGTERM (%v after SIGINT)", h.StoppedAt, fromInt)
	}
}

// TestSendFromAnotherInboxDir: a sender whose OO_CLAUDE_INBOX_DIR differs
// from the real session's doorman's (a second shell, an ssh command that
// reads no profile) was answered queued-no-doorman, exit 3, into an inbox
// no doorman follows, and doctor with the same knobs found nothing. The
// real claude's MCP doorman is a child of the registry row's pid holding
// its lock: send refuses inbox-dir-mismatch naming both directories and
// writes nothing there, doctor reports it, and a send with the right
// directory is delivered.
func TestSendFromAnotherInboxDir(t *testing.T) {
	t.Parallel()
	w := newWorld(t, fakemodel.Options{Replies: []fakemodel.Reply{fakemodel.Bash("sleep 6"), fakemodel.Text("done")}})
	s := w.start(w.withDoorman(pargs("wait for steers", "--allowedTools", "Bash")...))
	s.waitModel(30*time.Second, "the first time", nil)
	sid := s.waitRow(30 * time.Second).SessionID
	s.waitHeartbeat(sid, 15*time.Second, "a following doorman", following(sid))

	other := filepath.Join(w.root, "other-inbox")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	rc, r := w.ooJSON([]string{"send", sid, "to the wrong inbox " + uuid.NewString(), "--from", "e2e"}, "OO_CLAUDE_INBOX_DIR="+other)
	if r.code != 1 || str(rc, "class") != "refused" || str(rc, "reason") != "inbox-dir-mismatch" {
		s.fatalf("send with another OO_CLAUDE_INBOX_DIR: want refused inbox-dir-mismatch, exit 1\n%s", r)
	}
	if note := str(rc, "note"); !strings.Contains(note, other) || !strings.Contains(note, w.inboxDir()) {
		t.Errorf("note %q does not name both %s and %s", note, other, w.inboxDir())
	}
	if ents, _ := os.ReadDir(other); len(ents) != 0 {
		t.Errorf("the send wrote into the inbox no doorman follows: %v", ents)
	}
	doc := w.oo([]string{"doctor", "--json"}, "OO_CLAUDE_INBOX_DIR="+other, "OO_CLAUDE_DOCTOR_MCP=0")
	if doc.code != 1 || !strings.Contains(doc.stdout, `"kind":"inbox-dir-mismatch"`) {
		t.Errorf("doctor with the sender's knobs: want an inbox-dir-mismatch finding\n%s", doc)
	}
	rc, r = w.send(sid, "to the right inbox "+uuid.NewString())
	if !strings.HasPrefix(str(rc, "class"), "delivered-") {
		s.fatalf("send with the doorman's directory: want delivered-*\n%s", r)
	}
	s.mustSucceed(60 * time.Second)
}

// debugLines is the last n lines of Claude Code's debug logs (a session
// started with --debug) that contain what, "" when none do.
func (w *world) debugLines(what string, n int) string {
	logs, _ := filepath.Glob(filepath.Join(w.config, "debug", "*.txt"))
	var out []string
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, what) {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out[len(out)-min(len(out), n):], "\n")
}
