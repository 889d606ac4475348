package headless_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/claudeproc"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/fakes/fakestation"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	fakeclaude.Main()
	goleak.VerifyTestMain(m)
}

const sid = "0b5c8a1e-1111-4222-8333-444455556666"

func TestParseResult(t *testing.T) {
	r := func(s string) *string { return &s }
	tests := []struct {
		name string
		in   string
		ok   bool
		want headless.ClaudeResult
	}{
		{"one object", `{"type":"result","subtype":"success","is_error":false,"result":"PONG","session_id":"s","num_turns":1,"total_cost_usd":0.02}`,
			true, headless.ClaudeResult{Type: "result", Subtype: "success", Result: r("PONG"), SessionID: "s", NumTurns: 1, TotalCostUSD: 0.02}},
		{"noise before", "warning: x\n{\"type\":\"system\"}\n{\"type\":\"result\",\"session_id\":\"s\",\"result\":null,\"is_error\":true}\n",
			true, headless.ClaudeResult{Type: "result", SessionID: "s", IsError: true}},
		{"wrong field type kept others", `{"type":"result","num_turns":"two","session_id":"s"}`,
			true, headless.ClaudeResult{Type: "result", SessionID: "s"}},
		{"empty", "", false, headless.ClaudeResult{}},
		{"not json", "Error: boom\n", false, headless.ClaudeResult{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := headless.ParseResult([]byte(tt.in))
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// ParseResult never panics; what it finds is a result or names a session,
// and a result line printed after any output is the one found.
func FuzzParseResult(f *testing.F) {
	f.Add([]byte(`{"type":"result","session_id":"s"}`))
	f.Add([]byte("x\n{\"type\":\"result\",\"errors\":[1]}\n{"))
	f.Add([]byte(`{"type":"result","result":null,"errors":null,"origin":{"kind":"x"}}` + "\r\n{\"session_id\":\"t\"}"))
	last := []byte(`{"type":"result","subtype":"success","is_error":false,"result":"PONG","session_id":"s","num_turns":1,"total_cost_usd":0.02,"errors":["e"]}`)
	want, ok := headless.ParseResult(last)
	if !ok {
		f.Fatal("the last line does not parse")
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := headless.ParseResult(b)
		if !ok && r.Type != "" {
			t.Fatal("not ok but filled")
		}
		if ok && r.Type != "result" && r.SessionID == "" {
			t.Fatalf("found %+v: neither a result nor a session", r)
		}
		got, ok := headless.ParseResult(append(append(append([]byte{}, b...), '\n'), last...))
		if !ok {
			t.Fatalf("the result line after %q is not found", b)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("after %q (-want +got):\n%s", b, d)
		}
	})
}

// newRunner returns a runner on a fake station whose claude is the fake.
func newRunner(t *testing.T) (*headless.Runner, *fakestation.Station, *fakeclaude.Fakes) {
	fs := fakestation.New(t)
	fk := fakeclaude.Install(t)
	cfg := station.DefaultConfig(fs.Paths)
	cfg.ClaudeBin, cfg.SystemdRun = fk.Claude, fk.SystemdRun
	env := append(fs.Env(), "PATH=/usr/bin:/bin")
	return &headless.Runner{Config: cfg, Environ: func() []string { return env }, KillGrace: 300 * time.Millisecond}, fs, fk
}

// addTranscript writes a transcript for sid recorded in cwd.
func addTranscript(t *testing.T, fs *fakestation.Station, sid, cwd string) {
	t.Helper()
	real, _ := filepath.EvalSymlinks(cwd)
	dir := filepath.Join(fs.Paths.ProjectsDir, encode(real))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	row := fmt.Sprintf(`{"type":"user","sessionId":%q,"cwd":%q,"message":{"role":"user","content":"hi"}}`+"\n", sid, real)
	if err := os.WriteFile(filepath.Join(dir, sid+".jsonl"), []byte(row), 0o600); err != nil {
		t.Fatal(err)
	}
}

func encode(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, s)
}

func TestResumeRefusalsAndHolds(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(t *testing.T, fs *fakestation.Station, r *headless.Runner)
		req    headless.ResumeRequest
		class  headless.Class
		heldBy string
		err    error
	}{
		{"dash line", nil, headless.ResumeRequest{SessionID: sid, Line: "--dangerously-skip-permissions"}, headless.Refused, "", headless.ErrBadLine},
		{"newline", nil, headless.ResumeRequest{SessionID: sid, Line: "a\nb"}, headless.Refused, "", headless.ErrBadLine},
		{"bad id", nil, headless.ResumeRequest{SessionID: "../etc", Line: "hi"}, headless.Refused, "", headless.ErrBadSessionID},
		{"no transcript", nil, headless.ResumeRequest{Self: "/opt/oo/oo-claude", SessionID: sid, Line: "hi"}, headless.Refused, "", headless.ErrNoTranscript},
		{"two transcripts", func(t *testing.T, fs *fakestation.Station, r *headless.Runner) {
			addTranscript(t, fs, sid, t.TempDir())
			addTranscript(t, fs, sid, t.TempDir())
		}, headless.ResumeRequest{Self: "/opt/oo/oo-claude", SessionID: sid, Line: "hi"}, headless.Refused, "", transcript.ErrAmbiguous},
		{"cwd mismatch", func(t *testing.T, fs *fakestation.Station, r *headless.Runner) {
			addTranscript(t, fs, sid, t.TempDir())
		}, headless.ResumeRequest{Self: "/opt/oo/oo-claude", SessionID: sid, Line: "hi", CWD: "/"}, headless.Refused, "", headless.ErrCWDMismatch},
		{"registry row", func(t *testing.T, fs *fakestation.Station, r *headless.Runner) {
			fs.AddSession(fakestation.Session{SessionID: sid})
		}, headless.ResumeRequest{Self: "/opt/oo/oo-claude", SessionID: sid, Line: "hi"}, headless.HeldBySession, headless.HeldByRegistry, nil},
		{"lock", func(t *testing.T, fs *fakestation.Station, r *headless.Runner) {
			l, err := fsx.TryLock(claudeproc.ResumeLockPath(fs.Paths, sid))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Unlock() })
		}, headless.ResumeRequest{Self: "/opt/oo/oo-claude", SessionID: sid, Line: "hi"}, headless.HeldBySession, headless.HeldByLock, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, fs, fk := newRunner(t)
			if tt.setup != nil {
				tt.setup(t, fs, r)
			}
			res, err := r.Resume(context.Background(), tt.req)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			var re *headless.RefusedError
			if tt.err != nil && !errors.As(err, &re) {
				t.Errorf("err %T is not a *RefusedError", err)
			}
			if res.Class != tt.class || res.HeldBy != tt.heldBy {
				t.Errorf("class %s held by %q, want %s %q (%s)", res.Class, res.HeldBy, tt.class, tt.heldBy, res.Reason)
			}
			if n := len(fk.Calls("claude")); n != 0 {
				t.Errorf("claude ran %d times", n)
			}
		})
	}
}

func TestResumeTimeoutStopsProcessGroup(t *testing.T) {
	r, fs, fk := newRunner(t)
	sid := uuid.NewString() // the process scan sees other runs of this test too
	cwd := t.TempDir()
	addTranscript(t, fs, sid, cwd)
	fk.Script(fakeclaude.Script{DelayMS: 60_000, Grandchild: true, IgnoreTERM: true})
	// The timeout must fire after the fake claude has recorded its call
	// and started its grandchild; on a loaded machine a re-executed race
	// binary takes more than half a second for that, so the bound is
	// generous (the fake waits 60 s, so the run times out either way).
	res, err := r.Resume(context.Background(), headless.ResumeRequest{Self: "/opt/oo/oo-claude", SessionID: sid, Line: "hi", Timeout: 10 * time.Second})
	if err != nil || res.Class != headless.Timeout || res.Class.ExitCode() != 5 {
		t.Fatalf("class %s (%v), want timeout", res.Class, err)
	}
	calls := fk.Calls("claude")
	if len(calls) != 1 || calls[0].Grandchild == 0 {
		t.Fatalf("calls %+v", calls)
	}
	for _, pid := range []int{calls[0].PID, calls[0].Grandchild} {
		if (station.Proc{}).Alive(pid, "") {
			t.Errorf("pid %d survived the timeout", pid)
		}
	}
}

func ExampleRunner_Resume() {
	// A runner whose claude never runs: the line is refused first.
	r := &headless.Runner{Config: station.DefaultConfig(station.Paths{StateDir: os.TempDir()})}
	res, err := r.Resume(context.Background(), headless.ResumeRequest{SessionID: sid, Line: "-p"})
	var refused *headless.RefusedError
	if errors.As(err, &refused) {
		fmt.Println(res.Class, res.Class.ExitCode(), refused.Reason)
	}
	// Output: refused 1 bad-line
}
