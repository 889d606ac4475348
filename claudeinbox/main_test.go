package claudeinbox_test

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
