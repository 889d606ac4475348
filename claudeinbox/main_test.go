package claudeinbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/inbox"
	"go.uber.org/goleak"
)

// TestMain doubles as a helper process: with OO_CLAUDE_INBOX_HELPER set the
// test binary runs one throttle decision instead of the tests, so the
// ledger can be raced by real processes.
func TestMain(m *testing.M) {
	if os.Getenv("OO_CLAUDE_INBOX_HELPER") == "throttle" {
		os.Exit(throttleHelper())
	}
	goleak.VerifyTestMain(m)
}

// throttleHelper takes one throttle decision for (HELPER_SID, HELPER_FROM)
// and prints "won" or "dropped".
func throttleHelper() int {
	th := inbox.ThrottleFor(os.Getenv("HELPER_STATE"), 30*time.Second, nil)
	adm, err := th.Do(context.Background(), os.Getenv("HELPER_SID"), os.Getenv("HELPER_FROM"), func() error { return nil })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if adm.Admitted {
		fmt.Println("won")
	} else {
		fmt.Println("dropped")
	}
	return 0
}

// livePID starts a process that lives until the test ends and returns its
// pid, for a second running session (registry rows are one per pid).
func livePID(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Wait until /proc shows it with a start time.
	for i := 0; i < 100; i++ {
		if _, err := os.Stat("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat"); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return cmd.Process.Pid
}

func execCommand(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }
