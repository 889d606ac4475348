package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// ooClaudeEnv names a prebuilt oo-claude binary; without it TestMain builds
// one from this module.
const ooClaudeEnv = "OO_CLAUDE_E2E_OOCLAUDE"

// ooClaudeBin is the oo-claude binary under test, set once by TestMain
// before any test runs and never changed after; "" when the suite is
// skipped (no Claude Code to run against).
var ooClaudeBin string

// ooClaudeBuildErr is why the binary could not be built, reported by every
// test that needs it.
var ooClaudeBuildErr error

func TestMain(m *testing.M) {
	if os.Getenv(probeModeEnv) == "mcp" {
		os.Exit(runProbe())
	}
	var cleanup func()
	if os.Getenv(claudeEnv) != "" {
		ooClaudeBin, cleanup, ooClaudeBuildErr = buildOOClaude()
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if cleanup != nil {
			cleanup()
		}
		os.Exit(code)
	}))
}

// buildOOClaude returns the oo-claude binary the suite runs: the one
// OO_CLAUDE_E2E_OOCLAUDE names (with its doorman and top programs beside
// it: go build -o DIR/ ./cli/...), else one built once from
// ../cli/oo-claude, with ../cli/oo-claude-doorman and ../cli/oo-claude-top
// beside it, by the go toolchain that runs the tests (never `go run`).
func buildOOClaude() (string, func(), error) {
	if p := os.Getenv(ooClaudeEnv); p != "" {
		if !filepath.IsAbs(p) {
			return "", nil, fmt.Errorf("%s=%q: want an absolute path", ooClaudeEnv, p)
		}
		return p, nil, nil
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", nil, fmt.Errorf("no go toolchain to build oo-claude (set %s): %w", ooClaudeEnv, err)
	}
	dir, err := os.MkdirTemp("", "e2e-bin")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	// oo-claude and the doorman and top programs it execs, side by side
	// as go install ./cli/... puts them.
	cmd := exec.Command(goBin, "build", "-o", dir+"/", "./cli/oo-claude", "./cli/oo-claude-doorman", "./cli/oo-claude-top")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build ./cli/oo-claude ./cli/oo-claude-doorman: %w\n%s", err, out)
	}
	return filepath.Join(dir, "oo-claude"), cleanup, nil
}

// ooClaude returns the oo-claude binary under test or stops the test.
func ooClaude(t *testing.T) string {
	t.Helper()
	claudeBinary(t) // skips without the pinned CLI
	if ooClaudeBuildErr != nil {
		t.Fatalf("oo-claude binary: %v", ooClaudeBuildErr)
	}
	return ooClaudeBin
}

func dialUnix(path string) (*net.UnixConn, error) {
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return nil, err
	}
	return c.(*net.UnixConn), nil
}
