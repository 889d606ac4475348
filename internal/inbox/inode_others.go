//go:build !unix

package inbox

import "io/fs"

// inodeOf returns 0: inode numbers are not known on this platform.
func inodeOf(fs.FileInfo) uint64 { return 0 }
