package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/internal/progress"
	"github.com/oo-family/oo-claude/transcript"
)

// TestStatusLineOnTerminal runs start as a person would, under tmux, with
// every byte the pane receives recorded (pipe-pane): on a terminal the
// live status line is drawn and cleared at the end; with --json, and when
// stderr is a pipe, it is never drawn; stdout never holds it.
func TestStatusLineOnTerminal(t *testing.T) {
	r := newHLRig(t)
	// Long enough for a frame past 0s; the test waits for the shell's
	// marker, not for this time.
	// The fake writes the session's transcript (a user and an assistant
	// row) before its delay: the line shows the turn while claude runs.
	r.fk.Script(fakeclaude.Script{Result: "READY", CostUSD: 0.01, DelayMS: 1500, Transcript: true})
	dir := t.TempDir()
	p := newPane(t, 100, 30, append(append([]string{}, r.env...), "LANG=C.UTF-8", "TERM=xterm-256color"))
	log := filepath.Join(dir, "pane.log")
	if out, err := p.cmd("pipe-pane", "-t", "top", "cat >> "+log).CombinedOutput(); err != nil {
		t.Fatalf("pipe-pane: %v\n%s", err, out)
	}
	run := func(cmd, marker string) {
		t.Helper()
		p.keys(cmd+"; echo "+marker+"-$((40+2))", "Enter")
		p.waitFor(marker, func(s string) bool { return strings.Contains(s, marker+"-42") })
	}
	start := "oo-claude start hi --cwd " + r.cwd + " --no-lineage"
	out := func(n string) string { return filepath.Join(dir, n) }

	run(start+" >"+out("tty.out"), "tty")
	run(start+" --json >"+out("json.out"), "json")
	run(start+" >"+out("pipe.out")+" 2>"+out("pipe.err"), "pipe")

	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	raw := string(b)
	tty, rest, ok := strings.Cut(raw, "tty-42")
	if !ok {
		t.Fatalf("the pane's log has no tty marker:\n%q", raw)
	}
	for _, want := range []string{"\roo-claude start: 0s · the session runs (claude -p)\x1b[K", "\roo-claude start: 1s · ", "s · the session runs (claude -p) · turn 1\x1b[K", "\r\x1b[K"} {
		if !strings.Contains(tty, want) {
			t.Errorf("on a terminal the pane never got %q:\n%q", want, tty)
		}
	}
	if i, j := strings.LastIndex(tty, "\roo-claude start: "), strings.LastIndex(tty, "\r\x1b[K"); j < i {
		t.Errorf("the last frame was not cleared:\n%q", tty)
	}
	if strings.Contains(rest, "oo-claude start: ") {
		t.Errorf("with --json or stderr a pipe the pane got a status line:\n%q", rest)
	}
	for _, f := range []string{"tty.out", "json.out", "pipe.out", "pipe.err"} {
		b, err := os.ReadFile(out(f))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("\r")) || bytes.Contains(b, []byte("\x1b")) || bytes.Contains(b, []byte("oo-claude start: ")) {
			t.Errorf("%s holds the status line: %q", f, b)
		}
		if f != "pipe.err" && !bytes.Contains(b, []byte("READY")) {
			t.Errorf("%s has no verdict: %q", f, b)
		}
	}
	screen := p.screen()
	if strings.Contains(screen, "oo-claude start: ") {
		t.Errorf("the status line stayed on the screen:\n%s", screen)
	}
	for _, rec := range r.receipts(t) {
		for _, v := range rec {
			if s, ok := v.(string); ok && (strings.Contains(s, "oo-claude start: ") || strings.Contains(s, "turn 1")) {
				t.Errorf("a receipt holds the status line: %v", rec)
			}
		}
	}
}

// TestStatusWitnessPhases: on a terminal, send --seen/--reply names the
// wait it is in (after the ack's class) before each wait of the witness.
func TestStatusWitnessPhases(t *testing.T) {
	var b bytes.Buffer
	now := time.Unix(0, 0)
	st := &status{line: &progress.Line{W: &b, Now: func() time.Time { return now }, Prefix: "oo-claude send"}, stop: func() {}}
	st.line.Start("delivering the line")
	w := &statusWitness{Witness: transcript.Witness{ProjectsDir: t.TempDir()}, st: st, class: "delivered-idle"}
	missing := filepath.Join(t.TempDir(), "none.jsonl")
	w.WaitSeen(context.Background(), missing, 0, "m1", 0)
	w.WaitReply(context.Background(), missing, 0, "m1", 0)
	st.end() // stops the transcript follower WaitReply started
	for _, want := range []string{"0s · delivering the line", "0s · delivered-idle · waiting for the model to take the line", "0s · delivered-idle · seen · waiting for the reply"} {
		if !strings.Contains(b.String(), "\roo-claude send: "+want+"\x1b[K") {
			t.Errorf("no frame %q in %q", want, b.String())
		}
	}
}

// TestStatusActivity: the status line's fold of a session's transcript
// rows: every assistant message is one turn (its rows share the id and
// the usage, counted once), a tool_use names the tool running until its
// tool_result, riders' rows and other rows change nothing.
func TestStatusActivity(t *testing.T) {
	var a activity
	steps := []struct {
		row     string
		changed bool
		want    progress.Activity
	}{
		{`{"type":"user","message":{"role":"user","content":"go"}}`, false, progress.Activity{}},
		{`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"looking"}],"usage":{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":1000}}}`, true, progress.Activity{Turn: 1, Tokens: 1120}},
		{`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"usage":{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":1000}}}`, true, progress.Activity{Turn: 1, Tool: "Bash", Tokens: 1120}},
		{`{"type":"assistant","isSidechain":true,"agentId":"r1","message":{"id":"s1","role":"assistant","content":[{"type":"tool_use","name":"Read"}],"usage":{"output_tokens":5}}}`, false, progress.Activity{Turn: 1, Tool: "Bash", Tokens: 1120}},
		{`{"type":"queue-operation","operation":"enqueue","content":"x"}`, false, progress.Activity{Turn: 1, Tool: "Bash", Tokens: 1120}},
		{`not json`, false, progress.Activity{Turn: 1, Tool: "Bash", Tokens: 1120}},
		{`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`, true, progress.Activity{Turn: 1, Tokens: 1120}},
		{`{"type":"assistant","message":{"id":"m2","role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":1,"output_tokens":2}}}`, true, progress.Activity{Turn: 2, Tokens: 1123}},
		{`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"no id"}]}}`, true, progress.Activity{Turn: 3, Tokens: 1123}},
	}
	for i, s := range steps {
		if got := a.add([]byte(s.row)); got != s.changed || a.Activity != s.want {
			t.Errorf("row %d: changed %v, activity %+v; want %v, %+v", i, got, a.Activity, s.changed, s.want)
		}
	}
}
