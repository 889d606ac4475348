package fleet

import "syscall"

// dieWithParent makes the kernel kill ssh when this process dies, SIGKILL
// included: no ssh child outlives the invocation that started it.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
