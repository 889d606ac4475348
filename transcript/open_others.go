//go:build !linux

package transcript

import (
	"io/fs"
	"os"
)

// openNoFollow opens path read-only after checking with Lstat that it is not
// a symlink (a small race remains off Linux).
func openNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return os.Open(path)
}
