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
	info, err := (station.Proc{}).Info(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if row.ProcStart != info.StartTicks || row.PID != os.Getpid() {
		t.Errorf("row pid %d procStart %s, want %d %s", row.PID, row.ProcStart, os.Getpid(), info.StartTicks)
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
