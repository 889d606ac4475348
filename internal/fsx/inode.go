package fsx

import (
	"os"
	"syscall"
)

// Inode returns the inode number of fi, or 0 when its platform data has
// none.
func Inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
