package observatory_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// testNow is the fixed clock of every synthetic station.
var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// settledLater is the rider cache's clock an hour ahead: every file the
// test wrote has settled (ridercache.go).
func settledLater() time.Time { return time.Now().Add(time.Hour) }

// fakeProc is a procfs root in a directory: <root>/<pid>/stat files.
type fakeProc struct{ root string }

func newFakeProc(tb testing.TB) fakeProc {
	tb.Helper()
	return fakeProc{root: filepath.Join(tb.TempDir(), "proc")}
}

// run makes pid a running process that started at start ticks.
func (p fakeProc) run(tb testing.TB, pid int, start string) {
	tb.Helper()
	dir := filepath.Join(p.root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	fields := []string{"S", "1"}
	for range 17 {
		fields = append(fields, "0")
	}
	fields = append(fields, start, "0", "0", "0")
	line := fmt.Sprintf("%d (claude) %s\n", pid, strings.Join(fields, " "))
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// writeFile writes content (0600), creating directories, and sets its
// modification time to mtime when that is not zero.
func writeFile(tb testing.TB, path, content string, mtime time.Time) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			tb.Fatal(err)
		}
	}
}

func jsonLine(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b) + "\n"
}

// riderKind says how a synthetic rider transcript ends.
type riderKind int

const (
	riderWorking riderKind = iota // last message: a tool call
	riderDone                     // last message: a final answer
)

// riderTranscript is a sub-agent transcript that starts at start and ends
// with a tool call (working) or a final answer (done).
func riderTranscript(tb testing.TB, sid, agent string, start time.Time, kind riderKind) string {
	tb.Helper()
	ts := func(d int) string { return start.Add(time.Duration(d) * time.Second).UTC().Format(time.RFC3339Nano) }
	row := func(d int, typ string, msg map[string]any) string {
		return jsonLine(tb, map[string]any{
			"type": typ, "isSidechain": true, "agentId": agent, "sessionId": sid,
			"timestamp": ts(d), "uuid": fmt.Sprintf("%s-%d", agent, d), "message": msg,
		})
	}
	var b strings.Builder
	b.WriteString(row(0, "user", map[string]any{"role": "user", "content": "look into it"}))
	b.WriteString(row(1, "assistant", map[string]any{
		"id": "msg_" + agent + "_1", "role": "assistant", "stop_reason": "tool_use",
		"content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{"command": "ls -la"}}},
	}))
	b.WriteString(row(2, "user", map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}}}))
	switch kind {
	case riderWorking:
		b.WriteString(row(3, "assistant", map[string]any{
			"id": "msg_" + agent + "_2", "role": "assistant", "stop_reason": "tool_use",
			"content": []any{map[string]any{"type": "tool_use", "id": "toolu_2", "name": "Read", "input": map[string]any{"file_path": "/x/y.go"}}},
		}))
	case riderDone:
		b.WriteString(row(3, "assistant", map[string]any{
			"id": "msg_" + agent + "_2", "role": "assistant", "stop_reason": "end_turn",
			"content": []any{map[string]any{"type": "text", "text": "All done."}},
		}))
	}
	return b.String()
}

// addRider writes <sessionDir>/subagents/<sub>/agent-<agent>.jsonl and its
// meta file, last changed at mtime.
func addRider(tb testing.TB, sessionDir, sub, agent string, kind riderKind, mtime time.Time) string {
	tb.Helper()
	sid := filepath.Base(sessionDir)
	dir := filepath.Join(sessionDir, riderwalk.Dir, sub)
	path := filepath.Join(dir, "agent-"+agent+transcriptfile.Ext)
	writeFile(tb, path, riderTranscript(tb, sid, agent, mtime.Add(-time.Minute), kind), mtime)
	writeFile(tb, filepath.Join(dir, "agent-"+agent+".meta.json"), jsonLine(tb, map[string]any{
		"agentType": "general-purpose", "description": "task " + agent, "model": "claude-haiku-5-5", "finished": kind == riderDone,
	}), time.Time{})
	return path
}

// writeHeartbeat writes a doorman heartbeat for sid's inbox in dir.
func writeHeartbeat(tb testing.TB, dir, sid string, hb inboxv1.Heartbeat) {
	tb.Helper()
	writeFile(tb, inboxv1.FilesFor(dir, sid).Heartbeat, jsonLine(tb, hb), time.Time{})
}

// row is a registry row for a fake process.
func row(pid int, sid, name, cwd string, started time.Time) station.Row {
	ms := started.UnixMilli()
	return station.Row{
		PID: pid, SessionID: sid, CWD: cwd, StartedAt: ms, ProcStart: strconv.Itoa(pid * 10),
		Version: "2.1.332", Kind: "interactive", Entrypoint: "sdk-cli", Name: name, NameSource: "derived",
		MessagingSocketPath: "/run/user/1000/cc-socks/" + strconv.Itoa(pid) + ".sock",
		Status:              station.StatusBusy, UpdatedAt: ms, StatusUpdatedAt: ms + 5,
	}
}
