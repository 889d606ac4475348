package station_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/station"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want station.ProcInfo
		err  bool
	}{
		{"plain", "42 (claude) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 11 0 92840 1000 10 ...", station.ProcInfo{PID: 42, PPID: 7, PGRP: 42, Comm: "claude", State: 'S', StartTicks: "92840"}, false},
		{"comm with paren and space", "9 (a) b (c)) R 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", station.ProcInfo{PID: 9, PPID: 1, PGRP: 9, Comm: "a) b (c)", State: 'R', StartTicks: "5"}, false},
		{"zombie", "3 (x) Z 2 3 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0", station.ProcInfo{PID: 3, PPID: 2, PGRP: 3, Comm: "x", State: 'Z', StartTicks: "77"}, false},
		{"truncated", "3 (x) S 2 3", station.ProcInfo{}, true},
		{"no paren", "3 x S 2 3 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77", station.ProcInfo{}, true},
		{"empty", "", station.ProcInfo{}, true},
		// Found by FuzzParseStat: pid 0 and negative parent pids were taken.
		{"pid 0", "0 (x) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0", station.ProcInfo{}, true},
		{"negative pid", "-3 (x) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0", station.ProcInfo{}, true},
		{"negative ppid", "3 (x) S -1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0", station.ProcInfo{}, true},
		{"process group not a number", "3 (x) S 1 g 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0", station.ProcInfo{}, true},
		{"init's parent is 0", "1 (systemd) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 2 0 0", station.ProcInfo{PID: 1, PGRP: 1, Comm: "systemd", State: 'S', StartTicks: "2"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := station.ParseStat([]byte(tt.in))
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if tt.err && !errors.Is(err, station.ErrBadStat) {
				t.Fatalf("err = %v, want ErrBadStat", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseStat (-want +got):\n%s", diff)
			}
		})
	}
}

// ParseStat never panics; what it accepts has a pid, a parent pid that is
// 0 or more and a decimal start time, and a
// stat line the kernel could write parses back to its fields whatever the
// comm holds (spaces, parentheses).
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("42 (claude) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 11 0 92840 1000 10"), 42, 7, "claude", byte('S'), uint64(92840))
	f.Add([]byte("1 ()) ) S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0"), 1, 0, ") (x", byte('Z'), uint64(0))
	f.Fuzz(func(t *testing.T, b []byte, pid, ppid int, comm string, state byte, start uint64) {
		info, err := station.ParseStat(b)
		if err != nil {
			if !errors.Is(err, station.ErrBadStat) {
				t.Fatalf("error %v is not ErrBadStat", err)
			}
		} else if _, perr := strconv.ParseUint(info.StartTicks, 10, 64); perr != nil || info.State == ' ' || info.PID <= 0 || info.PPID < 0 || info.PGRP < 0 {
			t.Fatalf("accepted %q as %+v", b, info)
		}
		// The kernel's comm is at most 15 bytes with no newline; state is
		// one letter.
		if pid <= 0 || ppid < 0 || len(comm) > 15 || strings.ContainsAny(comm, "\n") || state < 'A' || state > 'Z' {
			return
		}
		want := station.ProcInfo{PID: pid, PPID: ppid, Comm: comm, State: state, StartTicks: strconv.FormatUint(start, 10)}
		line := fmt.Sprintf("%d (%s) %c %d 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, comm, state, ppid, start)
		got, err := station.ParseStat([]byte(line))
		if err != nil {
			t.Fatalf("ParseStat(%q): %v", line, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("ParseStat(%q) (-want +got):\n%s", line, diff)
		}
	})
}

func TestProcRealSelf(t *testing.T) {
	var p station.Proc
	self, err := p.Info(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.PPID != os.Getppid() {
		t.Errorf("PPID = %d, want %d", self.PPID, os.Getppid())
	}
	if !p.Alive(os.Getpid(), self.StartTicks) {
		t.Error("own process not alive with its own procStart")
	}
	if p.Alive(os.Getpid(), self.StartTicks+"1") {
		t.Error("alive with a wrong procStart")
	}
	chain, err := p.Ancestors(os.Getpid())
	if err != nil || len(chain) == 0 || chain[0].PID != os.Getppid() {
		t.Fatalf("Ancestors = %v, %v", chain, err)
	}
	if !p.IsDescendant(os.Getpid(), os.Getppid(), "") {
		t.Error("not a descendant of the parent")
	}
	if p.IsDescendant(os.Getppid(), os.Getpid(), "") {
		t.Error("parent reported as descendant of child")
	}
	if _, err := p.Info(1 << 30); !errors.Is(err, station.ErrNoProcess) {
		t.Errorf("Info(huge) err = %v, want ErrNoProcess", err)
	}
}

func TestProcFakeRoot(t *testing.T) {
	root := t.TempDir()
	write := func(pid, ppid int, comm string, start int) {
		d := filepath.Join(root, strconv.Itoa(pid))
		os.MkdirAll(d, 0o700)
		line := fmt.Sprintf("%d (%s) S %d 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, comm, ppid, start)
		os.WriteFile(filepath.Join(d, "stat"), []byte(line), 0o600)
	}
	write(1, 0, "init", 1)
	write(100, 1, "claude", 500)
	write(200, 100, "oo-claude", 600)
	write(300, 200, "bash", 700)
	p := station.Proc{Root: root}
	chain, err := p.Ancestors(300)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, c := range chain {
		pids = append(pids, c.PID)
	}
	if diff := cmp.Diff([]int{200, 100, 1}, pids); diff != "" {
		t.Errorf("ancestors (-want +got):\n%s", diff)
	}
	if !p.IsDescendant(300, 100, "500") || p.IsDescendant(300, 100, "501") {
		t.Error("IsDescendant ignores procStart")
	}
}

// spawn starts a long sleeper whose pid can carry a registry row.
func spawn(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

func TestResolve(t *testing.T) {
	fs := fakestation.New(t)
	a := fs.AddSession(fakestation.Session{PID: spawn(t), SessionID: "017c3f59-43cc-4dc8-bfb6-5e9a5625a864", Name: "work-e9"})
	b := fs.AddSession(fakestation.Session{PID: spawn(t), SessionID: "017c3f59-ffff-4dc8-bfb6-5e9a5625a865", Name: "work-f1"})
	c := fs.AddSession(fakestation.Session{PID: spawn(t), SessionID: "9a9a9a9a-1111-4dc8-bfb6-5e9a5625a866", Name: "builder"})
	dead := fs.AddSession(fakestation.Session{PID: spawn(t), SessionID: "deadbeef-1111-4dc8-bfb6-5e9a5625a867", Name: "ghost", ProcStart: "1"})
	// All-digit targets that are no live pid: a session named 2026, an id
	// whose 8-character prefix is digits alone, and a name that is the pid
	// of another live session (the pid wins).
	year := fs.AddSession(fakestation.Session{PID: spawn(t), SessionID: "6b1f0c2e-2222-4dc8-bfb6-5e9a5625a868", Name: "2026"})
	digits := fs.AddSession(fakestation.Session{PID: spawn(t), SessionID: "12345678-3333-4dc8-bfb6-5e9a5625a869", Name: "numbers"})
	pidName := fs.AddSession(fakestation.Session{PID: spawn(t), SessionID: "7c7c7c7c-4444-4dc8-bfb6-5e9a5625a86a", Name: strconv.Itoa(a.PID)})
	st := fs.Station()

	tests := []struct {
		target  string
		want    string
		running bool
		how     string
		err     error
	}{
		{a.SessionID, a.SessionID, true, station.MatchID, nil},
		{strings.ToUpper(a.SessionID), a.SessionID, true, station.MatchID, nil},
		{strconv.Itoa(b.PID), b.SessionID, true, station.MatchPID, nil},
		{"work-e9", a.SessionID, true, station.MatchName, nil},
		{"build", c.SessionID, true, station.MatchFragment, nil},
		{"9a9a9a9a", c.SessionID, true, station.MatchPrefix, nil},
		{"017c3f59", "", false, "", station.ErrAmbiguousTarget},
		{"017c3f59-43", a.SessionID, true, station.MatchPrefix, nil},
		{"work", "", false, "", station.ErrAmbiguousTarget},
		{"wor", "", false, "", station.ErrUnknownTarget},     // fragment too short
		{"9a9a9a9", "", false, "", station.ErrUnknownTarget}, // prefix too short, no name holds it
		{"nobody", "", false, "", station.ErrUnknownTarget},
		{"ghost", "", false, "", station.ErrUnknownTarget}, // dead rows are not targets
		{strconv.Itoa(dead.PID), "", false, "", station.ErrUnknownTarget},
		{dead.SessionID, dead.SessionID, false, station.MatchID, nil}, // offline: by full id only
		// Found wanting (issue 10): an all-digit target that names no
		// live pid was "unknown" without trying the other rules.
		{"2026", year.SessionID, true, station.MatchName, nil},
		{"12345678", digits.SessionID, true, station.MatchPrefix, nil},
		{"123456783333", "", false, "", station.ErrUnknownTarget}, // digits, no pid, no prefix (the dash is missing)
		{"12345678-3333", digits.SessionID, true, station.MatchPrefix, nil},
		{strconv.Itoa(a.PID), a.SessionID, true, station.MatchPID, nil}, // a live pid wins over a name
		{strconv.Itoa(pidName.PID), pidName.SessionID, true, station.MatchPID, nil},
		{"+" + strconv.Itoa(b.PID), "", false, "", station.ErrUnknownTarget}, // a pid has no sign
		{"0" + strconv.Itoa(b.PID), "", false, "", station.ErrUnknownTarget}, // nor a leading zero
		{"0", "", false, "", station.ErrUnknownTarget},
		{"../etc/passwd", "", false, "", station.ErrBadTarget},
		{"", "", false, "", station.ErrBadTarget},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			got, err := st.Resolve(tt.target)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				var te *station.TargetError
				if !errors.As(err, &te) || te.Target == "" && tt.target != "" {
					t.Fatalf("err %v is not a *TargetError naming the target", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.SessionID != tt.want || got.Running != tt.running || got.MatchedBy != tt.how {
				t.Errorf("Resolve = %+v, want id %s running %v by %s", got, tt.want, tt.running, tt.how)
			}
			if got.Running != (got.Session != nil) {
				t.Errorf("Running %v but Session %v", got.Running, got.Session)
			}
		})
	}
	var te *station.TargetError
	_, err := st.Resolve("work")
	if !errors.As(err, &te) || len(te.Candidates) != 2 {
		t.Errorf("ambiguous candidates = %+v", te)
	}
}

func TestSessionsLiveness(t *testing.T) {
	fs := fakestation.New(t)
	live := fs.AddSession(fakestation.Session{PID: spawn(t)})
	recycled := fs.AddSession(fakestation.Session{PID: spawn(t), ProcStart: "12345"})
	cmd := exec.Command("true")
	cmd.Run()
	gone := fs.AddSession(fakestation.Session{PID: cmd.Process.Pid, ProcStart: "99"})
	os.WriteFile(filepath.Join(fs.Paths.SessionsDir, "777.json"), []byte("{torn"), 0o644)
	os.WriteFile(filepath.Join(fs.Paths.SessionsDir, "778.json"), []byte(`{"pid":778,"sessionId":"../../x"}`), 0o644)

	st := fs.Station()
	all, err := station.Sessions(st)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range all {
		got[s.SessionID] = s.Live
	}
	want := map[string]bool{live.SessionID: true, recycled.SessionID: false, gone.SessionID: false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("liveness (-want +got):\n%s", diff)
	}
	if _, ok := st.LiveByPID(recycled.PID); ok {
		t.Error("LiveByPID accepted a row with a foreign procStart")
	}
	if s, ok := st.LiveByPID(live.PID); !ok || s.SessionID != live.SessionID {
		t.Errorf("LiveByPID = %+v, %v", s, ok)
	}
}

func TestPeerTokenNeverPrinted(t *testing.T) {
	fs := fakestation.New(t)
	row := fs.AddSession(fakestation.Session{})
	const secret = "0123456789abcdef0123456789abcdef"
	fs.WriteKey(row, secret)
	tok, err := fs.Station().PeerToken(row)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Reveal() != secret {
		t.Fatal("Reveal does not return the token")
	}
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%v %s %q %#v %+v %x", tok, tok, tok, tok, tok, tok), tok.String()} {
		if strings.Contains(s, secret) || strings.Contains(s, "0123456789abcdef") {
			t.Errorf("token printed: %s", s)
		}
	}
	row.ProcStart = "1"
	if _, err := fs.Station().PeerToken(row); !errors.Is(err, station.ErrNoToken) {
		t.Errorf("key of another procStart: err = %v, want ErrNoToken", err)
	}
}

func TestPathsFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	got, err := station.PathsFromEnv(env(map[string]string{"HOME": "/h"}))
	if err != nil {
		t.Fatal(err)
	}
	want := station.Paths{ConfigDir: "/h/.claude", SessionsDir: "/h/.claude/sessions", ProjectsDir: "/h/.claude/projects",
		InboxDir: "/h/.zcode/tmp/claude-inbox", StateDir: "/h/.local/state/oo-claude", ObservatoryDir: "/h/.zcode/tmp/claude-observatory"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	got, _ = station.PathsFromEnv(env(map[string]string{"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c", "OO_CLAUDE_PROJECTS_DIR": "/p", "OO_CLAUDE_INBOX_DIR": "/i/"}))
	if got.SessionsDir != "/c/sessions" || got.ProjectsDir != "/p" || got.InboxDir != "/i" {
		t.Errorf("knobs not honoured: %+v", got)
	}
	if _, err := station.PathsFromEnv(env(nil)); !errors.Is(err, station.ErrNoHome) {
		t.Errorf("no HOME: err = %v", err)
	}
}

func TestConfigFromEnv(t *testing.T) {
	m := map[string]string{"HOME": "/h", "OO_CLAUDE_WAIT_S": "0.5", "OO_CLAUDE_MIN_INTERVAL_S": "0", "OO_CLAUDE_DOORMAN": "0", "OO_CLAUDE_BIN": "/opt/claude"}
	c, err := station.ConfigFromEnv(func(k string) string { return m[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Wait != 500*time.Millisecond || c.MinInterval != 0 || c.DoormanEnabled || c.ClaudeBin != "/opt/claude" || c.StartTimeout != 900*time.Second {
		t.Errorf("config = %+v", c)
	}
	m["OO_CLAUDE_WAIT_S"] = "soon"
	m["OO_CLAUDE_BIN"] = "claude"
	_, err = station.ConfigFromEnv(func(k string) string { return m[k] })
	var ke *station.KnobError
	if !errors.As(err, &ke) || !errors.Is(err, station.ErrBadKnob) {
		t.Fatalf("err = %v, want *KnobError", err)
	}
	if !strings.Contains(err.Error(), "OO_CLAUDE_WAIT_S") || !strings.Contains(err.Error(), "OO_CLAUDE_BIN") {
		t.Errorf("err %q does not name both knobs", err)
	}
}

// TestDoormanPythonKnobAccepted: v0.1's OO_CLAUDE_DOORMAN_PYTHON is a knob
// a station may still set; any value is accepted and changes nothing.
func TestDoormanPythonKnobAccepted(t *testing.T) {
	base, err := station.ConfigFromEnv(func(k string) string { return map[string]string{"HOME": "/h"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"/usr/bin/python3", "python3", "not a path"} {
		m := map[string]string{"HOME": "/h", "OO_CLAUDE_DOORMAN_PYTHON": v}
		c, err := station.ConfigFromEnv(func(k string) string { return m[k] })
		if err != nil {
			t.Errorf("OO_CLAUDE_DOORMAN_PYTHON=%q: %v", v, err)
		}
		if diff := cmp.Diff(base, c); diff != "" {
			t.Errorf("OO_CLAUDE_DOORMAN_PYTHON=%q changed the config (-want +got):\n%s", v, diff)
		}
	}
}

// Found with FuzzConfigFromEnv: NaN passed the bound checks (a duration of
// about -292 years) and a tiny positive value became 0 s where 0 is not
// allowed.
func TestConfigFromEnvRefusesNaNAndTiny(t *testing.T) {
	tests := []struct{ knob, value string }{
		{"OO_CLAUDE_WAIT_S", "NaN"},
		{"OO_CLAUDE_RESUME_TIMEOUT_S", "nan"},
		{"OO_CLAUDE_DOORMAN_POLL_S", "1e-300"},
		{"OO_CLAUDE_DOORMAN_HEARTBEAT_S", "0.0000000001"},
	}
	for _, tt := range tests {
		t.Run(tt.knob+"="+tt.value, func(t *testing.T) {
			m := map[string]string{"HOME": "/h", tt.knob: tt.value}
			_, err := station.ConfigFromEnv(func(k string) string { return m[k] })
			var ke *station.KnobError
			if !errors.As(err, &ke) || !errors.Is(err, station.ErrBadKnob) || ke.Knob != tt.knob {
				t.Fatalf("err = %v, want a *KnobError for %s", err, tt.knob)
			}
		})
	}
	m := map[string]string{"HOME": "/h", "OO_CLAUDE_WAIT_S": "1e-300"} // 0 is allowed for the wait
	if c, err := station.ConfigFromEnv(func(k string) string { return m[k] }); err != nil || c.Wait != 0 {
		t.Fatalf("wait 1e-300: %v, %v", c.Wait, err)
	}
}

// TestCallingSession: the nearest ancestor with a live row wins (with its
// host id), then the env's session id when it is one; pid 0 skips the walk.
func TestCallingSession(t *testing.T) {
	fs := fakestation.New(t)
	root := t.TempDir()
	write := func(pid, ppid, start int) {
		d := filepath.Join(root, strconv.Itoa(pid))
		os.MkdirAll(d, 0o700)
		line := fmt.Sprintf("%d (x) S %d 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, ppid, start)
		os.WriteFile(filepath.Join(d, "stat"), []byte(line), 0o600)
	}
	write(1, 0, 1)
	write(100, 1, 500) // the outer session
	write(200, 100, 600)
	write(300, 200, 700) // the inner session
	write(400, 300, 800) // the caller
	write(900, 1, 900)   // outside every session
	const outer, inner, env = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"
	fs.WriteRow(station.Row{PID: 100, SessionID: outer, ProcStart: "500"})
	fs.WriteRow(station.Row{PID: 300, SessionID: inner, ProcStart: "700", HostSessionID: "local_x"})
	st := &station.Station{Paths: fs.Paths, Proc: station.Proc{Root: root}}
	tests := []struct {
		name               string
		pid                int
		env                string
		sid, host, foundBy string
	}{
		{"nearest ancestor", 400, env, inner, "local_x", "ancestor"},
		{"not itself", 300, "", outer, "", "ancestor"},
		{"env when no ancestor", 900, env, env, "", "env"},
		{"pid 0 skips the walk", 0, env, env, "", "env"},
		{"env not a session id", 900, "not-a-uuid", "", "", ""},
		{"no process", 12345, "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sid, host, by := st.CallingSession(tt.pid, tt.env)
			if diff := cmp.Diff([]string{tt.sid, tt.host, tt.foundBy}, []string{sid, host, by}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
