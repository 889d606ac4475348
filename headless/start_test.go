package headless_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/oo-family/oo-claude/internal/claudeproc"

	"github.com/oo-family/oo-claude/fakes/fakeclaude"
	"github.com/oo-family/oo-claude/headless"
)

func TestStartSystemdRunFails(t *testing.T) {
	r, fs, fk := newRunner(t)
	fk.ScriptFor(fakeclaude.NameSystemdRun, fakeclaude.Script{Exit: 1, Stderr: "Failed to connect to bus: No medium found\n"})
	exe, _ := os.Executable()
	res, err := r.Start(context.Background(), headless.StartRequest{Prompt: "go", CWD: t.TempDir(), SessionID: sid, Systemd: true, Self: exe})
	if err == nil || res.Class != headless.Failed || res.Class.ExitCode() != 4 {
		t.Fatalf("class %s, err %v; want failed", res.Class, err)
	}
	out := filepath.Join(fs.Paths.StateDir, "start", sid+".json")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var f headless.StartFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.State != headless.Failed || f.Unit == nil || *f.Unit != "oo-claude-0b5c8a1e" || f.Reason == nil {
		t.Errorf("result file %s", b)
	}
	if _, err := os.Stat(claudeproc.PromptFile(out)); !os.IsNotExist(err) {
		t.Errorf("prompt file left behind: %v", err)
	}
	if n := len(fk.Calls("claude")); n != 0 {
		t.Errorf("claude ran %d times", n)
	}
}

func TestRunUnitRefusesForeignFiles(t *testing.T) {
	r, _, _ := newRunner(t)
	p := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(p, []byte(`{"state":"completed"}`), 0o600)
	for _, path := range []string{"relative.json", p, filepath.Join(t.TempDir(), "missing.json")} {
		res, err := r.RunUnit(context.Background(), path)
		if res.Class != headless.Refused || err == nil {
			t.Errorf("%s: class %s err %v", path, res.Class, err)
		}
	}
}
