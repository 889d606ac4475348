package fakestation_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/station"
)

// realRow is a registry row written by Claude Code 2.1.332 (headless, with
// a derived name), as recorded for the facts file. The e2e suite holds the
// live binary to the same key set (e2e.TestRegistryRow).
const realRow = `{"pid":10718,"sessionId":"017c3f59-43cc-4dc8-bfb6-5e9a5625a864","cwd":"/home/u/proj","startedAt":1796065828540,
 "procStart":"92840","version":"2.1.332","peerProtocol":1,"peerFeatures":["notify_idle","reply_across_default_dirs","artifact_yield"],
 "kind":"interactive","entrypoint":"sdk-cli","pidDomain":"linux:<machine-id>:pid:[4026531836]","asksForConvertedSkills":null,
 "messagingSocketPath":"/tmp/cc-socks/10718.sock","name":"work-e9","nameSource":"derived","nameSince":1796065828540,
 "status":"busy","updatedAt":1796065828520,"statusUpdatedAt":1796065828520}`

func keys(t *testing.T, b []byte) []string {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestRowLikeReal: the fake writes the keys the real CLI writes, with a
// live pid and that pid's real procStart, in a 0700 dir with a 0644 file.
func TestRowLikeReal(t *testing.T) {
	s := fakestation.New(t)
	row := s.AddSession(fakestation.Session{CWD: "/home/u/proj"})
	path := filepath.Join(s.Paths.SessionsDir, strconv.Itoa(row.PID)+".json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(keys(t, []byte(realRow)), keys(t, b)); diff != "" {
		t.Errorf("row keys (-real +fake):\n%s", diff)
	}
	info, err := (station.Proc{}).Info(row.PID)
	if err != nil {
		t.Fatal(err)
	}
	if row.ProcStart != info.StartTicks || row.PID == os.Getpid() {
		t.Errorf("row pid %d procStart %s, want a process of its own (not %d) with its start %s", row.PID, row.ProcStart, os.Getpid(), info.StartTicks)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("row mode %o, want 644", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(s.Paths.SessionsDir); fi.Mode().Perm() != 0o700 {
		t.Errorf("sessions dir mode %o, want 700", fi.Mode().Perm())
	}
	if !regexp.MustCompile(`^proj-[0-9a-f]{2}$`).MatchString(row.Name) || row.NameSource != "derived" {
		t.Errorf("derived name %q (%s), want proj-<2 hex> (the cwd's base and two hex digits)", row.Name, row.NameSource)
	}
	live, err := s.Station().Live()
	if err != nil || len(live) != 1 || live[0].SessionID != row.SessionID {
		t.Errorf("station sees %v, %v; want the one live row", live, err)
	}
}

func TestKnobsPointIntoRoot(t *testing.T) {
	s := fakestation.New(t)
	p, err := station.PathsFromEnv(s.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.Paths, p); diff != "" {
		t.Errorf("paths from the fake's knobs (-fake +read):\n%s", diff)
	}
}

// TestSeveralSessions: each session gets a live process of its own, a
// second session never replaces the first, removing one stops only its
// process, a crash leaves the row of a dead process, and Close stops the
// rest.
func TestSeveralSessions(t *testing.T) {
	s := fakestation.New(t)
	a := s.AddSession(fakestation.Session{Name: "alpha"})
	b := s.AddSession(fakestation.Session{Name: "beta"})
	c := s.AddSession(fakestation.Session{Name: "gamma"})
	if a.PID == b.PID || b.PID == c.PID || a.PID == c.PID {
		t.Fatalf("pids %d %d %d: want one each", a.PID, b.PID, c.PID)
	}
	names := func() []string {
		live, err := s.Station().Live()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range live {
			out = append(out, l.Name)
		}
		sort.Strings(out)
		return out
	}
	if diff := cmp.Diff([]string{"alpha", "beta", "gamma"}, names()); diff != "" {
		t.Errorf("live sessions (-want +got):\n%s", diff)
	}
	s.RemoveSession(a.PID)
	s.Crash(b.PID)
	proc := station.Proc{}
	if proc.Alive(a.PID, a.ProcStart) || proc.Alive(b.PID, b.ProcStart) || !proc.Alive(c.PID, c.ProcStart) {
		t.Errorf("alive: a %v b %v c %v, want false false true", proc.Alive(a.PID, a.ProcStart), proc.Alive(b.PID, b.ProcStart), proc.Alive(c.PID, c.ProcStart))
	}
	if _, err := os.Stat(filepath.Join(s.Paths.SessionsDir, strconv.Itoa(b.PID)+".json")); err != nil {
		t.Errorf("a crash must leave the row behind: %v", err)
	}
	if diff := cmp.Diff([]string{"gamma"}, names()); diff != "" {
		t.Errorf("live sessions after remove and crash (-want +got):\n%s", diff)
	}
	s.Close()
	if proc.Alive(c.PID, c.ProcStart) {
		t.Errorf("Close left pid %d running", c.PID)
	}
}

// TestSamePIDTwice: a second row for a pid that has one fails the test
// instead of replacing the first.
func TestSamePIDTwice(t *testing.T) {
	ft := &fatalTB{TB: t}
	st := fakestation.New(ft)
	st.AddSession(fakestation.Session{PID: os.Getpid(), Name: "one"})
	func() {
		defer func() { recover() }()
		st.AddSession(fakestation.Session{PID: os.Getpid(), Name: "two"})
	}()
	if ft.fatals != 1 {
		t.Errorf("fatals = %d, want 1 (the second row for pid %d)", ft.fatals, os.Getpid())
	}
	live, _ := st.Station().Live()
	if len(live) != 1 || live[0].Name != "one" {
		t.Errorf("live = %+v, want only the first session", live)
	}
}

// fatalTB records Fatal calls and stops the caller with a panic.
type fatalTB struct {
	testing.TB
	fatals int
}

func (f *fatalTB) Fatal(args ...any)                 { f.fatals++; panic("fatal") }
func (f *fatalTB) Fatalf(format string, args ...any) { f.fatals++; panic("fatal") }

// A nil Station does nothing and answers "" and nil, as its doc says, and
// a zero one does nothing: neither panics.
func TestNilAndZeroStation(t *testing.T) {
	for name, s := range map[string]*fakestation.Station{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			s.AddSession(fakestation.Session{Name: "x"})
			s.RemoveSession(1)
			s.Crash(1)
			s.Close()
			if name == "nil" && (s.Getenv("HOME") != "" || s.Env() != nil || s.InboxPath("x") != "" || s.Station() != nil) {
				t.Errorf("a nil Station answered %q %v %q %v", s.Getenv("HOME"), s.Env(), s.InboxPath("x"), s.Station())
			}
		})
	}
}
