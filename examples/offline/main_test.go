package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/oo-family/oo-claude/doorman"
)

// asMainEnv makes the test binary run main: the tests run the program as
// a process, for its exit code and its stdout and stderr.
const asMainEnv = "OO_OFFLINE_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	doorman.ServeIfInvoked(context.Background()) // the test binary is the program Claude Code runs as the doorman
	switch {
	case os.Getenv(asMainEnv) == "1":
		os.Unsetenv(asMainEnv)
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

type result struct {
	stdout, stderr string
	code           int
}

// runProgram runs the program with args and env added to this process's
// environment.
func runProgram(t *testing.T, timeout time.Duration, env []string, args ...string) result {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(append(os.Environ(), asMainEnv+"=1"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run the program: %v", err)
	}
	return r
}

// TestOffline runs the README's "see the real thing" command against the
// pinned Claude Code and holds it to its word: exit 0, the steered line's
// msg_id seen in the transcript, the model's reply to the question, and
// nothing left behind.
func TestOffline(t *testing.T) {
	if os.Getenv("OO_CLAUDE_E2E_CLAUDE") == "" {
		t.Skip("set OO_CLAUDE_E2E_CLAUDE: run scripts/test.sh or export OO_CLAUDE_E2E_CLAUDE=$(scripts/install-claude-code.sh)")
	}
	r := runProgram(t, 3*time.Minute, nil)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	steer := regexp.MustCompile(`(?m)^ +[0-9.]+s  steer +delivered-(steer|start) msg_id=([0-9a-f-]{36}), acked after`).FindStringSubmatch(r.stdout)
	if steer == nil {
		t.Fatalf("no steer line with a msg_id:\n%s", r.stdout)
	}
	for _, want := range []string{
		"  seen     the transcript shows msg_id=" + steer[2] + ",",
		"  reply    \"" + answer + "\", ",
		"  done     completed: ",
		"  cleanup  claude and its doorman exited",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	root := regexp.MustCompile(`everything under (\S+)`).FindStringSubmatch(r.stdout)
	if root == nil {
		t.Fatalf("stdout names no temporary directory:\n%s", r.stdout)
	}
	if _, err := os.Stat(root[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there (stat: %v)", root[1], err)
	}
	if r.stderr != "" {
		t.Errorf("stderr %q, want nothing", r.stderr)
	}
}

// TestOfflineNoClaude: without a Claude Code, one line naming the install
// command, exit 1.
func TestOfflineNoClaude(t *testing.T) {
	home := t.TempDir()
	missing := filepath.Join(home, "no", "claude")
	pinned := filepath.Join(home, ".cache", "oo-claude-e2e", pinnedForTest(t), "node_modules", "@anthropic-ai", "claude-code-"+map[string]string{"amd64": "linux-x64", "arm64": "linux-arm64"}[runtime.GOARCH], "claude")
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"flag", []string{"OO_CLAUDE_E2E_CLAUDE="}, []string{"-claude", missing},
			"offline: no Claude Code at " + missing + " (-claude): install it with scripts/install-claude-code.sh (it prints the path), or give -claude PATH\n"},
		{"variable", []string{"OO_CLAUDE_E2E_CLAUDE=" + missing}, nil,
			"offline: no Claude Code at " + missing + " (OO_CLAUDE_E2E_CLAUDE): install it with scripts/install-claude-code.sh (it prints the path), or give -claude PATH\n"},
		{"nothing installed", []string{"OO_CLAUDE_E2E_CLAUDE=", "OO_CLAUDE_E2E_CACHE=", "XDG_CACHE_HOME=", "HOME=" + home}, nil,
			"offline: no Claude Code at " + pinned + " (the install script's cache): install it with scripts/install-claude-code.sh (it prints the path), or give -claude PATH\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runProgram(t, time.Minute, tt.env, tt.args...)
			if r.code != 1 || r.stderr != tt.want || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, nothing, %q", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
}

func pinnedForTest(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "claude-code.version"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
