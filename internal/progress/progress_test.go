package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func frames(s string) []string       { return strings.Split(s, "\r")[1:] }
func newLine(b *bytes.Buffer, c *clock) *Line {
	return &Line{W: b, Now: c.now, Prefix: "oo-claude send"}
}

func TestLineFrames(t *testing.T) {
	var b bytes.Buffer
	c := &clock{t: time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)}
	l := newLine(&b, c)
	l.Start("delivered-idle")
	c.add(100 * time.Millisecond)
	l.Tick() // same text, too soon: nothing
	c.add(200 * time.Millisecond)
	l.Tick() // 0s still: same text, nothing
	l.Set("waiting for the model to take the line")
	l.Set("waiting for the model to take the line") // same phase: nothing
	c.add(800 * time.Millisecond)
	l.Tick() // 1s
	c.add(100 * time.Millisecond)
	l.Tick() // 1s: nothing
	c.add(time.Second)
	l.Tick() // 2s
	l.Stop()
	l.Tick() // after Stop: nothing
	l.Set("x")
	want := []string{
		"oo-claude send: 0s · delivered-idle\x1b[K",
		"oo-claude send: 0s · waiting for the model to take the line\x1b[K",
		"oo-claude send: 1s · waiting for the model to take the line\x1b[K",
		"oo-claude send: 2s · waiting for the model to take the line\x1b[K",
		"\x1b[K",
	}
	got := frames(b.String())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("frames:\n%q\nwant\n%q", got, want)
	}
}

func TestLineThrottle(t *testing.T) {
	var b bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	l := newLine(&b, c)
	l.Start("a")
	for range 40 { // 4 s in 100 ms steps: one frame a second at most
		c.add(100 * time.Millisecond)
		l.Tick()
	}
	if n := len(frames(b.String())); n != 5 {
		t.Fatalf("%d frames, want 5 (0s..4s): %q", n, b.String())
	}
}

func TestLineWidthAndASCII(t *testing.T) {
	var b bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	l := newLine(&b, c)
	l.Width = func() int { return 20 }
	l.ASCII = true
	l.Start("waiting for the reply \u202e é")
	got := frames(b.String())
	if len(got) != 1 || got[0] != "oo-claude send: 0s \x1b[K" {
		t.Fatalf("frame %q, want 19 columns", got)
	}
	b.Reset()
	l = newLine(&b, c)
	l.ASCII = true
	l.Start("é \u202e")
	if f := frames(b.String())[0]; f != `oo-claude send: 0s - ? \u202e`+"\x1b[K" {
		t.Fatalf("ASCII frame %q", f)
	}
	for _, r := range b.String() {
		if r >= 0x80 {
			t.Fatalf("non-ASCII %q in %q", r, b.String())
		}
	}
}

func TestLineStopWithoutFrame(t *testing.T) {
	var b bytes.Buffer
	l := newLine(&b, &clock{})
	l.Stop()
	if b.Len() != 0 {
		t.Fatalf("Stop wrote %q with no frame drawn", b.String())
	}
}

func TestLineRun(t *testing.T) {
	var b bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	l := newLine(&b, c)
	l.Start("a")
	tick := make(chan time.Time)
	stop := l.Run(tick)
	l.mu.Lock()
	c.add(2 * time.Second)
	l.mu.Unlock()
	tick <- time.Time{} // received: the goroutine runs Tick
	stop()
	stop()
	got := frames(b.String())
	if len(got) != 3 || got[1] != "oo-claude send: 2s · a\x1b[K" || got[2] != "\x1b[K" {
		t.Fatalf("frames %q", got)
	}
}

func TestLineActivity(t *testing.T) {
	var b bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	l := newLine(&b, c)
	l.Prefix = "oo-claude start"
	l.Start("the session runs (claude -p)")
	l.SetActivity(Activity{Turn: 1})
	l.SetActivity(Activity{Turn: 1}) // the same: no frame
	l.SetActivity(Activity{Turn: 1, Tool: "Bash", Tokens: 950})
	l.SetActivity(Activity{Turn: 2, Tokens: 12_345})
	l.SetActivity(Activity{Turn: 3, Tool: "evil\x1b[2J", Tokens: 4_100_000})
	l.Set("waiting for the reply")
	l.Stop()
	l.SetActivity(Activity{Turn: 4}) // after Stop: nothing
	want := []string{
		"oo-claude start: 0s · the session runs (claude -p)\x1b[K",
		"oo-claude start: 0s · the session runs (claude -p) · turn 1\x1b[K",
		"oo-claude start: 0s · the session runs (claude -p) · turn 1 · running Bash · 950 tokens\x1b[K",
		"oo-claude start: 0s · the session runs (claude -p) · turn 2 · 12.3k tokens\x1b[K",
		`oo-claude start: 0s · the session runs (claude -p) · turn 3 · running evil\x1b[2J · 4.1M tokens` + "\x1b[K",
		"oo-claude start: 0s · waiting for the reply · turn 3 · running evil\\x1b[2J · 4.1M tokens\x1b[K",
		"\x1b[K",
	}
	got := frames(b.String())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("frames:\n%q\nwant\n%q", got, want)
	}
	b.Reset()
	l = newLine(&b, c)
	l.ASCII = true
	l.Start("runs")
	l.SetActivity(Activity{Turn: 2, Tool: "Read"})
	if got := frames(b.String()); len(got) != 2 || got[1] != "oo-claude send: 0s - runs - turn 2 - running Read\x1b[K" {
		t.Fatalf("ASCII frames %q", got)
	}
}
