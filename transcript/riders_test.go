package transcript

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

func TestRidersRealRecording(t *testing.T) {
	sessionDir := "testdata/projects/-home-u-proj/22222222-3333-4444-8555-666666666666"
	p := filepath.Join(sessionDir, "subagents", "agent-aeea12bbda4d6be3c.jsonl")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	now := fi.ModTime().Add(30 * time.Second)
	riders, err := Riders(sessionDir, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows := int64(strings.Count(string(must(os.ReadFile(p))), "\n"))
	want := []Rider{{
		Agent:         "aeea12bbda4d6be3c",
		Started:       time.Date(2026, 11, 30, 19, 31, 46, 113e6, time.UTC),
		LastActivityS: 30,
		Rows:          rows,
		State:         QuietFinished,
		LastStep:      "Bash: ls /",
		LastText:      "Subagent finished: listed files.",
		Description:   "list files",
		AgentType:     "general-purpose",
		Model:         "claude-haiku-5-5",
		StateReason:   ReasonFinalText,
		Path:          p,
		Bytes:         fi.Size(),
	}}
	if diff := cmp.Diff(want, riders); diff != "" {
		t.Errorf("Riders (-want +got):\n%s", diff)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestRidersRule(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	sess := t.TempDir()
	sub := filepath.Join(sess, riderwalk.Dir)

	working := newBuilder(testSID, testCWD)
	working.prompt("task").assistant("m1", "tool_use", toolUse("t1", "Bash", map[string]any{"command": "make"}))

	waiting := newBuilder(testSID, testCWD)
	waiting.prompt("task").assistant("m1", "tool_use", toolUse("t1", "Grep", map[string]any{"pattern": "TODO"})).toolResult("t1", "x")

	done := newBuilder(testSID, testCWD)
	done.prompt("task").
		assistant("m1", "tool_use", toolUse("t1", "Read", map[string]any{"file_path": "/a"})).
		toolResult("t1", "x").
		assistant("m2", "end_turn", textBlock("All done:\nthree files.")).
		meta("<system-reminder>injected after the answer</system-reminder>")

	splitToolAfterText := newBuilder(testSID, testCWD)
	splitToolAfterText.prompt("task").
		assistant("m1", "", textBlock("Let me look.")).
		assistant("m1", "end_turn", toolUse("t1", "Glob", map[string]any{"pattern": "*.go"}))

	splitTextAfterTool := newBuilder(testSID, testCWD)
	splitTextAfterTool.prompt("task").
		assistant("m1", "", toolUse("t1", "Glob", map[string]any{"pattern": "*.go"})).
		assistant("m1", "end_turn", textBlock("Found them."))

	tornAfterFinal := done.String() + `{"type":"assistant","message":{"content":[{"type":"tool_use"`

	files := []struct {
		rel, content string
		age          time.Duration
		meta         string
	}{
		{"agent-working.jsonl", working.String(), 10 * time.Second, `{"agentType":"Explore","description":"scan","model":"claude-haiku-5-5"}`},
		{"agent-waiting.jsonl", waiting.String(), 599 * time.Second, ""},
		{"agent-stale.jsonl", working.String(), 601 * time.Second, ""},
		{"agent-done.jsonl", done.String(), 5 * time.Second, `{"agentType":"general-purpose","description":"read","model":"m","unknown":[1]}`},
		{"agent-staledone.jsonl", done.String(), time.Hour, ""},
		{"agent-split1.jsonl", splitToolAfterText.String(), time.Second, ""},
		{"agent-split2.jsonl", splitTextAfterTool.String(), time.Second, ""},
		{"agent-torn.jsonl", tornAfterFinal, time.Second, `not json`},
		{"agent-empty.jsonl", "", time.Second, ""},
		{"workflows/run-1/agent-wf.jsonl", working.String(), time.Second, `{"agentType":"workflow-step"}`},
		{"a/b/c/agent-toodeep.jsonl", working.String(), time.Second, ""},
		{"agent-x.txt", working.String(), time.Second, ""},
	}
	for _, f := range files {
		p := filepath.Join(sub, f.rel)
		writeFile(t, p, f.content)
		if err := os.Chtimes(p, now, now.Add(-f.age)); err != nil {
			t.Fatal(err)
		}
		if f.meta != "" {
			writeFile(t, strings.TrimSuffix(p, transcriptfile.Ext)+".meta.json", f.meta)
		}
	}
	if err := os.Symlink(filepath.Join(sub, "agent-working.jsonl"), filepath.Join(sub, "agent-link.jsonl")); err != nil {
		t.Fatal(err)
	}

	riders, err := Riders(sess, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Agent, State, Reason, Step, Text, Type string
		Age                                    int64
	}
	var got []view
	for _, r := range riders {
		got = append(got, view{r.Agent, string(r.State), r.StateReason, r.LastStep, r.LastText, r.AgentType, r.LastActivityS})
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Agent < got[j].Agent })
	want := []view{
		{"done", "quiet/finished", "final-text", "Read: /a", "All done: three files.", "general-purpose", 5},
		{"empty", "riding", "", "", "", "", 1},
		{"split1", "riding", "", "Glob: *.go", "Let me look.", "", 1},
		{"split2", "riding", "", "Glob: *.go", "Found them.", "", 1},
		{"stale", "quiet/finished", "stale", "Bash: make", "", "", 601},
		{"staledone", "quiet/finished", "final-text", "Read: /a", "All done: three files.", "", 3600},
		{"torn", "quiet/finished", "final-text", "Read: /a", "All done: three files.", "", 1},
		{"waiting", "riding", "", "Grep: TODO", "", "", 599},
		{"wf", "riding", "", "Bash: make", "", "workflow-step", 1},
		{"working", "riding", "", "Bash: make", "", "Explore", 10},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("riders (-want +got):\n%s", diff)
	}

	t.Run("window", func(t *testing.T) {
		rs, err := Riders(sess, now, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Agent == "working" && (r.State != QuietFinished || r.StateReason != ReasonStale) {
				t.Errorf("with a 5 s window a rider idle for 10 s is %s/%s", r.State, r.StateReason)
			}
		}
	})
	t.Run("judged later", func(t *testing.T) {
		// A rider read at now and judged at a later time is the rider
		// read then: working ones go stale, final ones stay final.
		for _, later := range []time.Time{now.Add(time.Minute), now.Add(9 * time.Minute), now.Add(time.Hour)} {
			again, err := Riders(sess, later, 0)
			if err != nil {
				t.Fatal(err)
			}
			var judged []Rider
			for _, r := range riders {
				fi, err := os.Stat(r.Path)
				if err != nil {
					t.Fatal(err)
				}
				judged = append(judged, r.Judged(fi.ModTime(), later, 0))
			}
			if diff := cmp.Diff(again, judged); diff != "" {
				t.Errorf("judged at %v (-read +judged):\n%s", later, diff)
			}
		}
	})
	t.Run("no subagents", func(t *testing.T) {
		rs, err := Riders(t.TempDir(), now, 0)
		if err != nil || len(rs) != 0 {
			t.Errorf("Riders = %v, %v; want none", rs, err)
		}
	})
}

// The observatory schema's rider keys, exactly.
func TestRiderJSONKeys(t *testing.T) {
	for _, tt := range []struct {
		name    string
		r       Rider
		started any
	}{
		{"unknown start is null", Rider{State: Riding}, nil},
		{"start", Rider{Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, "2026-01-02T03:04:05Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.r)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			want := []string{"agent", "agent_type", "bytes", "description", "last_activity_s", "last_step", "last_text", "model", "path", "rows", "started", "state", "state_reason"}
			if diff := cmp.Diff(want, keys); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.started, m["started"]); diff != "" {
				t.Errorf("started (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCountLines(t *testing.T) {
	for _, tt := range []struct {
		name string
		data string
		want int64
	}{
		{"empty", "", 0},
		{"one", "a\n", 1},
		{"torn not counted", "a\nb", 1},
		{"blank lines count", "\n\n", 2},
		{"across blocks", strings.Repeat("x\n", 1<<20), 1 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := countLines(strings.NewReader(tt.data), int64(len(tt.data)))
			if err != nil || got != tt.want {
				t.Errorf("countLines = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

// TestReadRiderEntry: a rider read from its directory's listing is
// ReadRider's but for the meta fields, which it leaves to its caller; an
// entry that is not a regular file is refused unopened, and a nil one is
// an error.
func TestReadRiderEntry(t *testing.T) {
	dir := "testdata/projects/-home-u-proj/22222222-3333-4444-8555-666666666666/subagents"
	p := filepath.Join(dir, "agent-aeea12bbda4d6be3c.jsonl")
	fi := must(os.Stat(p))
	now := fi.ModTime().Add(30 * time.Second)
	want := must(ReadRider(p, now, 0))
	want.AgentType, want.Description, want.Model = "", "", ""
	var got Rider
	for _, e := range must(os.ReadDir(dir)) {
		if e.Name() == filepath.Base(p) {
			got = must(ReadRiderEntry(dir, e, now, 0))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadRiderEntry (-want +got):\n%s", diff)
	}

	tmp := t.TempDir()
	if err := os.Symlink(must(filepath.Abs(p)), filepath.Join(tmp, "agent-l.jsonl")); err != nil {
		t.Fatal(err)
	}
	for _, e := range must(os.ReadDir(tmp)) {
		if _, err := ReadRiderEntry(tmp, e, now, 0); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadRiderEntry of a symlink: %v, want ErrNotRegular", err)
		}
	}
	if _, err := ReadRiderEntry(tmp, nil, now, 0); err == nil {
		t.Error("ReadRiderEntry(nil): no error")
	}
}
