//go:build !linux

package fleet

import "syscall"

// dieWithParent is Linux's; elsewhere ssh ends with the context only.
func dieWithParent() *syscall.SysProcAttr { return nil }
