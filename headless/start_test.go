package headless_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
	if _, err := os.Stat(headless.PromptFile(out)); !os.IsNotExist(err) {
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

func ExampleDoormanConfig() {
	fmt.Println(headless.DoormanConfig("/usr/local/bin/oo-claude"))
	// Output: {"mcpServers":{"claude-inbox":{"type":"stdio","command":"/usr/local/bin/oo-claude","args":["doorman","--mcp"]}}}
}

func ExampleScrubEnv() {
	env, fds := headless.ScrubEnv([]string{
		"HOME=/home/u",
		"CLAUDECODE=1",
		"CLAUDE_CODE_MESSAGING_TOKEN=0123456789abcdef",
		"CLAUDE_CONFIG_DIR=/home/u/.claude",
		"CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR=7",
	})
	fmt.Println(env)
	fmt.Println(fds[0].Name, fds[0].FD, "->", fds[0].ChildFD)
	fmt.Println(len(headless.KeepEnv()), "CLAUDE* names pass")
	// Output:
	// [HOME=/home/u CLAUDE_CONFIG_DIR=/home/u/.claude CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR=3]
	// CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR 7 -> 3
	// 18 CLAUDE* names pass
}

func ExampleSystemdArgv() {
	fmt.Println(headless.SystemdArgv("ffde609f-0000-4000-8000-000000000000", 900e9, []string{"-E", "HOME"}, "/usr/local/bin/oo-claude", "/s/start/ffde609f.json"))
	// Output: [--user --unit oo-claude-ffde609f --same-dir --collect --no-block --property=RuntimeMaxSec=930 -E HOME -- /usr/local/bin/oo-claude start --foreground-unit /s/start/ffde609f.json]
}
