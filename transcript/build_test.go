package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// builder writes realistic Claude Code 2.1.332 transcript rows (the shapes
// recorded in testdata/real) with deterministic ids and timestamps.
type builder struct {
	sid, cwd string
	t        time.Time
	n        int
	parent   any // the previous row's uuid, or nil
	lines    []string
}

func newBuilder(sid, cwd string) *builder {
	return &builder{sid: sid, cwd: cwd, t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
}

func (b *builder) id() string {
	b.n++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", b.n)
}

func (b *builder) ts() string {
	b.t = b.t.Add(1500 * time.Millisecond)
	return b.t.Format("2006-01-02T15:04:05.000Z")
}

func (b *builder) add(row map[string]any) *builder {
	line, err := json.Marshal(row)
	if err != nil {
		panic(err)
	}
	b.lines = append(b.lines, string(line))
	return b
}

// common adds the fields every conversation row carries.
func (b *builder) common(typ string, row map[string]any) map[string]any {
	u := b.id()
	row["type"] = typ
	row["uuid"] = u
	row["parentUuid"] = b.parent
	row["timestamp"] = b.ts()
	row["sessionId"] = b.sid
	row["cwd"] = b.cwd
	row["entrypoint"] = "sdk-cli"
	row["userType"] = "external"
	row["version"] = "2.1.332"
	if _, ok := row["isSidechain"]; !ok {
		row["isSidechain"] = false
	}
	b.parent = u
	return row
}

func (b *builder) prompt(text string) *builder {
	return b.add(b.common("user", map[string]any{
		"message":    map[string]any{"role": "user", "content": text},
		"turnOrigin": "sdk", "promptSource": "sdk", "permissionMode": "default",
	}))
}

func (b *builder) promptBlocks(texts ...string) *builder {
	var blocks []any
	for _, t := range texts {
		blocks = append(blocks, map[string]any{"type": "text", "text": t})
	}
	return b.add(b.common("user", map[string]any{
		"message": map[string]any{"role": "user", "content": blocks}, "turnOrigin": "sdk",
	}))
}

func peerOrigin(from, msgID string, pid int, selfSent bool) map[string]any {
	o := map[string]any{"kind": "peer", "from": from, "verifiedPeerPid": pid, "verifiedPeerProcStart": "18061", "msg_id": msgID}
	if selfSent {
		o["selfSent"] = true
	}
	return o
}

// peerPrompt is a peer line that started a turn of its own.
func (b *builder) peerPrompt(text string, origin map[string]any) *builder {
	content := "Another Claude session sent a message:\n" + text +
		"\n\nThis came from another Claude session — not typed by your user, but very likely working on their behalf."
	return b.add(b.common("user", map[string]any{
		"message": map[string]any{"role": "user", "content": content},
		"isMeta":  true, "origin": origin, "turnOrigin": "peer", "promptSource": "system",
	}))
}

func (b *builder) meta(text string) *builder {
	return b.add(b.common("user", map[string]any{
		"message": map[string]any{"role": "user", "content": text}, "isMeta": true,
	}))
}

func (b *builder) taskNotification(text string) *builder {
	return b.add(b.common("user", map[string]any{
		"message":    map[string]any{"role": "user", "content": text},
		"origin":     map[string]any{"kind": "task-notification", "producer": "session-task"},
		"turnOrigin": "task_notification", "promptSource": "system",
	}))
}

func textBlock(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func toolUse(id, name string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}
}

// assistant writes one assistant row (Claude Code writes one per content
// block, all with the message's id).
func (b *builder) assistant(msgID, stop string, blocks ...map[string]any) *builder {
	var sr any
	if stop != "" {
		sr = stop
	}
	content := make([]any, len(blocks))
	for i, bl := range blocks {
		content[i] = bl
	}
	return b.add(b.common("assistant", map[string]any{
		"message": map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
			"content": content, "stop_reason": sr, "stop_sequence": nil},
	}))
}

func (b *builder) toolResult(toolID, out string) *builder {
	return b.add(b.common("user", map[string]any{
		"message": map[string]any{"role": "user", "content": []any{
			map[string]any{"tool_use_id": toolID, "type": "tool_result", "content": out, "is_error": false}}},
	}))
}

func (b *builder) queueOp(op, content, reason string) *builder {
	row := map[string]any{"type": "queue-operation", "operation": op, "timestamp": b.ts(), "sessionId": b.sid}
	if content != "" {
		row["content"] = content
	}
	if reason != "" {
		row["reason"] = reason
	}
	return b.add(row)
}

// queuedCommand is a line absorbed into the running turn.
func (b *builder) queuedCommand(text string, origin map[string]any) *builder {
	att := map[string]any{"type": "queued_command", "prompt": text, "commandMode": "prompt", "isMeta": true}
	if origin != nil {
		att["origin"] = origin
	}
	return b.add(b.common("attachment", map[string]any{"attachment": att}))
}

func (b *builder) attachmentOf(typ string) *builder {
	return b.add(b.common("attachment", map[string]any{"attachment": map[string]any{"type": typ, "text": "reminder"}}))
}

func (b *builder) sidechain(text string) *builder {
	row := b.common("user", map[string]any{
		"message": map[string]any{"role": "user", "content": text}, "isSidechain": true, "agentId": "a1b2c3",
	})
	return b.add(row)
}

func (b *builder) raw(line string) *builder {
	b.lines = append(b.lines, line)
	return b
}

// String is the transcript: every line terminated by "\n".
func (b *builder) String() string {
	if len(b.lines) == 0 {
		return ""
	}
	return strings.Join(b.lines, "\n") + "\n"
}

const (
	testSID = "11111111-2222-4333-8444-555555555555"
	testCWD = "/home/u/proj"
)

// steeredTurn: a user prompt, a tool call during which a peer line is
// queued and absorbed mid-turn, then the final answer.
func steeredTurn(b *builder, n int) *builder {
	tool := fmt.Sprintf("toolu_%04d", n)
	return b.queueOp("enqueue", fmt.Sprintf("run the tests %d", n), "").
		queueOp("dequeue", "", "").
		prompt(fmt.Sprintf("run the tests %d", n)).
		attachmentOf("date").
		raw(`{"type":"atis-latch","atis":"","sessionId":"`+b.sid+`"}`).
		assistant(fmt.Sprintf("msg_%d_a", n), "", textBlock("Running them now.")).
		assistant(fmt.Sprintf("msg_%d_a", n), "tool_use", toolUse(tool, "Bash", map[string]any{"command": "go test ./...", "description": "run tests"})).
		queueOp("enqueue", "[mama 📡] also check vet", "").
		toolResult(tool, "ok  github.com/x/y 0.1s").
		queuedCommand("[mama 📡] also check vet", peerOrigin("mama", "58b50e71-3528-44fb-bc68-56348cb38765", 4256, true)).
		queueOp("remove", "[mama 📡] also check vet", "absorbed_mid_turn").
		assistant(fmt.Sprintf("msg_%d_b", n), "end_turn", textBlock(fmt.Sprintf("Tests pass (%d); vet is clean too.", n))).
		raw(`{"type":"last-prompt","lastPrompt":"run the tests","sessionId":"` + b.sid + `"}`)
}

// syntheticTranscripts are the synthetic golden cases, by file name.
func syntheticTranscripts() map[string]string {
	out := map[string]string{}

	b := newBuilder(testSID, testCWD)
	steeredTurn(b, 1)
	out["steered-turn.jsonl"] = b.String()

	b = newBuilder(testSID, testCWD)
	b.prompt("summarise the repo").
		assistant("msg_1", "end_turn", textBlock("It is a Go library.")).
		queueOp("enqueue", "LATER-LINE from omi", "").
		queueOp("dequeue", "", "").
		peerPrompt("LATER-LINE from omi", peerOrigin("omi", "331f583e-67e7-4ba3-ae46-9d3bdcb7211c", 4300, false)).
		assistant("msg_2", "end_turn", textBlock("PEER-REPLY to the later line."))
	out["peer-started-turn.jsonl"] = b.String()

	b = newBuilder(testSID, testCWD)
	b.raw(`{"type":"mode","mode":"default","sessionId":"`+testSID+`"}`).
		promptBlocks("first question", "with two blocks").
		meta("<system-reminder>caveat: injected by the harness</system-reminder>").
		sidechain("SUBAGENT-TASK: this is a sidechain prompt and never an exchange").
		raw(`this line is not JSON`).
		raw(`{"type":"future-row-type","payload":{"x":1}}`).
		raw(`{"type":"user","message":{"role":"user","content":42},"timestamp":17}`).
		assistant("msg_1", "tool_use", toolUse("toolu_r", "Read", map[string]any{"file_path": "/home/u/proj/README.md"})).
		toolResult("toolu_r", "# README").
		assistant("msg_2", "end_turn", textBlock("The README says hello.")).
		raw(`[1,2,3]`).
		taskNotification("<task-notification><status>completed</status></task-notification>").
		assistant("msg_3", "end_turn", textBlock("The agent is done.")).
		prompt("a prompt whose answer is still being written").
		assistant("msg_4", "", textBlock("Partial answer")).
		raw(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"torn`)
	s := b.String()
	out["noise-and-torn-tail.jsonl"] = strings.TrimSuffix(s, "\n") // the last row is being written

	b = newBuilder(testSID, testCWD)
	for i := 1; i <= 5; i++ {
		steeredTurn(b, i)
	}
	out["five-turns.jsonl"] = strings.ReplaceAll(b.String(), "\n", "\r\n")
	return out
}
