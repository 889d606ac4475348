package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/fakes/fakesession"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// readmeExample is one "$ oo-claude …" command of the README's Verbs
// section and the output shown under it.
type readmeExample struct {
	line int      // README line of the command
	cmd  string   // without "$ "
	out  []string // the sample output, trailing blank lines dropped
}

// readmeExamples returns the example commands of the README's Verbs
// section: in an indented block (a blank line inside it included), each
// "$ " line and the lines under it up to the next "$ " line or the
// block's end.
func readmeExamples(t *testing.T) []readmeExample {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var xs []readmeExample
	in := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") {
			in = l == "## Verbs"
			continue
		}
		cmd, ok := strings.CutPrefix(l, "    $ ")
		if !in || !ok {
			continue
		}
		x := readmeExample{line: i + 1, cmd: cmd}
		for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "    $ ") &&
			(strings.HasPrefix(lines[i+1], "    ") || lines[i+1] == "" && i+2 < len(lines) && strings.HasPrefix(lines[i+2], "    ") && !strings.HasPrefix(lines[i+2], "    $ ")) {
			i++
			x.out = append(x.out, strings.TrimPrefix(lines[i], "    "))
		}
		xs = append(xs, x)
	}
	return xs
}

// exampleShape writes what differs from run to run in a line of a
// command's output as placeholders: ids (whole or abbreviated with …),
// timestamps, durations.
func exampleShape(l string) string {
	for _, r := range []struct{ re, with string }{
		{`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`, "<ts>"},
		{`\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ`, "<ts>"},
		{`[0-9a-f]{8}(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|-…|…)`, "<id>"},
		{`\b\d+(\.\d+)?s\b`, "<s>"},
	} {
		l = regexp.MustCompile(r.re).ReplaceAllString(l, r.with)
	}
	return l
}

// TestReadmeExamples runs every example command of the README's Verbs
// section against a fake station (fakes/fakestation, a fakesession with
// the fake door and doorman for the verbs that reach a session, the
// recorded real transcript for read) and holds what it prints to the
// sample under it: the same lines, ids, timestamps and durations aside.
// A verb with examples and no case here fails the test, so a new example
// is run too.
func TestReadmeExamples(t *testing.T) {
	t.Parallel()
	xs := readmeExamples(t)
	if len(xs) == 0 {
		t.Fatal("no example commands in the README's Verbs section")
	}
	for _, x := range xs {
		t.Run(strings.Join(strings.Fields(x.cmd)[:2], " "), func(t *testing.T) {
			t.Parallel()
			args, err := shellWords(x.cmd)
			if err != nil {
				t.Fatalf("README.md:%d: %v", x.line, err)
			}
			args = args[1:]
			var got []string
			switch args[0] {
			case "send":
				got = runSendExample(t, x, args)
			case "read":
				got = runReadExample(t, args)
			case "watch":
				checkWatchExample(t, x, args)
				return
			default:
				t.Fatalf("README.md:%d: no runner for an example of %s: add one to TestReadmeExamples", x.line, args[0])
			}
			var want, have []string
			for _, l := range x.out {
				want = append(want, exampleShape(l))
			}
			for _, l := range got {
				have = append(have, exampleShape(l))
			}
			if d := cmp.Diff(want, have); d != "" {
				t.Errorf("README.md:%d: %s prints, in shape (-README +ran):\n%s", x.line, x.cmd, d)
			}
		})
	}
}

// runSendExample runs a send example against a fake session named as its
// target: busy when the sample's verdict is delivered-steer, idle
// otherwise, answering with the sample's reply text (the lines after the
// verdict).
func runSendExample(t *testing.T, x readmeExample, args []string) []string {
	t.Helper()
	if len(x.out) == 0 {
		t.Fatalf("README.md:%d: no sample output under the example", x.line)
	}
	reply := strings.Join(x.out[1:], "\n")
	s := fakesession.Start(t, fakesession.Options{
		Name: args[1],
		Busy: strings.HasPrefix(x.out[0], "delivered-steer "),
		Answer: func(string) fakesession.Turn {
			if reply == "" {
				return fakesession.Turn{Text: "ok"}
			}
			return fakesession.Turn{Text: reply}
		},
	})
	res := runBinary(t, s.Station.Env(), "", args...)
	if res.code != 0 {
		t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", x.cmd, res.code, res.stdout, res.stderr)
	}
	return strings.Split(strings.TrimRight(res.stdout, "\n"), "\n")
}

// runReadExample reads the recorded real transcript the sample shows
// (transcript/testdata/real/steered-turn.jsonl, of /home/u/proj) from a
// fake station's projects directory; its path prints as the README's ~.
func runReadExample(t *testing.T, args []string) []string {
	t.Helper()
	fs := fakestation.New(t)
	b, err := os.ReadFile(filepath.Join("..", "..", "transcript", "testdata", "real", "steered-turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir("/home/u/proj"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, args[1]+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	res := runBinary(t, fs.Env(), "", args...)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
	}
	out := strings.ReplaceAll(res.stdout, fs.Paths.ProjectsDir, "~/.claude/projects")
	return strings.Split(strings.TrimRight(out, "\n"), "\n")
}

// checkWatchExample runs the watch example on a station with a busy fake
// session, sends it the line the sample shows once the watch has listed
// the session, and holds the events to the sample's: each sample event
// comes, in the sample's order (other events may come between them), with
// every key the sample shows, and the same value where the sample's is a
// plain string or a boolean (not abbreviated with …, not a timestamp).
func checkWatchExample(t *testing.T, x readmeExample, args []string) {
	t.Helper()
	var want []map[string]any
	for _, l := range x.out {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("README.md:%d: a sample line of watch --json is not JSON: %v\n%s", x.line, err, l)
		}
		want = append(want, m)
	}
	name, _ := want[0]["name"].(string)
	var line, text string
	for _, m := range want {
		switch m["event"] {
		case "line-queued":
			line, _ = m["line"].(string)
		case "turn-ended":
			text, _ = m["text"].(string)
		}
	}
	from, body, ok := strings.Cut(strings.TrimPrefix(line, "["), " 📡] ")
	if !ok {
		t.Fatalf("README.md:%d: the sample's line-queued line %q is not a tagged line", x.line, line)
	}
	s := fakesession.Start(t, fakesession.Options{Name: name, Busy: true,
		Answer: func(string) fakesession.Turn { return fakesession.Turn{Text: text} }})
	env := s.Station.Env()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := command(ctx, t, env, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	next, sent := 0, false
	var seen []string
	for next < len(want) && sc.Scan() {
		var got map[string]any
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatalf("watch --json printed a line that is not JSON: %v\n%s", err, sc.Text())
		}
		seen = append(seen, sc.Text())
		if got["event"] == want[next]["event"] {
			for k, wv := range want[next] {
				gv, ok := got[k]
				if !ok {
					t.Errorf("README.md:%d: the %s event has no %q: %s", x.line, got["event"], k, sc.Text())
					continue
				}
				switch w := wv.(type) {
				case string:
					if k != "ts" && !strings.Contains(w, "…") && gv != w {
						t.Errorf("README.md:%d: the %s event's %s is %v, the sample's %q", x.line, got["event"], k, gv, w)
					}
				case bool:
					if gv != w {
						t.Errorf("README.md:%d: the %s event's %s is %v, the sample's %v", x.line, got["event"], k, gv, w)
					}
				}
			}
			next++
		}
		if got["event"] == "session-started" && !sent {
			// The watch has the session: the line's events follow (the
			// pipe holds what the watch prints meanwhile).
			sent = true
			if res := runBinary(t, env, "", "send", name, body, "--from", from); res.code != 0 {
				t.Fatalf("send: exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
			}
		}
	}
	if next < len(want) {
		t.Errorf("README.md:%d: watch printed no %s event after the sample's earlier ones; it printed:\n%s", x.line, want[next]["event"], strings.Join(seen, "\n"))
	}
}
