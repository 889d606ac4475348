package claudeproc_test

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/internal/claudeproc"
)

// TestGroupHasLiving: a process group with a running member has a living
// member; once that member is a zombie, or reaped, it has none.
func TestGroupHasLiving(t *testing.T) {
	cmd := exec.Command("/bin/sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skip("no /bin/sleep:", err)
	}
	pgid := cmd.Process.Pid
	if !claudeproc.GroupHasLiving(pgid) {
		t.Errorf("group %d of a running sleep: no living member", pgid)
	}
	cmd.Process.Kill() // a zombie until it is waited for
	deadline := time.Now().Add(30 * time.Second)
	for claudeproc.GroupHasLiving(pgid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if claudeproc.GroupHasLiving(pgid) {
		t.Errorf("group %d: a living member after SIGKILL (a zombie counts as gone)", pgid)
	}
	cmd.Wait()
	if claudeproc.GroupHasLiving(pgid) {
		t.Errorf("group %d: a living member after its only one was reaped", pgid)
	}
}
