package transcript_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/transcript"
)

// TestReadReplyReal: the reply to each peer line of the recorded real
// transcripts.
func TestReadReplyReal(t *testing.T) {
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	tests := []struct {
		file, msgID string
		want        receipt.Reply
	}{
		// next, absorbed mid-turn: the answer after the tool round.
		{"steer-next-and-later.jsonl", "58b50e71-3528-44fb-bc68-56348cb38765",
			receipt.Reply{Text: "PEER-REPLY to the later line.", Tools: []string{}, StopReason: "end_turn", TurnEnded: true, At: at("2026-11-30T19:30:15.686Z")}},
		// later: its own turn's answer, not the first turn's.
		{"steer-next-and-later.jsonl", "331f583e-67e7-4ba3-ae46-9d3bdcb7211c",
			receipt.Reply{Text: "PEER-REPLY to the later line.", Tools: []string{}, StopReason: "end_turn", TurnEnded: true, At: at("2026-11-30T19:30:15.844Z")}},
		{"steer-now.jsonl", "21911b68-b13a-4191-bbb0-0388790eb8e8",
			receipt.Reply{Text: "PEER-REPLY to the later line.", Tools: []string{}, StopReason: "end_turn", TurnEnded: true}},
		{"steered-turn.jsonl", "6c6c667d-dc66-465b-8e42-2811789dfb0b",
			receipt.Reply{Text: "done", Tools: []string{}, StopReason: "end_turn", TurnEnded: true, At: at("2026-11-30T19:57:52.040Z")}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.msgID[:8], func(t *testing.T) {
			got, err := transcript.ReadReply(filepath.Join("testdata", "real", tt.file), tt.msgID, transcript.ReplyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.At.IsZero() {
				got.At = time.Time{}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

// rows of a synthetic main chain, shaped like the recorded ones.
func userPrompt(text string) string {
	return `{"type":"user","isSidechain":false,"message":{"role":"user","content":` + quote(text) + `},"timestamp":"2026-11-30T19:30:09.347Z"}` + "\n"
}

func assistant(stop string, blocks ...string) string {
	return `{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[` + strings.Join(blocks, ",") + `],"stop_reason":"` + stop + `"},"timestamp":"2026-11-30T19:30:10.000Z"}` + "\n"
}

func sideAssistant(stop string, blocks ...string) string {
	return `{"type":"assistant","isSidechain":true,"agentId":"a1","message":{"role":"assistant","content":[` + strings.Join(blocks, ",") + `],"stop_reason":"` + stop + `"},"timestamp":"2026-11-30T19:30:10.000Z"}` + "\n"
}

func text(s string) string { return `{"type":"text","text":` + quote(s) + `}` }

func toolUse(name string) string {
	return `{"type":"tool_use","id":"toolu_1","name":"` + name + `","input":{}}`
}

const toolResult = `{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"REPLY-LOOKALIKE in a tool result"}]},"timestamp":"2026-11-30T19:30:11.000Z"}` + "\n"

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// TestReadReplyRules: the rules of a reply on synthetic transcripts.
func TestReadReplyRules(t *testing.T) {
	id, other := uuid.NewString(), uuid.NewString()
	tests := []struct {
		name  string
		rows  string
		want  receipt.Reply
		cause error
	}{
		{"mid-turn: text before the line is not the reply",
			userPrompt("work") + assistant("tool_use", text("BEFORE the line"), toolUse("Bash")) + toolResult + absorbedRow(id) + assistant("end_turn", text("AFTER")),
			receipt.Reply{Text: "AFTER", Tools: []string{}, StopReason: "end_turn", TurnEnded: true}, nil},
		{"started a turn: the turn's answer, tools listed, tool results not text",
			startedRow(id) + assistant("tool_use", text("looking"), toolUse("Bash")) + toolResult + assistant("tool_use", toolUse("Read")) + toolResult + assistant("end_turn", text("found it")),
			receipt.Reply{Text: "looking\nfound it", Tools: []string{"Bash", "Read"}, StopReason: "end_turn", TurnEnded: true}, nil},
		{"sidechain rows are not the reply",
			startedRow(id) + assistant("tool_use", toolUse("Agent")) + sideAssistant("end_turn", text("RIDER TEXT")) + toolResult + assistant("end_turn", text("main")),
			receipt.Reply{Text: "main", Tools: []string{"Agent"}, StopReason: "end_turn", TurnEnded: true}, nil},
		{"the next peer line absorbed after an answer cuts it",
			absorbedRow(id) + assistant("tool_use", text("first answer"), toolUse("Bash")) + toolResult + absorbedRow(other) + assistant("end_turn", text("answer to the other")),
			receipt.Reply{Text: "first answer", Tools: []string{"Bash"}, StopReason: "tool_use"}, nil},
		{"lines absorbed together share the answer",
			absorbedRow(id) + absorbedRow(other) + assistant("end_turn", text("both")),
			receipt.Reply{Text: "both", Tools: []string{}, StopReason: "end_turn", TurnEnded: true}, nil},
		{"a new prompt cuts it",
			startedRow(id) + assistant("tool_use", text("partial"), toolUse("Bash")) + userPrompt("stop that"),
			receipt.Reply{Text: "partial", Tools: []string{"Bash"}, StopReason: "tool_use"}, nil},
		{"pending: the turn goes on",
			absorbedRow(id) + assistant("tool_use", text("so far"), toolUse("Bash")),
			receipt.Reply{Text: "so far", Tools: []string{"Bash"}, StopReason: "tool_use"}, transcript.ErrReplyPending},
		{"not seen", userPrompt("x") + assistant("end_turn", text("y")) + absorbedRow(other),
			receipt.Reply{}, transcript.ErrNotSeen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			appendTo(t, path, tt.rows)
			got, err := transcript.ReadReply(path, id, transcript.ReplyOptions{})
			if !errors.Is(err, tt.cause) || (tt.cause == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tt.cause)
			}
			got.At = time.Time{}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadReplyFrom(t *testing.T) {
	id := uuid.NewString()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	appendTo(t, path, startedRow(id)+assistant("end_turn", text("old answer")))
	fi, _ := os.Stat(path)
	if _, err := transcript.ReadReply(path, id, transcript.ReplyOptions{From: fi.Size()}); !errors.Is(err, transcript.ErrNotSeen) {
		t.Errorf("a row before From was read: %v", err)
	}
	for _, bad := range []struct {
		path, id string
		cause    error
	}{
		{path, "not-a-uuid", transcript.ErrBadMsgID},
		{filepath.Join(t.TempDir(), "missing.jsonl"), id, os.ErrNotExist},
	} {
		if _, err := transcript.ReadReply(bad.path, bad.id, transcript.ReplyOptions{}); !errors.Is(err, bad.cause) {
			t.Errorf("ReadReply(%s, %s): %v, want %v", bad.path, bad.id, err, bad.cause)
		}
	}
	link := filepath.Join(t.TempDir(), "link.jsonl")
	os.Symlink(path, link)
	if _, err := transcript.ReadReply(link, id, transcript.ReplyOptions{}); !errors.Is(err, transcript.ErrNotRegular) {
		t.Errorf("ReadReply through a symlink: %v, want ErrNotRegular", err)
	}
}

// TestWaitReply: the wait follows the rows as they are written (woken by
// file events: the poll is an hour), across a transcript created after the
// wait began; it gives up with ErrReplyPending or ErrNotSeen, and a
// cancelled ctx is ctx's error itself.
func TestWaitReply(t *testing.T) {
	id := uuid.NewString()
	dir := filepath.Join(t.TempDir(), "proj")
	path := filepath.Join(dir, "s.jsonl")
	type result struct {
		r   receipt.Reply
		err error
	}
	ch := make(chan result, 1)
	go func() {
		r, err := transcript.WaitReply(context.Background(), path, id, transcript.ReplyOptions{Wait: 2 * time.Minute, Poll: time.Hour})
		ch <- result{r, err}
	}()
	time.Sleep(50 * time.Millisecond)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, userPrompt("work")+assistant("tool_use", text("before"), toolUse("Bash")))
	time.Sleep(50 * time.Millisecond)
	appendTo(t, path, toolResult+absorbedRow(id))
	time.Sleep(50 * time.Millisecond)
	appendTo(t, path, assistant("tool_use", text("one"), toolUse("Bash"))+toolResult)
	time.Sleep(50 * time.Millisecond)
	select {
	case r := <-ch:
		t.Fatalf("returned before the turn ended: %+v", r)
	default:
	}
	appendTo(t, path, assistant("end_turn", text("two")))
	select {
	case r := <-ch:
		r.r.At = time.Time{}
		want := receipt.Reply{Text: "one\ntwo", Tools: []string{"Bash"}, StopReason: "end_turn", TurnEnded: true}
		if r.err != nil || !cmp.Equal(want, r.r) {
			t.Errorf("WaitReply = %+v, %v; want %+v", r.r, r.err, want)
		}
	case <-time.After(60 * time.Second): // it returns at the row; generous for a loaded machine
		t.Fatal("WaitReply did not return after the final answer")
	}

	// Gives up: pending, not seen; a cancelled ctx.
	other := uuid.NewString()
	appendTo(t, path, absorbedRow(other)+assistant("tool_use", text("x"), toolUse("Bash")))
	if r, err := transcript.WaitReply(context.Background(), path, other, transcript.ReplyOptions{Wait: 100 * time.Millisecond}); !errors.Is(err, transcript.ErrReplyPending) || r.Text != "x" {
		t.Errorf("pending: %+v, %v", r, err)
	}
	if _, err := transcript.WaitReply(context.Background(), path, uuid.NewString(), transcript.ReplyOptions{Wait: 100 * time.Millisecond}); !errors.Is(err, transcript.ErrNotSeen) {
		t.Errorf("not seen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := transcript.WaitReply(ctx, path, uuid.NewString(), transcript.ReplyOptions{Wait: 20 * time.Second}); err != context.Canceled {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// FuzzReadReply: any transcript bytes give a reply or one of the reply
// errors, never a panic; a reply's Tools is never nil, and a reply without
// a seen row is ErrNotSeen.
func FuzzReadReply(f *testing.F) {
	const id = "6c6c667d-dc66-465b-8e42-2811789dfb0b"
	f.Add([]byte(absorbedRow(id) + assistant("end_turn", text("x"))))
	f.Add([]byte(startedRow(id) + assistant("tool_use", toolUse("Bash")) + toolResult + userPrompt("next")))
	f.Add([]byte(`{"type":"assistant","message":{"content":7,"stop_reason":[]}}` + "\n" + `{"type":"user","origin":{"kind":"peer","msg_id":"` + id + `"},"message":{"content":[1,"x"]}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := transcript.ReadReply(path, id, transcript.ReplyOptions{})
		switch {
		case err == nil, errors.Is(err, transcript.ErrReplyPending):
			if r.Tools == nil {
				t.Errorf("reply %+v has nil Tools", r)
			}
		case errors.Is(err, transcript.ErrNotSeen):
			if r.Text != "" || len(r.Tools) != 0 {
				t.Errorf("not seen, yet a reply %+v", r)
			}
		case errors.Is(err, transcript.ErrRowTooLong):
		default:
			t.Errorf("error %v", err)
		}
	})
}
