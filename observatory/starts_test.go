package observatory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/internal/claudeproc"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/observatory"
	"github.com/oo-family/oo-claude/station"
)

// startFile writes a result file in <state>/start/ as a start writes it
// (state first, indented), with the given supervisor and extra keys, and
// returns its path.
func startFile(t *testing.T, paths station.Paths, sid, state string, supervisor any, procStart any, extra map[string]any) string {
	t.Helper()
	path := filepath.Join(claudeproc.StartDir(paths), sid+".json")
	m := map[string]any{"state": state, "session_id": sid, "name": nil, "unit": nil, "result_file": path, "prompt_file": nil,
		"started_at": "2026-11-30T11:00:00.000Z", "ended_at": nil, "pid": 4242,
		"supervisor_pid": supervisor, "supervisor_proc_start": procStart, "result": "kept", "reason": nil, "note": nil}
	for k, v := range extra {
		m[k] = v
	}
	// state first, as the writer puts it.
	rest, _ := json.Marshal(m)
	var b bytes.Buffer
	b.WriteString(`{"state":` + string(mustJSON(state)) + `,`)
	b.Write(rest[1:])
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := claudeproc.WriteResultFile(path, json.RawMessage(out.Bytes())); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}

// startsRig is a station whose process table is a fake procfs: the
// supervisor pids that run are the ones the test makes run.
func startsRig(t *testing.T) (*station.Station, fakeProc) {
	fs := fakestation.New(t)
	proc := newFakeProc(t)
	st := fs.Station()
	st.Proc = station.Proc{Root: proc.root}
	if err := os.MkdirAll(proc.root, 0o700); err != nil {
		t.Fatal(err)
	}
	return st, proc
}

func buildStarts(t *testing.T, st *station.Station, all bool) []observatory.Start {
	t.Helper()
	doc, err := observatory.Build(context.Background(), observatory.Options{Station: st, IncludeFinished: all, PID: 777})
	if err != nil {
		t.Fatal(err)
	}
	return doc.Starts
}

// A started result file whose supervisor is gone is reported lost and
// finalized once, atomically, every other key kept; the next reader
// reports the lost state the file now holds.
func TestStartsLostWhenSupervisorGone(t *testing.T) {
	st, _ := startsRig(t)
	sid := uuid.NewString()
	path := startFile(t, st.Paths, sid, "started", 3001, "500", nil)
	before := readJSON(t, path)

	got := buildStarts(t, st, false)
	if len(got) != 1 || got[0].State != observatory.StartLost || !got[0].Finalized || got[0].Session != sid ||
		!strings.HasPrefix(string(got[0].Reason), "supervisor-gone: ") || got[0].EndedAt == "" {
		t.Fatalf("starts %+v, want one lost and finalized", got)
	}
	after := readJSON(t, path)
	if after["state"] != "lost" || after["ended_at"] == nil || !strings.HasPrefix(after["reason"].(string), "supervisor-gone: its supervisor (pid 3001) is gone") ||
		!strings.Contains(after["note"].(string), "pid 777") {
		t.Errorf("result file after: %v", after)
	}
	for k, v := range before {
		if k == "state" || k == "ended_at" || k == "reason" || k == "note" {
			continue
		}
		if !bytes.Equal(mustJSON(v), mustJSON(after[k])) {
			t.Errorf("key %s: %v, was %v", k, after[k], v)
		}
	}
	b, _ := os.ReadFile(path)
	if !bytes.HasPrefix(b, []byte("{\n  \"state\": \"lost\",\n")) {
		t.Errorf("the state is no longer the first key:\n%s", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}

	got = buildStarts(t, st, false)
	if len(got) != 1 || got[0].State != observatory.StartLost || got[0].Finalized {
		t.Errorf("second read: %+v, want lost, not finalized again", got)
	}
	if b2, _ := os.ReadFile(path); !bytes.Equal(b, b2) {
		t.Errorf("the second read rewrote the file")
	}
}

// The supervisor's pid alone is not enough: a pid that runs with another
// start time is another process (the pid was reused) and the run is lost;
// the supervisor itself (same pid, same start time) keeps it started, and
// the file is not touched. A file of an older oo-claude (no supervisor)
// stays as it says.
func TestStartsSupervisorIdentity(t *testing.T) {
	st, proc := startsRig(t)
	proc.run(t, 3001, "500")
	live := startFile(t, st.Paths, uuid.NewString(), "started", 3001, "500", nil)
	reused := startFile(t, st.Paths, uuid.NewString(), "started", 3001, "499", nil)
	legacy := startFile(t, st.Paths, uuid.NewString(), "started", nil, nil, nil)
	liveBytes, _ := os.ReadFile(live)
	legacyBytes, _ := os.ReadFile(legacy)
	states := map[string]observatory.Start{}
	for _, s := range buildStarts(t, st, false) {
		states[s.ResultFile] = s
	}
	if s := states[live]; s.State != observatory.StartStarted || s.Finalized {
		t.Errorf("live supervisor: %+v, want started", s)
	}
	if s := states[reused]; s.State != observatory.StartLost || !s.Finalized || !strings.Contains(string(s.Reason), "another process now") {
		t.Errorf("reused pid: %+v, want lost (another process has the pid)", s)
	}
	if s := states[legacy]; s.State != observatory.StartStarted {
		t.Errorf("no supervisor recorded: %+v, want started", s)
	}
	for p, want := range map[string][]byte{live: liveBytes, legacy: legacyBytes} {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, want) {
			t.Errorf("%s was rewritten:\n%s", p, b)
		}
	}
}

// While another process holds the session's lock (a reader finalizing, a
// new run of the session), the run is reported lost but the file is left
// to the holder or the next reader.
func TestStartsLostUnderForeignLock(t *testing.T) {
	st, _ := startsRig(t)
	sid := uuid.NewString()
	path := startFile(t, st.Paths, sid, "started", 3001, "500", nil)
	l, err := fsx.TryLock(claudeproc.ResumeLockPath(st.Paths, sid))
	if err != nil {
		t.Fatal(err)
	}
	got := buildStarts(t, st, false)
	if len(got) != 1 || got[0].State != observatory.StartLost || got[0].Finalized {
		t.Errorf("under a held lock: %+v, want lost, not finalized", got)
	}
	if m := readJSON(t, path); m["state"] != "started" {
		t.Errorf("the file was written under another's lock: %v", m["state"])
	}
	l.Unlock()
	if got := buildStarts(t, st, false); len(got) != 1 || !got[0].Finalized {
		t.Errorf("after the lock is free: %+v, want finalized", got)
	}
}

// A detached start: while a unit body holds the claimed prompt (between
// taking it and recording itself as the supervisor), the run is started
// although the detaching start is gone. A unit that never took its prompt
// is lost, and the prompt is taken back so a late unit runs nothing.
func TestStartsDetachedHandOff(t *testing.T) {
	st, proc := startsRig(t)
	proc.run(t, 3002, "600") // the unit body
	claimedSID, waitingSID := uuid.NewString(), uuid.NewString()
	prompt := func(sid string) string { return filepath.Join(claudeproc.StartDir(st.Paths), sid+".prompt") }
	claimed := startFile(t, st.Paths, claimedSID, "started", 3001, "500",
		map[string]any{"unit": claudeproc.UnitName(claimedSID), "prompt_file": prompt(claimedSID)})
	if err := os.WriteFile(prompt(claimedSID)+".taken-3002", []byte("go"), 0o600); err != nil {
		t.Fatal(err)
	}
	waiting := startFile(t, st.Paths, waitingSID, "started", 3001, "500",
		map[string]any{"unit": claudeproc.UnitName(waitingSID), "prompt_file": prompt(waitingSID)})
	if err := os.WriteFile(prompt(waitingSID), []byte("go"), 0o600); err != nil {
		t.Fatal(err)
	}
	states := map[string]observatory.Start{}
	for _, s := range buildStarts(t, st, false) {
		states[s.ResultFile] = s
	}
	if s := states[claimed]; s.State != observatory.StartStarted || s.Unit == "" {
		t.Errorf("unit body holds the prompt: %+v, want started", s)
	}
	if s := states[waiting]; s.State != observatory.StartLost || !s.Finalized {
		t.Errorf("unit never came: %+v, want lost", s)
	}
	if _, err := os.Lstat(prompt(waitingSID)); !os.IsNotExist(err) {
		t.Errorf("the prompt of the lost detached start is still there: %v", err)
	}
	ents, _ := os.ReadDir(claudeproc.StartDir(st.Paths))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), waitingSID+".prompt") {
			t.Errorf("left behind: %s", e.Name())
		}
	}

	// The unit body dies before recording itself: lost, its claim removed.
	os.RemoveAll(filepath.Join(proc.root, "3002"))
	if got := buildStarts(t, st, false); len(got) != 2 || got[0].State != observatory.StartLost || got[1].State != observatory.StartLost {
		t.Errorf("after the unit body died: %+v, want both lost", got)
	}
	if _, err := os.Lstat(prompt(claimedSID) + ".taken-3002"); !os.IsNotExist(err) {
		t.Errorf("the dead unit body's claim is still there: %v", err)
	}
}

// Readers at once finalize a lost file once; finished files are listed
// only with IncludeFinished.
func TestStartsReadersAtOnceAndFinished(t *testing.T) {
	st, _ := startsRig(t)
	path := startFile(t, st.Paths, uuid.NewString(), "started", 3001, "500", nil)
	done := startFile(t, st.Paths, uuid.NewString(), "completed", 3001, "500", map[string]any{"ended_at": "2026-11-30T11:01:00.000Z"})
	const n = 8
	var wg sync.WaitGroup
	finalized := make(chan bool, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, s := range buildStarts(t, st, false) {
				if s.ResultFile == path {
					if s.State != observatory.StartLost {
						t.Errorf("a reader saw %s, want lost", s.State)
					}
					finalized <- s.Finalized
				}
			}
		}()
	}
	wg.Wait()
	close(finalized)
	count := 0
	for f := range finalized {
		if f {
			count++
		}
	}
	if count != 1 {
		t.Errorf("%d of %d readers at once finalized the file, want exactly 1", count, n)
	}
	if got := buildStarts(t, st, false); len(got) != 1 || got[0].ResultFile != path {
		t.Errorf("without IncludeFinished: %+v, want the lost one only", got)
	}
	if got := buildStarts(t, st, true); len(got) != 2 || got[1].ResultFile != done && got[0].ResultFile != done {
		t.Errorf("with IncludeFinished: %+v, want both", got)
	}
}

// The document's start states are the result file's own.
func TestStartStatesPinned(t *testing.T) {
	if observatory.StartStarted != claudeproc.StateStarted || observatory.StartLost != claudeproc.StateLost {
		t.Errorf("start states %q %q, the result file's %q %q", observatory.StartStarted, observatory.StartLost, claudeproc.StateStarted, claudeproc.StateLost)
	}
}

// A result file whose prompt_file names any path but the one a start
// makes next to it (a file edited or planted) has that path left alone
// when its run is found lost: not claimed, not removed, and no claimed
// copy beside it removed either.
func TestStartsForeignPromptFileLeftAlone(t *testing.T) {
	st, _ := startsRig(t)
	sid := uuid.NewString()
	victim := filepath.Join(t.TempDir(), "precious.txt")
	for _, p := range []string{victim, victim + ".taken-3999"} {
		if err := os.WriteFile(p, []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	startFile(t, st.Paths, sid, "started", 3001, "500",
		map[string]any{"unit": claudeproc.UnitName(sid), "prompt_file": victim})
	if got := buildStarts(t, st, false); len(got) != 1 || got[0].State != observatory.StartLost || !got[0].Finalized {
		t.Fatalf("starts %+v, want one lost and finalized", got)
	}
	for _, p := range []string{victim, victim + ".taken-3999"} {
		if b, err := os.ReadFile(p); err != nil || string(b) != "keep me" {
			t.Errorf("%s after the read: %q, %v; want it untouched", filepath.Base(p), b, err)
		}
	}
}
