// Package programs is the one rule for the programs oo-claude runs beside
// itself: the doorman's, oo-claude-doorman, and the live view's,
// oo-claude-top. `go install ./cli/...` puts the three in one directory;
// oo-claude execs the other two from its own directory, and doctor checks
// that they are there.
package programs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The programs oo-claude runs, by file name.
const (
	Doorman = "oo-claude-doorman"
	Top     = "oo-claude-top"
)

// All are the programs a station needs beside oo-claude, in the order
// doctor checks them.
func All() []string { return []string{Doorman, Top} }

var (
	// ErrUnusable is matched by every error of [Beside].
	ErrUnusable = errors.New("no program to run")
	// ErrMissing is matched by the error of [Beside] for a program that
	// is not there at all.
	ErrMissing = errors.New("not installed beside oo-claude")
)

// Beside returns the path of the program name in the directory of self
// (the absolute path of the oo-claude binary) when it is one to run: a
// regular file (a symlink to one is followed), executable, owned by root
// or by self's owner, and not writable by every user. Otherwise the error
// matches ErrUnusable, and ErrMissing too when nothing is there; it names
// the path and what to do.
func Beside(self, name string) (string, error) {
	path := filepath.Join(filepath.Dir(self), name)
	fi, err := os.Stat(path)
	if err == nil {
		// self gone from its path (replaced by an upgrade) leaves no
		// owner to compare with: the other checks stand.
		if mine, serr := os.Stat(self); serr == nil && !sameOwnerOrRoot(fi, mine) {
			return "", fmt.Errorf("%w: %s is owned by another user than %s", ErrUnusable, path, self)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: %s is %w (go install ./cli/... installs them all)", ErrUnusable, path, ErrMissing)
	case err != nil:
		return "", fmt.Errorf("%w: %w", ErrUnusable, err)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%w: %s is not a regular file", ErrUnusable, path)
	case fi.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("%w: %s is not executable", ErrUnusable, path)
	case fi.Mode().Perm()&0o002 != 0:
		return "", fmt.Errorf("%w: %s is writable by every user", ErrUnusable, path)
	}
	return path, nil
}

// sameOwnerOrRoot reports whether fi is owned by root or by mine's owner.
func sameOwnerOrRoot(fi, mine os.FileInfo) bool {
	a, ok1 := fi.Sys().(*syscall.Stat_t)
	b, ok2 := mine.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && (a.Uid == 0 || a.Uid == b.Uid)
}
