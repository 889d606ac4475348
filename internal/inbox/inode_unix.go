//go:build unix

package inbox

import (
	"io/fs"
	"syscall"
)

// inodeOf returns the inode number of a file, 0 when unknown.
func inodeOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino) //nolint:unconvert // the field's type differs between platforms
	}
	return 0
}
