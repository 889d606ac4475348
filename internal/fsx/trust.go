package fsx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrUntrusted reports a file or directory that someone other than the user
// could have written: it is owned by another uid, or (a directory) writable
// by group or others, or (a file) writable by others. Its content is not
// used. Errors matching it are a *[TrustError], which names the fix.
var ErrUntrusted = errors.New("not trusted")

// TrustError says why a path is not trusted and how to fix it.
type TrustError struct {
	Path    string
	Problem string // "owned by uid 65534, not by uid 1000", "writable by group or others (mode 0777)"
	Fix     string // a command that fixes it
}

func (e *TrustError) Error() string {
	return fmt.Sprintf("%s is %s: not trusted (fix: %s)", e.Path, e.Problem, e.Fix)
}

// Is makes a *TrustError match [ErrUntrusted].
func (e *TrustError) Is(target error) bool { return target == ErrUntrusted }

// CheckTrust reports whether fi (of path) is trusted by user uid: owned by
// uid, and not writable by group or others if it is a directory, not
// writable by others if it is a file. It returns nil or a *[TrustError].
// Pass os.Geteuid() as uid outside tests.
func CheckTrust(path string, fi fs.FileInfo, uid int) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
		return &TrustError{
			Path:    path,
			Problem: fmt.Sprintf("owned by uid %d, not by uid %d", st.Uid, uid),
			Fix:     fmt.Sprintf("remove it, or chown %d %s", uid, path),
		}
	}
	perm := fi.Mode().Perm()
	switch {
	case fi.IsDir() && perm&0o022 != 0:
		return &TrustError{
			Path:    path,
			Problem: fmt.Sprintf("a directory writable by group or others (mode %04o)", perm),
			Fix:     "chmod go-w " + path,
		}
	case !fi.IsDir() && perm&0o002 != 0:
		return &TrustError{
			Path:    path,
			Problem: fmt.Sprintf("writable by others (mode %04o)", perm),
			Fix:     "chmod o-w " + path,
		}
	}
	return nil
}

// CheckDirTrust checks the directory dir with [CheckTrust], without following
// a symlink at dir. A missing dir matches [fs.ErrNotExist]; a symlink
// [ErrSymlink]; anything but a directory is an error too.
func CheckDirTrust(dir string, uid int) error {
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "check", Path: dir, Err: ErrSymlink}
	case !fi.IsDir():
		return &fs.PathError{Op: "check", Path: dir, Err: syscall.ENOTDIR}
	}
	return CheckTrust(dir, fi, uid)
}

// CheckFileAt checks the file at path, without opening it or following a
// symlink: what does not exist is nil (oo-claude creates it 0600); a
// symlink matches [ErrSymlink], anything but a regular file
// [ErrNotRegular], both in a *fs.PathError; else [CheckTrust].
func CheckFileAt(path string, uid int) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "check", Path: path, Err: ErrSymlink}
	case !fi.Mode().IsRegular():
		return &fs.PathError{Op: "check", Path: path, Err: ErrNotRegular}
	}
	return CheckTrust(path, fi, uid)
}

// openReadTrusted is [OpenRead] trusting uid instead of the effective uid.
func openReadTrusted(path string, uid int) (*os.File, error) {
	return openCheckedAs("open", path, os.O_RDONLY, uid)
}

// ReadFileTrusted is [ReadFile] trusting uid instead of the effective uid.
func ReadFileTrusted(path string, uid int) ([]byte, error) {
	f, err := openReadTrusted(path, uid)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
