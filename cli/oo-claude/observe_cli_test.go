package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/internal/version"
)

// The tests of read, sessions, riders and doctor, through the binary.

const (
	obsOffline = "eeeeeeee-0000-4000-8000-000000000003" // an inbox with a waiting line, no session
	obsMsgID   = "58b50e71-3528-44fb-bc68-56348cb38765"
)

// obsStation is a station with two running sessions: A (this test process)
// with one riding and one finished rider, a fresh doorman and a transcript
// with a steered turn; B (a sleeper), A's child in the lineage ledger; and
// the inbox of a session that does not run, with a stopped doorman and one
// line waiting.
type obsStation struct {
	fs           *fakestation.Station
	sidA, sidB   string
	nameA, nameB string
	transcriptA  string
}

func writeT(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func jsonl(t *testing.T, rows ...map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func newObsStation(t *testing.T) *obsStation {
	t.Helper()
	fs := fakestation.New(t)
	now := time.Now()
	cwdA := filepath.Join(fs.Root, "work")
	a := fs.AddSession(fakestation.Session{Name: "work-a1", CWD: cwdA, HostSessionID: "local_0a0a0a0a-2222", Entrypoint: "claude-desktop"})
	b := fs.AddSession(fakestation.Session{PID: sleeper(t), Name: "helper-b2", Status: "idle"})
	o := &obsStation{fs: fs, sidA: a.SessionID, sidB: b.SessionID, nameA: a.Name, nameB: b.Name}

	// A's transcript: a user turn steered by a peer line (queued_command
	// with origin), then a final answer.
	ts := func(d int) string { return now.Add(time.Duration(d-60) * time.Second).UTC().Format(time.RFC3339Nano) }
	base := func(typ string, d int, extra map[string]any) map[string]any {
		m := map[string]any{"type": typ, "sessionId": o.sidA, "cwd": cwdA, "timestamp": ts(d), "uuid": fmt.Sprintf("u-%d", d), "isSidechain": false}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	origin := map[string]any{"kind": "peer", "from": "mama", "msg_id": obsMsgID, "verifiedPeerPid": 4256, "verifiedPeerProcStart": "18061"}
	o.transcriptA = filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwdA), o.sidA+".jsonl")
	writeT(t, o.transcriptA, jsonl(t,
		base("user", 1, map[string]any{"message": map[string]any{"role": "user", "content": "run the tests"}}),
		base("assistant", 2, map[string]any{"message": map[string]any{"id": "m1", "role": "assistant", "stop_reason": "tool_use",
			"content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Bash", "input": map[string]any{"command": "go test ./..."}}}}}),
		base("user", 3, map[string]any{"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}}}}),
		base("attachment", 4, map[string]any{"attachment": map[string]any{"type": "queued_command", "prompt": "[mama 📡] also check vet", "origin": origin}}),
		base("assistant", 5, map[string]any{"message": map[string]any{"id": "m2", "role": "assistant", "stop_reason": "end_turn",
			"content": []any{map[string]any{"type": "text", "text": "Tests pass; vet is clean."}}}}),
	))
	// A's riders.
	sub := filepath.Join(strings.TrimSuffix(o.transcriptA, ".jsonl"), "subagents")
	rider := func(agent, stop string, last map[string]any) {
		writeT(t, filepath.Join(sub, "agent-"+agent+".jsonl"), jsonl(t,
			map[string]any{"type": "user", "isSidechain": true, "agentId": agent, "timestamp": ts(10), "message": map[string]any{"role": "user", "content": "go"}},
			map[string]any{"type": "assistant", "isSidechain": true, "agentId": agent, "timestamp": ts(11),
				"message": map[string]any{"id": "m-" + agent, "role": "assistant", "stop_reason": stop, "content": []any{last}}},
		))
		writeT(t, filepath.Join(sub, "agent-"+agent+".meta.json"), `{"agentType":"general-purpose","description":"task `+agent+`","model":"claude-haiku-5-5"}`)
	}
	rider("ride1", "tool_use", map[string]any{"type": "tool_use", "id": "x", "name": "Read", "input": map[string]any{"file_path": "/a/b.go"}})
	rider("done2", "end_turn", map[string]any{"type": "text", "text": "finished"})

	// A's inbox: one line delivered, a fresh doorman (this process).
	fa := inboxv1.FilesFor(fs.Paths.InboxDir, o.sidA)
	writeT(t, fa.Inbox, "[mama 📡] also check vet\n")
	writeT(t, fa.Offset, "27\n")
	hb := func(pid int, sid string, state inboxv1.State, seen time.Time) string {
		b, _ := json.Marshal(inboxv1.Heartbeat{PID: pid, SessionID: sid, Since: jsonrow.FormatTime(seen.Add(-time.Hour)),
			LastSeen: jsonrow.FormatTime(seen), Delivered: 1, State: state, Mode: "mcp", Version: "0.2.0-dev"})
		return string(b)
	}
	writeT(t, fa.Heartbeat, hb(os.Getpid(), o.sidA, inboxv1.StateFollowing, now))
	// The offline inbox.
	fo := inboxv1.FilesFor(fs.Paths.InboxDir, obsOffline)
	writeT(t, fo.Inbox, "[luna 📡] are you there?\n")
	writeT(t, fo.Heartbeat, hb(999999, obsOffline, inboxv1.StateStopped, now.Add(-time.Hour)))
	// Lineage: B is A's child (registered by A's host id only).
	writeT(t, fs.Paths.LineageFile(), jsonl(t, map[string]any{"ts": "2026-11-30T11:00:00.000Z", "child_host": nil, "child_session": o.sidB,
		"parent_host": "local_0a0a0a0a-2222", "parent_session": nil, "title": "helper", "by": "parent"}))
	return o
}

// v01SessionsFields is v0.1's list of the oo-claude/sessions/v0 fields,
// transcribed from the design's schema block (the reference reader's
// fields and the "+" additions), as key paths ("x[]" is an element of x).
var v01SessionsFields = strings.Fields(`
schema generated_at station sessions
sessions[].session sessions[].name sessions[].pid sessions[].status sessions[].cwd sessions[].version sessions[].started_ms
sessions[].riders
sessions[].riders[].agent sessions[].riders[].started sessions[].riders[].last_activity_s sessions[].riders[].rows
sessions[].riders[].state sessions[].riders[].last_step sessions[].riders[].last_text
sessions[].riders[].description sessions[].riders[].agent_type sessions[].riders[].model sessions[].riders[].state_reason
sessions[].riders[].path sessions[].riders[].bytes
sessions[].inbox
sessions[].inbox.path sessions[].inbox.exists sessions[].inbox.lines sessions[].inbox.acks sessions[].inbox.pending
sessions[].inbox.doorman
sessions[].inbox.doorman.pid sessions[].inbox.doorman.last_seen_s sessions[].inbox.doorman.fresh sessions[].inbox.doorman.delivered
sessions[].inbox.doorman.state sessions[].inbox.doorman.pid_alive sessions[].inbox.doorman.since sessions[].inbox.doorman.last_seen
sessions[].inbox.doorman.mode sessions[].inbox.doorman.version sessions[].inbox.doorman.not_fresh_because
sessions[].inbox.last_line
sessions[].inbox.offset sessions[].inbox.pending_bytes sessions[].inbox.pending_source
sessions[].host_session sessions[].parent_host sessions[].parent_session sessions[].children sessions[].since sessions[].kind
sessions[].entrypoint sessions[].riders_riding sessions[].riders_total sessions[].status_updated_ms
generator riding_window_s include_finished offline_inboxes
offline_inboxes[].session offline_inboxes[].pending offline_inboxes[].lines offline_inboxes[].last_line offline_inboxes[].doorman
offline_inboxes[].path
`)

// keyPaths lists every object key path of a JSON value.
func keyPaths(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out[p] = true
			keyPaths(e, p, out)
		}
	case []any:
		for _, e := range x {
			keyPaths(e, prefix+"[]", out)
		}
	}
}

// missingV01Fields returns v0.1's fields that the document lacks.
func missingV01Fields(t *testing.T, raw string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, raw)
	}
	got := map[string]bool{}
	keyPaths(v, "", got)
	var missing []string
	for _, f := range v01SessionsFields {
		if !got[f] {
			missing = append(missing, f)
		}
	}
	sort.Strings(missing)
	return missing
}

func TestSessionsJSONHasEveryV01Field(t *testing.T) {
	t.Parallel()
	o := newObsStation(t)
	out := filepath.Join(o.fs.Root, "out", "sessions.json")
	r := runBinary(t, o.fs.Env(), "", "sessions", "--json", "--all", "--write", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if diff := cmp.Diff([]string(nil), missingV01Fields(t, r.stdout)); diff != "" {
		t.Errorf("sessions --json lacks v0.1 fields (-want +got):\n%s", diff)
	}
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), missingV01Fields(t, string(written))); diff != "" {
		t.Errorf("--write's file lacks v0.1 fields (-want +got):\n%s", diff)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("--write file mode %v, want 0600", fi.Mode().Perm())
	}
	// The values the station implies.
	var doc struct {
		Schema    string `json:"schema"`
		Generator string `json:"generator"`
		Sessions  []struct {
			Session       string   `json:"session"`
			ParentSession *string  `json:"parent_session"`
			Children      []string `json:"children"`
			RidersRiding  int      `json:"riders_riding"`
			RidersTotal   int      `json:"riders_total"`
			Inbox         struct {
				Pending       int    `json:"pending"`
				PendingSource string `json:"pending_source"`
				Doorman       *struct {
					Fresh bool `json:"fresh"`
				} `json:"doorman"`
			} `json:"inbox"`
		} `json:"sessions"`
		Offline []struct {
			Session string `json:"session"`
			Pending int    `json:"pending"`
		} `json:"offline_inboxes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Sessions) != 2 || len(doc.Offline) != 1 {
		t.Fatalf("%d sessions, %d offline inboxes; want 2 and 1:\n%s", len(doc.Sessions), len(doc.Offline), r.stdout)
	}
	a, b := doc.Sessions[0], doc.Sessions[1]
	got := []any{doc.Schema, doc.Generator, a.Session, a.Children, a.RidersRiding, a.RidersTotal, a.Inbox.Pending, a.Inbox.PendingSource,
		a.Inbox.Doorman != nil && a.Inbox.Doorman.Fresh, b.Session, b.ParentSession != nil && *b.ParentSession == o.sidA,
		doc.Offline[0].Session, doc.Offline[0].Pending}
	want := []any{"oo-claude/sessions/v0", "oo-claude " + version.Version, o.sidA, []string{o.sidB}, 1, 2, 0, "offset", true, o.sidB, true, obsOffline, 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
}

func TestSessionsAndRidersCLI(t *testing.T) {
	t.Parallel()
	o := newObsStation(t)
	tests := []struct {
		name       string
		args       []string
		code       int
		inStdout   []string
		notInOut   []string
		inStderr   string
		jsonOutput bool
	}{
		{name: "sessions tree: the child indented under its parent", args: []string{"sessions"},
			inStdout: []string{
				"\n" + o.sidA + "  ", "\n  " + o.sidB + "  ", "following", "1/2",
				"Inboxes of sessions not running", obsOffline, "[luna 📡] are you there?",
			}},
		{name: "sessions takes no argument", args: []string{"sessions", "x"}, code: 2, inStderr: "takes no arguments"},
		{name: "riders: the riding one only", args: []string{"riders"},
			inStdout: []string{o.sidA, "ride1", "riding", "task ride1", "Read: /a/b.go"}, notInOut: []string{"done2", o.sidB}},
		{name: "riders --all adds the finished", args: []string{"riders", "--all"},
			inStdout: []string{"ride1", "done2", "quiet/finished (final-text)", "done2: finished"}},
		{name: "riders of a session by name", args: []string{"riders", o.nameB},
			inStdout: []string{o.sidB, "riders 0/0", "no riders riding"}},
		{name: "riders of a session not running, by full id", args: []string{"riders", obsOffline},
			inStdout: []string{obsOffline + " - (offline)", "no riders riding"}},
		{name: "riders flags after the session", args: []string{"riders", o.sidA, "--all", "--json"}, jsonOutput: true,
			inStdout: []string{`"session":"` + o.sidA + `"`, `"agent":"done2"`, `"include_finished":true`}, notInOut: []string{`"session":"` + o.sidB}},
		{name: "riders of an unknown name", args: []string{"riders", "nosuchname"}, code: 1, inStderr: "unknown target"},
		{name: "riders takes one session", args: []string{"riders", "a", "b"}, code: 2, inStderr: "at most one session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBinary(t, o.fs.Env(), "", tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			for _, s := range tt.inStdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			for _, s := range tt.notInOut {
				if strings.Contains(r.stdout, s) {
					t.Errorf("stdout holds %q:\n%s", s, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, tt.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.inStderr, r.stderr)
			}
			if tt.jsonOutput && !json.Valid([]byte(r.stdout)) {
				t.Errorf("not JSON: %s", r.stdout)
			}
		})
	}
}

func TestReadCLI(t *testing.T) {
	t.Parallel()
	o := newObsStation(t)
	// A session that does not run, with a transcript somewhere under projects.
	const gone = "eeeeeeee-0000-4000-8000-000000000009"
	writeT(t, filepath.Join(o.fs.Paths.ProjectsDir, "-elsewhere", gone+".jsonl"), jsonl(t,
		map[string]any{"type": "user", "sessionId": gone, "timestamp": "2026-11-30T10:00:00Z", "uuid": "g1", "message": map[string]any{"role": "user", "content": "hello there"}},
		map[string]any{"type": "assistant", "sessionId": gone, "timestamp": "2026-11-30T10:00:01Z", "uuid": "g2",
			"message": map[string]any{"id": "g", "role": "assistant", "stop_reason": "end_turn", "content": []any{map[string]any{"type": "text", "text": "general kenobi"}}}},
	))
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout []string
		inStderr string
	}{
		{name: "by name: the steered line marked with from and msg_id", args: []string{"read", o.nameA},
			inStdout: []string{"session " + o.sidA + " " + o.nameA + " (running", "> run the tests", "tool Bash: go test ./...",
				"peer mama msg_id=" + obsMsgID, "| [mama 📡] also check vet", "Tests pass; vet is clean.", "[end_turn]"}},
		{name: "json", args: []string{"read", o.sidA, "--json", "--turns", "1"},
			inStdout: []string{`"msg_id":"` + obsMsgID + `"`, `"from":"mama"`, `"running":true`, `"turns":1`}},
		{name: "offline by full id", args: []string{"read", gone}, inStdout: []string{"(offline)", "> hello there", "general kenobi"}},
		{name: "no transcript", args: []string{"read", o.sidB}, code: 1, inStderr: "no transcript for session " + o.sidB},
		{name: "unknown target", args: []string{"read", "nosuchname"}, code: 1, inStderr: "unknown target"},
		{name: "no target", args: []string{"read"}, code: 2, inStderr: "read takes one session"},
		{name: "turns must be positive", args: []string{"read", o.sidA, "--turns", "0"}, code: 2, inStderr: "--turns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBinary(t, o.fs.Env(), "", tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			for _, s := range tt.inStdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, tt.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.inStderr, r.stderr)
			}
		})
	}
}

func TestDoctorCLI(t *testing.T) {
	t.Parallel()
	fs := fakestation.New(t)
	// A fake claude: a shell script that answers --version and mcp get,
	// naming as the doorman's command whatever FAKE_DOORMAN_CMD says.
	claude := filepath.Join(fs.Root, "claude-bin")
	writeT(t, claude, "#!/bin/sh\ncase \"$1\" in\n--version) echo '2.1.332 (Claude Code)';;\n"+
		"mcp) [ -n \"$FAKE_DOORMAN_CMD\" ] || { echo 'No MCP server named \"claude-inbox\".'; exit 1; }\n"+
		"printf 'claude-inbox:\\n  Scope: User config\\n  Status: ✔ Connected\\n  Type: stdio\\n  Command: %s\\n  Args: doorman --mcp\\n' \"$FAKE_DOORMAN_CMD\";;\nesac\n")
	os.Chmod(claude, 0o700)
	base := append(fs.Env(), "OO_CLAUDE_BIN="+claude)
	tests := []struct {
		name     string
		env      []string
		args     []string
		code     int
		inStdout []string
	}{
		{"ready", []string{"FAKE_DOORMAN_CMD=" + binary(t)}, []string{"doctor"}, 0,
			[]string{"ok       binary", "2.1.332 (Claude Code)", "ok       mcp", "skipped  doorman", "no findings"}},
		{"mcp check skipped", []string{"OO_CLAUDE_DOCTOR_MCP=0"}, []string{"doctor"}, 0, []string{"skipped  mcp", "OO_CLAUDE_DOCTOR_MCP=0"}},
		{"not registered", nil, []string{"doctor"}, 1, []string{"[mcp-not-registered]", "mcp add --scope user claude-inbox -- " + binary(t) + " doorman --mcp"}},
		{"another binary registered, json", []string{"FAKE_DOORMAN_CMD=/usr/local/bin/oo-claude"}, []string{"doctor", "--json"}, 1,
			[]string{`"kind":"mcp-other-command"`, `"fix":`}},
		{"claude missing", []string{"OO_CLAUDE_BIN=" + filepath.Join(fs.Root, "none")}, []string{"doctor", "--json"}, 1,
			[]string{`"kind":"claude-missing"`, `"name":"mcp","status":"skipped"`}},
		{"inside a session without a doorman", []string{"FAKE_DOORMAN_CMD=" + binary(t), "CLAUDE_CODE_SESSION_ID=eeeeeeee-0000-4000-8000-0000000000aa"},
			[]string{"doctor"}, 1, []string{"[doorman-not-fresh]", "eeeeeeee-0000-4000-8000-0000000000aa"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runBinary(t, append(append([]string{}, base...), tt.env...), "", tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, s := range tt.inStdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
		})
	}
	if r := runBinary(t, base, "", "doctor", "extra"); r.code != 2 {
		t.Errorf("doctor extra: exit %d, want 2", r.code)
	}
}
