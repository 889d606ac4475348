//go:build darwin || freebsd || dragonfly

package fsx

import (
	"syscall"
	"time"
)

func statMtime(st *syscall.Stat_t) time.Time { return time.Unix(st.Mtimespec.Unix()) }

func statCtime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctimespec.Unix()) }
