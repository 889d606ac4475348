package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// watchRSSBound is the most resident memory (VmHWM, the peak) the watch
// process may reach in each case of TestWatchMemoryBounded (issue 18,
// point 9).
const watchRSSBound = 64 << 20

// ooClaudeBinary is the oo-claude program whose memory is measured: this
// test binary (which runs main), or, when the tests run with the race
// detector (whose shadow memory would be measured too), oo-claude built
// without it into a temporary directory with the go command on PATH.
func ooClaudeBinary(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		return binary(t)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH to build oo-claude without -race: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "oo-claude")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// watchProc is one `oo-claude watch --json` child and the events it printed.
type watchProc struct {
	t      *testing.T
	pid    int
	events chan map[string]any
	stop   func()
	seen   []map[string]any
}

func startWatch(t *testing.T, bin string, env []string) *watchProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, bin, "watch", "--json")
	cmd.Env = append([]string{"OO_CLAUDE_TEST_AS_BINARY=1", "PATH=/usr/bin:/bin", childGORACE()}, env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb syncBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &watchProc{t: t, pid: cmd.Process.Pid, events: make(chan map[string]any, 1024)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(w.events)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				w.events <- m
			}
		}
	}()
	var once sync.Once
	w.stop = func() {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			for e := range w.events {
				w.seen = append(w.seen, e)
			}
			<-read
			cmd.Wait()
			cancel()
			if errb.String() != "" {
				t.Logf("watch stderr: %s", errb.String())
			}
		})
	}
	t.Cleanup(w.stop)
	return w
}

// wait returns the first event (among those not yet taken) that ok
// accepts, or fails the test when the watch ended or a minute passed.
func (w *watchProc) wait(what string, ok func(map[string]any) bool) map[string]any {
	w.t.Helper()
	for i, e := range w.seen {
		if ok(e) {
			w.seen = append(w.seen[:i], w.seen[i+1:]...)
			return e
		}
	}
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case e, open := <-w.events:
			if !open {
				w.t.Fatalf("watch ended before %s", what)
			}
			if ok(e) {
				return e
			}
			w.seen = append(w.seen, e)
		case <-deadline:
			w.t.Fatalf("no %s event within 2 min", what)
		}
	}
}

// peak is the watch process's peak resident set (VmHWM), in bytes.
func (w *watchProc) peak() int64 {
	w.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.pid))
	if err != nil {
		w.t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				w.t.Fatal(err)
			}
			return kb << 10
		}
	}
	w.t.Fatalf("no VmHWM in /proc/%d/status", w.pid)
	return 0
}

func appendT(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func isEvent(kind, sid, field, text string) func(map[string]any) bool {
	return func(e map[string]any) bool {
		s, _ := e[field].(string)
		return e["event"] == kind && e["session"] == sid && strings.Contains(s, text)
	}
}

// TestWatchMemoryBounded: the real `oo-claude watch --json` keeps its peak
// resident set under 64 MiB while hostile sizes appear on the station (a
// 2 GiB sparse inbox, an inbox growing to 100 MB without a newline, a
// 60 MB transcript row, a 128 MiB flood of lines), and a good line beside
// each still yields its event; an over-long line is reported once, and the
// lines after it are read. Before, watch read the whole unread part of a
// file at once and re-read an unterminated tail on every event (555 MB,
// 228 MB, 261 MB and more for the flood).
func TestWatchMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes hundreds of MB")
	}
	t.Parallel() // its cases run one after the other
	bin := ooClaudeBinary(t)
	cases := []struct {
		name string
		// bad makes the hostile file and returns the session whose inbox
		// holds it ("" for none) and a line appended after it there.
		bad func(t *testing.T, fs *fakestation.Station, tpath string) (sid string)
	}{
		{"2GiB sparse inbox appears", func(t *testing.T, fs *fakestation.Station, _ string) string {
			sid := uuid.NewString()
			f, err := os.OpenFile(fs.InboxPath(sid), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(2 << 30); err != nil {
				t.Fatal(err)
			}
			f.Close()
			return sid
		}},
		{"100MB without a newline", func(t *testing.T, fs *fakestation.Station, _ string) string {
			sid := uuid.NewString()
			chunk := bytes.Repeat([]byte("x"), 4<<20)
			for range 25 {
				appendT(t, fs.InboxPath(sid), chunk)
			}
			return sid
		}},
		{"60MB transcript row", func(t *testing.T, fs *fakestation.Station, tpath string) string {
			row := `{"type":"assistant","isSidechain":false,"message":{"role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"` +
				strings.Repeat("y", 60<<20) + `"}]}}` + "\n"
			appendT(t, tpath, []byte(row))
			return ""
		}},
		{"128MiB flood of lines", func(t *testing.T, fs *fakestation.Station, _ string) string {
			sid := uuid.NewString()
			line := "[flood 📡] " + strings.Repeat("z", inboxv1.MaxLineBytes-20) + "\n"
			appendT(t, fs.InboxPath(sid), []byte(strings.Repeat(line, (128<<20)/len(line))))
			return sid
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := fakestation.New(t)
			cwd := filepath.Join(fs.Root, "work")
			row := fs.AddSession(fakestation.Session{CWD: cwd})
			tpath := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), row.SessionID+transcriptfile.Ext)
			writeT(t, tpath, `{"type":"user","isSidechain":false,"message":{"role":"user","content":"hi"}}`+"\n")
			good := uuid.NewString()
			w := startWatch(t, bin, fs.Env())
			w.wait("session-started", isEvent("session-started", row.SessionID, "session", ""))

			sid := c.bad(t, fs, tpath)
			if sid != "" {
				appendT(t, fs.InboxPath(sid), []byte("\n[t 📡] after the bad line\n"))
			}
			appendT(t, fs.InboxPath(good), []byte("[t 📡] a good line beside\n"))
			appendT(t, tpath, []byte(`{"type":"assistant","isSidechain":false,"message":{"role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"the good answer"}]}}`+"\n"))
			w.wait("line-queued of the good inbox", isEvent("line-queued", good, "line", "a good line beside"))
			w.wait("turn-ended of the good row", isEvent("turn-ended", row.SessionID, "text", "the good answer"))
			if sid != "" {
				w.wait("line-queued after the bad line", isEvent("line-queued", sid, "line", "after the bad line"))
			}
			peak := w.peak()
			t.Logf("%s: watch's peak resident set (VmHWM) %.1f MiB", c.name, float64(peak)/(1<<20))
			if peak > watchRSSBound {
				t.Errorf("watch's peak resident set is %.1f MiB, want < %d MiB", float64(peak)/(1<<20), watchRSSBound>>20)
			}
			w.stop()
			warnings := 0
			for _, e := range w.seen {
				if e["event"] == "warning" && sid != "" && strings.Contains(fmt.Sprint(e["text"]), sid) {
					warnings++
				}
			}
			if warnings > 1 {
				t.Errorf("the over-long line was reported %d times, want once", warnings)
			}
		})
	}
}
