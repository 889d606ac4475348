package headless_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/claudeproc"
	"github.com/oo-family/oo-claude/internal/jsonrow"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
)

const self = "/opt/oo/oo-claude"

// NaN and the infinities are refused before anything runs, and the refusal
// still writes its receipt (a NaN in it would make it unwritable JSON).
func TestNonFiniteBudgetIsRefused(t *testing.T) {
	for _, b := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		r, fs, fk := newRunner(t)
		r.Receipts = &receipt.Writer{Path: filepath.Join(fs.Paths.StateDir, "receipts.jsonl")}
		sid := uuid.NewString()
		addTranscript(t, fs, sid, t.TempDir())
		res, err := r.Resume(context.Background(), headless.ResumeRequest{Self: self, SessionID: sid, Line: "hi", Budget: b})
		if !errors.Is(err, headless.ErrBadLimits) || res.Class != headless.Refused || res.ReceiptWriteError != nil {
			t.Errorf("resume budget %v: class %s err %v receipt error %v", b, res.Class, err, res.ReceiptWriteError)
		}
		sres, err := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), Budget: b, Self: self})
		if !errors.Is(err, headless.ErrBadLimits) || sres.Class != headless.Refused || sres.ReceiptWriteError != nil {
			t.Errorf("start budget %v: class %s err %v receipt error %v", b, sres.Class, err, sres.ReceiptWriteError)
		}
		if _, err := json.Marshal(sres.File); err != nil {
			t.Errorf("start budget %v: the result file is not JSON: %v", b, err)
		}
		if n := len(fk.Calls("claude")); n != 0 {
			t.Errorf("budget %v: claude ran %d times", b, n)
		}
	}
}

// A registry that cannot be read refuses resume and start --session-id:
// never read as "no session runs".
func TestUnreadableRegistryRefuses(t *testing.T) {
	r, fs, fk := newRunner(t)
	sid := uuid.NewString()
	addTranscript(t, fs, sid, t.TempDir())
	if err := os.RemoveAll(fs.Paths.SessionsDir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fs.Paths.SessionsDir, []byte("not a dir"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := r.Resume(context.Background(), headless.ResumeRequest{Self: self, SessionID: sid, Line: "hi"})
	if !errors.Is(err, headless.ErrRegistryUnreadable) || res.Class != headless.Refused {
		t.Errorf("resume: class %s err %v, want refused: registry unreadable", res.Class, err)
	}
	sres, err := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: uuid.NewString(), Self: self})
	if !errors.Is(err, headless.ErrRegistryUnreadable) || sres.Class != headless.Refused {
		t.Errorf("start: class %s err %v, want refused: registry unreadable", sres.Class, err)
	}
	if n := len(fk.Calls("claude")); n != 0 {
		t.Errorf("claude ran %d times beside an unreadable registry", n)
	}
}

// Two starts with one --session-id at once: one runs claude, the other is
// refused; a start beside a claude process that names the id is refused.
func TestStartSessionIDOneDriver(t *testing.T) {
	r, _, fk := newRunner(t)
	fk.Script(fakeclaude.Script{DelayMS: 1500})
	sid := uuid.NewString()
	var wg sync.WaitGroup
	results := make([]headless.StartResult, 2)
	errs := make([]error, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: sid, Self: self,
				Out: filepath.Join(t.TempDir(), "r.json")})
		}()
	}
	wg.Wait()
	classes := []headless.Class{results[0].Class, results[1].Class}
	if n := len(fk.Calls("claude")); n != 1 {
		t.Errorf("claude ran %d times for one session id (classes %v), want 1", n, classes)
	}
	// The winner completes; the loser is refused session-in-use, exit 1
	// (start's class for a session another driver holds, as README says;
	// resume's is held-by-session, exit 3), its error ErrSessionInUse.
	win, lose := 0, 1
	if results[1].Class == headless.Completed {
		win, lose = 1, 0
	}
	if got := results[win]; got.Class != headless.Completed || got.Class.ExitCode() != 0 || errs[win] != nil {
		t.Errorf("winner: class %s exit %d err %v, want completed, exit 0", got.Class, got.Class.ExitCode(), errs[win])
	}
	if got := results[lose]; got.Class != headless.Refused || got.Class.ExitCode() != 1 || got.Reason != "session-in-use" || !errors.Is(errs[lose], headless.ErrSessionInUse) {
		t.Errorf("loser: class %s exit %d reason %q err %v, want refused session-in-use, exit 1", got.Class, got.Class.ExitCode(), got.Reason, errs[lose])
	}

	other := uuid.NewString()
	cmd := exec.Command(fk.Claude, "-pr", other, "working") // a resume as the real CLI parses it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	fk.WaitCalls(ctxT(t, 60*time.Second), "claude", 2)
	res, err := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: other, Self: self})
	if !errors.Is(err, headless.ErrSessionInUse) || res.Class != headless.Refused {
		t.Errorf("start beside a process naming the id: class %s err %v, want refused session-in-use", res.Class, err)
	}
}

// resume --cwd takes a relative path as start --cwd does.
func TestResumeRelativeCWD(t *testing.T) {
	r, fs, fk := newRunner(t)
	sid := uuid.NewString()
	cwd := t.TempDir()
	addTranscript(t, fs, sid, cwd)
	t.Chdir(filepath.Dir(cwd))
	res, err := r.Resume(context.Background(), headless.ResumeRequest{Self: self, SessionID: sid, Line: "hi", CWD: filepath.Base(cwd)})
	if err != nil || res.Class != headless.DeliveredResume {
		t.Fatalf("class %s err %v, want delivered-resume", res.Class, err)
	}
	if c := fk.Calls("claude"); len(c) != 1 || c[0].Dir != res.CWD || !filepath.IsAbs(res.CWD) {
		t.Errorf("claude ran in %v, cwd %s", c, res.CWD)
	}
}

// A failed start leaves no empty inbox behind; a completed one keeps it.
func TestFailedStartLeavesNoInbox(t *testing.T) {
	r, fs, fk := newRunner(t)
	fk.Script(fakeclaude.Script{IsError: true, Exit: 1})
	sid := uuid.NewString()
	res, _ := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: sid, Self: self})
	if res.Class != headless.Failed {
		t.Fatalf("class %s, want failed", res.Class)
	}
	if _, err := os.Stat(fs.InboxPath(sid)); !os.IsNotExist(err) {
		t.Errorf("the failed start left its inbox: %v", err)
	}
	fk.Script(fakeclaude.Script{})
	sid = uuid.NewString()
	if res, _ := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: sid, Self: self}); res.Class != headless.Completed {
		t.Fatalf("class %s", res.Class)
	}
	if _, err := os.Stat(fs.InboxPath(sid)); err != nil {
		t.Errorf("the completed start lost its inbox: %v", err)
	}
}

// A detached start's unit body runs claude at most once, however many
// bodies start at once.
func TestRunUnitRunsClaudeOnce(t *testing.T) {
	r, _, fk := newRunner(t)
	fk.Script(fakeclaude.Script{DelayMS: 50})
	for i := range 15 {
		sid := uuid.NewString()
		out := filepath.Join(t.TempDir(), "r.json")
		f := headless.StartFile{State: headless.Started, SessionID: sid, Unit: jsonrow.Ptr(claudeproc.UnitName(sid)), ResultFile: out,
			PromptFile: jsonrow.Ptr(claudeproc.PromptFile(out)), CWD: t.TempDir(), Model: "m", MaxTurns: 1, BudgetUSD: 0.25, TimeoutS: 30,
			Doorman: headless.DoormanNone}
		b, _ := json.Marshal(f)
		if err := os.WriteFile(out, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*f.PromptFile, []byte("go"), 0o600); err != nil {
			t.Fatal(err)
		}
		before := len(fk.Calls("claude"))
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = r.RunUnit(context.Background(), out)
			}()
		}
		wg.Wait()
		if n := len(fk.Calls("claude")) - before; n != 1 {
			t.Fatalf("round %d: three unit bodies at once ran claude %d times, want 1", i, n)
		}
	}
}

// systemd-run that hangs is stopped and said so; one that exits 0 but
// starts nothing fails the start; neither registers a lineage link.
func TestDetachBoundsSystemdRun(t *testing.T) {
	tests := []struct {
		name          string
		script        fakeclaude.Script
		limit, unitIn time.Duration
		reason        string
	}{
		// Each bound is what the start waits for, measured below: the
		// answer comes no sooner than it and well before the fake's 60 s
		// hang. The other bound is generous (a systemd-run that exits at
		// once is not stopped on a loaded machine under -race).
		{"hangs", fakeclaude.Script{DelayMS: 60_000}, 1 * time.Second, 60 * time.Second, "did not finish within 1s"},
		{"starts nothing", fakeclaude.Script{}, 60 * time.Second, 1 * time.Second, "did not start within 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, fs, fk := newRunner(t)
			r.SystemdRunTimeout, r.UnitStartWait = tt.limit, tt.unitIn
			parent := uuid.NewString()
			env := append(r.Environ(), "CLAUDE_CODE_SESSION_ID="+parent)
			r.Environ = func() []string { return env }
			fk.ScriptFor(fakeclaude.NameSystemdRun, tt.script)
			begin := time.Now()
			res, err := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), Systemd: true, Self: self})
			bound := min(tt.limit, tt.unitIn)
			if took := time.Since(begin); took < bound || took > bound+30*time.Second {
				t.Errorf("answered after %v, want no sooner than its %v bound and well before the fake's 60 s", took, bound)
			}
			if err == nil || res.Class != headless.Failed || !strings.Contains(res.Reason, tt.reason) {
				t.Errorf("class %s reason %q err %v, want failed: %s", res.Class, res.Reason, err, tt.reason)
			}
			b, _ := os.ReadFile(res.File.ResultFile)
			var f headless.StartFile
			if json.Unmarshal(b, &f) != nil || f.State != headless.Failed {
				t.Errorf("result file %s, want state failed", b)
			}
			if _, err := os.Stat(claudeproc.PromptFile(res.File.ResultFile)); !os.IsNotExist(err) {
				t.Errorf("prompt file left for a late unit: %v", err)
			}
			links, _ := (&lineage.Ledger{Path: fs.Paths.LineageFile()}).Links(context.Background())
			if len(links) != 0 {
				t.Errorf("a start that never ran registered %v", links)
			}
		})
	}
}

// A turn that ended in an error stays visible when a later turn succeeded:
// the run completes (the final turn's verdict), both turns are kept in
// order, the error turn's reason is in the note, and the later turn, which
// a peer line started, names that line's msg_id and sender.
func TestErrorTurnBeforeSuccessIsKept(t *testing.T) {
	r, _, fk := newRunner(t)
	sid := uuid.NewString()
	// claude's stream-json output: other events, then one result per turn.
	stdout := `{"type":"system","subtype":"init","session_id":"` + sid + `"}
{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: 529 overloaded","session_id":"` + sid + `","num_turns":1,"total_cost_usd":0.01,"result_index":0}
{"type":"assistant","session_id":"` + sid + `","message":{"content":[{"type":"text","text":"done"}]}}
{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"` + sid + `","num_turns":1,"total_cost_usd":0.03,"result_index":1,"origin":{"kind":"peer","from":"mama","msg_id":"7e1b0c52-0d43-4e8f-9a51-0f7c2b9d3a10"}}
`
	fk.Script(fakeclaude.Script{Stdout: stdout})
	res, err := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: sid, Self: self,
		Out: filepath.Join(t.TempDir(), "r.json")})
	if err != nil || res.Class != headless.Completed {
		t.Fatalf("class %s reason %q err %v, want completed (the final turn succeeded)", res.Class, res.Reason, err)
	}
	b, err := os.ReadFile(res.File.ResultFile)
	if err != nil {
		t.Fatal(err)
	}
	var f headless.StartFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	type turn struct {
		Index     int
		StartedBy string
		MsgID     string
		From      string
		Subtype   string
		IsError   bool
		Result    string
	}
	var got []turn
	for _, tn := range f.Turns {
		g := turn{Index: tn.Index, StartedBy: tn.StartedBy, Subtype: tn.Subtype, IsError: tn.IsError}
		if tn.MsgID != nil {
			g.MsgID = *tn.MsgID
		}
		if tn.From != nil {
			g.From = *tn.From
		}
		if tn.Result != nil {
			g.Result = *tn.Result
		}
		got = append(got, g)
	}
	want := []turn{
		{Index: 0, StartedBy: receipt.TurnByPrompt, Subtype: "error_during_execution", IsError: true, Result: "API Error: 529 overloaded"},
		{Index: 1, StartedBy: receipt.TurnByPeer, MsgID: "7e1b0c52-0d43-4e8f-9a51-0f7c2b9d3a10", From: "mama", Subtype: "success", Result: "done"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
	if f.Note == nil || !strings.Contains(*f.Note, "turn 1 of 2 ended in an error") || !strings.Contains(*f.Note, "529 overloaded") {
		t.Errorf("note %v does not say turn 1 of 2 ended in an error, with claude's reason", f.Note)
	}
	if f.IsError == nil || *f.IsError || f.Result == nil || *f.Result != "done" {
		t.Errorf("top-level keys %v %v, want the final turn's (is_error false, done)", f.IsError, f.Result)
	}
}

// startNaming starts a process (a wrapper) whose command line names sid
// and waits until it runs with that command line.
func startNaming(t *testing.T, sid string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		args, _ := (station.Proc{}).Cmdline(cmd.Process.Pid)
		if claudeproc.NamesSession(args, sid) {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v does not name %s after 30s: %q", argv, sid, args)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A wrapper whose command line carries the session (timeout 30 oo-claude
// start … --session-id X, bash -c '…') holds nothing: start --session-id
// and resume go ahead beside it. A claude process wrapped the same way
// still holds the session, and the pid named is claude's, not the
// wrapper's.
func TestWrapperDoesNotHoldTheSession(t *testing.T) {
	r, fs, fk := newRunner(t)
	wrappers := map[string][]string{
		"timeout": {"timeout", "60", "bash", "-c", "sleep 60; :", "oo-claude"},
		"bash -c": {"bash", "-c", "sleep 60; :", "oo-claude"},
	}
	for name, w := range wrappers {
		t.Run(name, func(t *testing.T) {
			sid := uuid.NewString()
			startNaming(t, sid, append(w, "start", "x", "--session-id", sid)...)
			res, err := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: sid, Self: self,
				Out: filepath.Join(t.TempDir(), "r.json")})
			if err != nil || res.Class != headless.Completed {
				t.Errorf("start beside %s: class %s (%v), want completed", name, res.Class, err)
			}
			rsid := uuid.NewString()
			addTranscript(t, fs, rsid, t.TempDir())
			startNaming(t, rsid, append(w, "resume", "-r", rsid, "hi")...)
			rres, err := r.Resume(context.Background(), headless.ResumeRequest{Self: self, SessionID: rsid, Line: "hi"})
			if err != nil || rres.Class != headless.DeliveredResume {
				t.Errorf("resume beside %s: class %s held by %q (%s, %v), want delivered-resume", name, rres.Class, rres.HeldBy, rres.Reason, err)
			}
		})
	}

	t.Run("wrapped claude", func(t *testing.T) {
		sid := uuid.NewString()
		addTranscript(t, fs, sid, t.TempDir())
		fk.Script(fakeclaude.Script{DelayMS: 60_000})
		n := len(fk.Calls("claude"))
		wrapper := startNaming(t, sid, "timeout", "60", fk.Claude, "-p", "--resume", sid, "working")
		calls, _ := fk.WaitCalls(ctxT(t, 30*time.Second), "claude", n+1)
		if len(calls) != n+1 {
			t.Fatal("the wrapped fake claude did not run")
		}
		fk.Script(fakeclaude.Script{})
		res, err := r.Resume(context.Background(), headless.ResumeRequest{Self: self, SessionID: sid, Line: "hi"})
		if err != nil || res.Class != headless.HeldBySession || res.HeldBy != headless.HeldByProcess || res.HeldPID != calls[n].PID {
			t.Errorf("resume: class %s held by %q pid %d (%v), want held-by-session by process %d (claude; the wrapper is %d)",
				res.Class, res.HeldBy, res.HeldPID, err, calls[n].PID, wrapper.Process.Pid)
		}
		sres, err := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: sid, Self: self,
			Out: filepath.Join(t.TempDir(), "r.json")})
		if !errors.Is(err, headless.ErrSessionInUse) || sres.Class != headless.Refused ||
			!strings.Contains(err.Error(), "claude process "+strconv.Itoa(calls[n].PID)+" ") {
			t.Errorf("start: class %s err %v, want refused session-in-use naming claude process %d", sres.Class, err, calls[n].PID)
		}
	})
}

// ctxT is a context that ends after d or with the test.
func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A resumed session's first turn costs what the run added: Claude Code's
// total_cost_usd counts the session's earlier processes too (measured on
// 2.1.332, e2e TestCostState), which the transcript's last cost-state row
// holds. The turn once carried the earlier processes' cost as its own.
func TestResumeTurnCostExcludesEarlierProcesses(t *testing.T) {
	r, fs, fk := newRunner(t)
	sid := uuid.NewString()
	cwd := t.TempDir()
	addTranscript(t, fs, sid, cwd)
	real, _ := filepath.EvalSymlinks(cwd)
	path := filepath.Join(fs.Paths.ProjectsDir, encode(real), sid+".jsonl")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The earlier process's exit row, then a later cost-state row without
	// its figure (not one to count from).
	_, err = f.WriteString(`{"type":"cost-state","sessionId":"` + sid + `","totalCostUSD":0.5,"modelUsage":{}}` + "\n" +
		`{"type":"assistant","sessionId":"` + sid + `","message":{"id":"m1","role":"assistant","content":[]}}` + "\n" +
		`{"type":"cost-state","sessionId":"` + sid + `"}` + "\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	fk.Script(fakeclaude.Script{Result: "ok", CostUSD: 0.75})
	res, err := r.Resume(context.Background(), headless.ResumeRequest{Self: self, SessionID: sid, Line: "hi", Timeout: 30 * time.Second})
	if err != nil || len(res.Turns) != 1 {
		t.Fatalf("class %s reason %q err %v turns %+v", res.Class, res.Reason, err, res.Turns)
	}
	if got := res.Turns[0]; math.Abs(got.CostUSD-0.25) > 1e-9 || got.TotalCostUSD != 0.75 {
		t.Errorf("turn cost %v (total %v), want 0.25 (0.75 less the 0.5 before the run)", got.CostUSD, got.TotalCostUSD)
	}
}
