package fakeclaude_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/transcript"
)

func TestMain(m *testing.M) {
	fakeclaude.Main()
	if slices.Equal(os.Args[1:], doormanArgs) {
		os.Exit(runDoorman())
	}
	os.Exit(m.Run())
}

func TestFakeClaudeAnswersAndRecords(t *testing.T) {
	f := fakeclaude.Install(t)
	cfg := t.TempDir()
	cwd := t.TempDir()
	const sid = "11111111-1111-4111-8111-111111111111"
	tests := []struct {
		name   string
		script fakeclaude.Script
		want   headless.ClaudeResult
		exit   int
	}{
		{"default success", fakeclaude.Script{Result: "PONG", CostUSD: 0.01, Transcript: true},
			headless.ClaudeResult{Type: "result", Subtype: "success", Result: ptr("PONG"), SessionID: sid, NumTurns: 1,
				TotalCostUSD: 0.01, DurationMS: 1234, StopReason: "end_turn", TerminalReason: "completed"}, 0},
		{"error result", fakeclaude.Script{IsError: true, Subtype: "error_max_budget_usd", TerminalReason: "budget_exhausted", Exit: 1},
			headless.ClaudeResult{Type: "result", Subtype: "error_max_budget_usd", IsError: true, SessionID: sid, NumTurns: 1,
				DurationMS: 1234, StopReason: "end_turn", TerminalReason: "budget_exhausted"}, 1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.Script(tt.script)
			cmd := exec.Command(f.Claude, "-p", "--resume", sid, "hello")
			cmd.Dir = cwd
			cmd.Env = []string{"CLAUDE_CONFIG_DIR=" + cfg, "X=1"}
			out, err := cmd.Output()
			if code := cmd.ProcessState.ExitCode(); code != tt.exit {
				t.Fatalf("exit %d (%v), want %d", code, err, tt.exit)
			}
			got, ok := lastResult(out)
			if !ok {
				t.Fatalf("no result in %q", out)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
			calls := f.Calls(fakeclaude.NameClaude)
			if len(calls) != i+1 {
				t.Fatalf("%d calls, want %d", len(calls), i+1)
			}
			c := calls[i]
			if d := cmp.Diff([]string{"-p", "--resume", sid, "hello"}, c.Args); d != "" {
				t.Errorf("args (-want +got):\n%s", d)
			}
			if !slices.Contains(c.Env, "X=1") || c.Dir != cwd {
				t.Errorf("env %v, dir %s", c.Env, c.Dir)
			}
		})
	}
	p, err := transcript.Locate(filepath.Join(cfg, "projects"), sid, cwd)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := transcriptfile.RecordedCWD(p); err != nil || got != cwd {
		t.Errorf("recorded cwd %q (%v), want %q", got, err, cwd)
	}
}

func TestFakeSystemdRunPassesOnlyNamedEnv(t *testing.T) {
	f := fakeclaude.Install(t)
	f.ScriptFor(fakeclaude.NameSystemdRun, fakeclaude.Script{RunUnit: true})
	cmd := exec.Command(f.SystemdRun, "--user", "--unit", "oo-claude-11111111", "-E", "KEEP", "-E", "UNSET", "--", f.Claude, "-p", "--session-id", "x", "hi")
	cmd.Env = []string{"KEEP=yes", "SECRET=no"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "oo-claude-11111111.service") {
		t.Errorf("output %q", out)
	}
	calls, _ := f.WaitCalls(ctxT(t, time.Minute), fakeclaude.NameClaude, 1)
	if len(calls) != 1 {
		t.Fatalf("the unit's command did not run: %v", calls)
	}
	if d := cmp.Diff([]string{"KEEP=yes"}, calls[0].Env); d != "" {
		t.Errorf("unit env (-want +got):\n%s", d)
	}
}

func ptr[T any](v T) *T { return &v }

// lastResult decodes the last line of stdout that is a result object, as
// headless reads claude's output (its own tests run against this fake).
func lastResult(stdout []byte) (headless.ClaudeResult, bool) {
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var r headless.ClaudeResult
		if json.Unmarshal(lines[i], &r) == nil && r.Type == "result" {
			return r, true
		}
	}
	return headless.ClaudeResult{}, false
}
