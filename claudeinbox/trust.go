package claudeinbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// ErrUntrusted reports an inbox directory or file that another user could
// have written: owned by another uid, or a directory writable by group or
// others, or a file writable by others. A sender refuses to append to it
// ([ReasonUntrusted]) and a doorman delivers nothing from it
// ([StateUntrusted]). The error text names the problem and the fix.
var ErrUntrusted = fsx.ErrUntrusted

// CheckTrust reports whether the inbox of files may be trusted by user uid
// (pass os.Geteuid()): its directory owned by uid and not writable by group
// or others, and the inbox file, when it exists, owned by uid and not
// writable by others. A directory or file that does not exist yet is
// trusted (oo-claude creates it 0700/0600). The error matches
// [ErrUntrusted] (or fs's and fsx's sentinels for a symlink or a file that
// is not regular).
func CheckTrust(files Files, uid int) error {
	dir := filepath.Dir(files.Inbox)
	if err := fsx.CheckDirTrust(dir, uid); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fi, err := os.Lstat(files.Inbox)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "check", Path: files.Inbox, Err: fsx.ErrSymlink}
	case !fi.Mode().IsRegular():
		return &fs.PathError{Op: "check", Path: files.Inbox, Err: fsx.ErrNotRegular}
	}
	return fsx.CheckTrust(files.Inbox, fi, uid)
}

