package observatory_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

// Rows as Claude Code 2.1.332 writes them (transcript/testdata/real): a
// request's assistant message, one row per content block with the same
// id and usage, and the cost-state row of a process's exit.
func assistantRow(id string, in, out int, sidechain bool) string {
	return fmt.Sprintf(`{"type":"assistant","isSidechain":%t,"message":{"id":%q,"role":"assistant","model":"claude-haiku-5-5","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":%d,"output_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}`, sidechain, id, in, out)
}

func costStateRow(usd float64, tokens int) string {
	return fmt.Sprintf(`{"type":"cost-state","sessionId":"x","totalCostUSD":%v,"totalAPIDuration":96,"modelUsage":{"claude-haiku-5-5":{"inputTokens":%d,"outputTokens":4,"costUSD":%v}},"hasUnknownModelCost":false}`, usd, tokens, usd)
}

func isCost(sid string) func(observatory.Event) bool {
	return func(e observatory.Event) bool { return e.Event == observatory.EventCost && e.Session == sid }
}

func costString(c *observatory.Cost) string {
	if c == nil {
		return "<nil>"
	}
	usd := "nil"
	if c.USD != nil {
		usd = fmt.Sprint(*c.USD)
	}
	return fmt.Sprintf("usd %s unknown %t tokens %d bounded %t", usd, c.UnknownModelCost, c.Tokens, c.Bounded)
}

// TestWatchCost: a session whose transcript holds a cost-state row and
// requests after it is taken with its cost (Claude Code's figure and the
// tokens since, each request once, a rider's rows aside); a request
// appended adds its tokens, a cost-state row appended replaces the
// figure; a session with no transcript has no cost event.
func TestWatchCost(t *testing.T) {
	fs := fakestation.New(t)
	cwd := "/home/u/proj"
	row := fs.AddSession(fakestation.Session{Name: "spender", CWD: cwd, Status: station.StatusBusy})
	bare := fs.AddSession(fakestation.Session{Name: "bare", CWD: "/home/u/other", Status: station.StatusIdle})
	sid := row.SessionID
	tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid+transcriptfile.Ext)
	appendRow(t, tp, assistantRow("m1", 100, 5, false))
	appendRow(t, tp, costStateRow(0.0026, 105))
	appendRow(t, tp, assistantRow("m2", 1000, 20, false))
	appendRow(t, tp, assistantRow("m2", 1000, 20, false)) // its second block
	appendRow(t, tp, assistantRow("r1", 7000, 7, true))   // a rider's row
	ev := startWatch(t, fs, "")

	want := func(what, cost string) {
		t.Helper()
		e := ev.next(what, isCost(sid))
		if got := costString(e.Cost); got != cost {
			t.Errorf("%s: cost %s, want %s", what, got, cost)
		}
	}
	want("the cost at the start", "usd 0.0026 unknown false tokens 1020 bounded false")
	appendRow(t, tp, assistantRow("m2", 1000, 20, false)) // the same request's third block: counted once
	appendRow(t, tp, assistantRow("m3", 500, 0, false))
	want("the cost after a request", "usd 0.0026 unknown false tokens 1520 bounded false")
	appendRow(t, tp, costStateRow(0.0051, 1625))
	want("the cost after a cost-state row", "usd 0.0051 unknown false tokens 0 bounded false")
	appendRow(t, tp, assistantRow("m4", 30, 3, false))
	want("a request after the cost-state row", "usd 0.0051 unknown false tokens 33 bounded false")
	for _, e := range ev.got {
		if e.Event == observatory.EventCost && e.Session == bare.SessionID {
			t.Errorf("a cost event for a session without a transcript: %+v", e)
		}
	}
}

// TestWatchCostBounded: in a 2 GiB transcript (sparse) whose only
// cost-state row is at its start, the watch looks back CostLookBack bytes
// only: the session's cost is its last requests' tokens, marked bounded
// (at least), with no dollar figure.
func TestWatchCostBounded(t *testing.T) {
	fs := fakestation.New(t)
	cwd := "/home/u/big"
	row := fs.AddSession(fakestation.Session{Name: "big", CWD: cwd, Status: station.StatusBusy})
	sid := row.SessionID
	tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid+transcriptfile.Ext)
	appendRow(t, tp, costStateRow(0.25, 1000))
	if err := os.Truncate(tp, 2<<30); err != nil {
		t.Fatal(err)
	}
	appendRow(t, tp, "") // the hole ends its line
	appendRow(t, tp, assistantRow("m9", 4000, 100, false))
	ev := startWatch(t, fs, "")
	e := ev.next("the cost at the start", isCost(sid))
	if got, want := costString(e.Cost), "usd nil unknown false tokens 4100 bounded true"; got != want {
		t.Errorf("cost %s, want %s", got, want)
	}
}

// BenchmarkWatchStartCost is the start of a watch on a station of 200
// sessions (initial-ms: until every session-started came; costs-ms: until
// every session's cost event came too) whose
// transcripts are 5 MiB of Claude Code 2.1.332's own rows (the recorded
// steered turn, repeated; hard links of one file, so the disk holds it
// once) with no cost-state row within CostLookBack: the worst case, each
// session's look back reads its 4 MiB bound; "at-rest" ends each with a
// cost-state row, found at once.
func BenchmarkWatchStartCost(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "transcript", "testdata", "real", "steered-turn.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	var turn []byte
	for _, l := range bytes.SplitAfter(raw, []byte("\n")) {
		if !bytes.Contains(l, []byte(`"cost-state"`)) {
			turn = append(turn, l...)
		}
	}
	for _, bc := range []struct {
		name string
		tail string
	}{{"worst", ""}, {"at-rest", costStateRow(0.0026, 105) + "\n"}} {
		b.Run(bc.name, func(b *testing.B) {
			dir := b.TempDir()
			one := filepath.Join(dir, "one.jsonl")
			content := bytes.Repeat(turn, 5<<20/len(turn)+1)
			if err := os.WriteFile(one, append(content, bc.tail...), 0o600); err != nil {
				b.Fatal(err)
			}
			fs := fakestation.New(b)
			proc := newFakeProc(b)
			for i := range 200 {
				pid := 20000 + i
				proc.run(b, pid, strconv.Itoa(pid))
				sid := fmt.Sprintf("eeeeeeee-0000-4000-8000-%012d", i)
				cwd := fmt.Sprintf("/home/u/cost%03d", i)
				r := row(pid, sid, fmt.Sprintf("cost%03d", i), cwd, testNow)
				r.ProcStart = strconv.Itoa(pid)
				fs.WriteRow(r)
				tp := filepath.Join(fs.Paths.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid+transcriptfile.Ext)
				if err := os.MkdirAll(filepath.Dir(tp), 0o700); err != nil {
					b.Fatal(err)
				}
				if err := os.Link(one, tp); err != nil {
					b.Fatal(err)
				}
			}
			st := &station.Station{Paths: fs.Paths, Proc: station.Proc{Root: proc.root}, Now: func() time.Time { return testNow }}
			var initial, costs time.Duration
			for b.Loop() {
				t0 := time.Now()
				ctx, cancel := context.WithCancel(context.Background())
				ch, err := observatory.Watch(ctx, observatory.WatchOptions{Station: st, Liveness: -1})
				if err != nil {
					b.Fatal(err)
				}
				started, costed := 0, 0
				for started < 200 || costed < 200 {
					switch e := <-ch; e.Event {
					case observatory.EventSessionStarted:
						if started++; started == 200 {
							initial += time.Since(t0)
						}
					case observatory.EventCost:
						costed++
					}
				}
				costs += time.Since(t0)
				cancel()
				for range ch {
				}
			}
			b.ReportMetric(float64(initial.Milliseconds())/float64(b.N), "initial-ms")
			b.ReportMetric(float64(costs.Milliseconds())/float64(b.N), "costs-ms")
		})
	}
}
