// Package fsx is the file plumbing every oo-claude package shares: private
// directories, whole-line appends, atomic replacement and reads that refuse
// planted symlinks.
//
// Guarantees: an appended line is written with a single write(2) on a
// descriptor opened with O_APPEND, so concurrent writers never interleave
// inside a line; a replaced file is either the old or the new content, never
// a mix; files are created 0600 and directories 0700; a symlink at a path
// this package writes to or opens is refused with [ErrSymlink].
package fsx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrSymlink reports a symbolic link where a regular file or directory was
// expected. Nothing is written through it.
var ErrSymlink = errors.New("refusing to follow a symlink")

// ErrNotRegular reports a path that exists but is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// FileMode and DirMode are the modes of everything oo-claude creates.
const (
	FileMode fs.FileMode = 0o600
	DirMode  fs.FileMode = 0o700
)

// MkdirPrivate creates dir (and its parents) with mode 0700 if it is absent.
// An existing dir is left as it is, but a symlink at dir is refused.
func MkdirPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "mkdir", Path: dir, Err: ErrSymlink}
	case err == nil && !fi.IsDir():
		return &fs.PathError{Op: "mkdir", Path: dir, Err: unix.ENOTDIR}
	case err == nil:
		return nil
	}
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return err
	}
	return nil
}

// OpenAppend opens path for appending, creating it 0600 (and its directory
// 0700) when absent. A symlink at path, or anything but a regular file, is
// refused.
func OpenAppend(path string) (*os.File, error) {
	if err := MkdirPrivate(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, FileMode)
	if err != nil {
		return nil, wrapNoFollow("append", path, err)
	}
	if err := checkRegular(f, "append", path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// AppendLine appends line and a trailing newline to path in one write and
// returns the byte offset at which the line starts. The offset comes from the
// descriptor's position after the O_APPEND write, so it is exact even while
// other processes append to the same file.
func AppendLine(path string, line []byte) (offset int64, err error) {
	f, err := OpenAppend(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return AppendLineTo(f, path, line)
}

// AppendLineTo is AppendLine on a descriptor opened by [OpenAppend].
func AppendLineTo(f *os.File, path string, line []byte) (int64, error) {
	buf := make([]byte, len(line)+1)
	copy(buf, line)
	buf[len(line)] = '\n'
	n, err := f.Write(buf)
	if err != nil {
		return 0, &fs.PathError{Op: "write", Path: path, Err: err}
	}
	if n != len(buf) {
		return 0, &fs.PathError{Op: "write", Path: path, Err: io.ErrShortWrite}
	}
	end, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, &fs.PathError{Op: "seek", Path: path, Err: err}
	}
	return end - int64(len(buf)), nil
}

// WriteFileAtomic replaces path with data: a temporary file in the same
// directory (0600), fsync, rename. Readers see the old or the new content.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := MkdirPrivate(dir); err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return &fs.PathError{Op: "replace", Path: path, Err: ErrSymlink}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := tmp.Chmod(FileMode); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// OpenRead opens path for reading without following a symlink at its last
// element. It refuses anything but a regular file.
func OpenRead(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, wrapNoFollow("open", path, err)
	}
	if err := checkRegular(f, "open", path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads a whole regular file without following a symlink.
func ReadFile(path string) ([]byte, error) {
	f, err := OpenRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func checkRegular(f *os.File, op, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: op, Path: path, Err: ErrNotRegular}
	}
	return nil
}

func wrapNoFollow(op, path string, err error) error {
	if errors.Is(err, unix.ELOOP) {
		return &fs.PathError{Op: op, Path: path, Err: ErrSymlink}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}
