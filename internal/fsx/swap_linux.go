package fsx

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// swapIn puts the file at tmp in path's place, atomically (readers see
// the old or the new file): when path exists, the two are exchanged
// (renameat2 RENAME_EXCHANGE) and the old file, now under tmp's name, is
// removed; a rename over an existing file would make ext4 (auto_da_alloc)
// write tmp's data out before it returns. Where there is nothing to
// exchange with, or the file system cannot exchange, it is a rename.
func swapIn(tmp, path string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		if err := unix.Unlink(tmp); err != nil {
			return &fs.PathError{Op: "remove", Path: tmp, Err: err}
		}
		return nil
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS),
		errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EPERM):
		// No file at path yet, or no exchange here (an old kernel, a file
		// system without it): a plain rename.
		return os.Rename(tmp, path)
	}
	return &os.LinkError{Op: "renameat2", Old: tmp, New: path, Err: err}
}
