package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrTooLarge reports a file larger than its reader's bound; nothing of it
// is returned.
var ErrTooLarge = errors.New("file larger than its bound")

// AppendFile appends the content of the small regular file at path to buf
// and returns the extended buffer. It makes the checks of the checked open
// ([OpenRead]): a path that is not a regular file is refused before it is
// opened, the open cannot follow a symlink or block, and fstat checks the
// opened file again, regular and trusted by the effective uid
// ([CheckTrust]). It takes fewer system calls, for a reader of many small
// files (the registry's rows): the descriptor is never an *os.File (no
// poller, no O_NONBLOCK to clear), is read into buf's spare room (grown
// when short) until what fstat counted is there, and closed.
// A file of more than max bytes is [ErrTooLarge]. On error buf is returned
// as it was given.
func AppendFile(buf []byte, path string, max int) ([]byte, error) {
	return appendFileAs(buf, path, max, euid())
}

func appendFileAs(buf []byte, path string, max, uid int) ([]byte, error) {
	if err := refuseBeforeOpen("open", path); err != nil {
		return buf, err
	}
	return appendChecked(buf, path, max, uid)
}

// AppendDirEntry is [AppendFile] for the entry e of the directory dir, as
// [os.ReadDir] listed it: the entry's type, which the listing holds (Go
// lstats an entry whose type the file system does not report), stands for
// the lstat before the open, so a reader of many small files pays one
// system call less for each. An entry that is not a regular file is
// refused unopened ([ErrSymlink], [ErrNotRegular]); the open and fstat
// check the file again, as AppendFile does, so one replaced since the
// listing is refused too.
func AppendDirEntry(buf []byte, dir string, e fs.DirEntry, max int) ([]byte, error) {
	if de, ok := e.(dirEntry); ok && de.d.fd >= 0 {
		return de.d.AppendEntry(buf, e, max) // relative to its open directory
	}
	path := filepath.Join(dir, e.Name())
	switch t := e.Type(); {
	case t&fs.ModeSymlink != 0:
		return buf, &fs.PathError{Op: "open", Path: path, Err: ErrSymlink}
	case !t.IsRegular():
		return buf, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return appendChecked(buf, path, max, euid())
}

// Dir is a directory opened once for a reader of many of its small files
// (the registry's rows): [Dir.AppendEntry] opens each by its name
// relative to the open directory (openat), so the directory's path is
// resolved once, and the effective uid is asked once.
type Dir struct {
	f    *os.File
	fd   int
	path string
	uid  int
}

// OpenDir opens the directory at path (a symlink to it is followed, as
// [os.ReadDir] does) for [Dir.Entries] and [Dir.AppendEntry]. Close it.
func OpenDir(path string) (*Dir, error) {
	// O_DIRECTORY: what is not a directory (a FIFO planted in its place,
	// above all) is refused by the open itself, which never blocks.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), fd: fd, path: path, uid: os.Geteuid()}, nil
}

// Entries lists the directory, in the order the file system gives (not
// sorted).
func (d *Dir) Entries() ([]fs.DirEntry, error) { return d.f.ReadDir(-1) }

// Close closes the directory. The entries of [Dir.ReadDir] are opened by
// their paths from then on.
func (d *Dir) Close() error {
	d.fd = -1
	return d.f.Close()
}

// AppendEntry is [AppendDirEntry] for the entry e of d, opened relative
// to d: the same checks (the entry's listed type before the open, no
// symlink followed, no blocking, the fstat's type and owner after it), in
// the same system calls but the lstat and the uid's.
func (d *Dir) AppendEntry(buf []byte, e fs.DirEntry, max int) ([]byte, error) {
	name := e.Name()
	switch t := e.Type(); {
	case t&fs.ModeSymlink != 0:
		return buf, &fs.PathError{Op: "open", Path: filepath.Join(d.path, name), Err: ErrSymlink}
	case !t.IsRegular():
		return buf, &fs.PathError{Op: "open", Path: filepath.Join(d.path, name), Err: ErrNotRegular}
	}
	return appendOpened(buf, d.fd, d.path, name, max, d.uid)
}

// closeFD closes a descriptor appendOpened opened, once (a test counts
// its calls): a second close of the same number would close the file
// another goroutine opened under it in between.
var closeFD = unix.Close

// appendChecked is AppendFile after the check before the open.
func appendChecked(buf []byte, path string, max, uid int) ([]byte, error) {
	return appendOpened(buf, unix.AT_FDCWD, "", path, max, uid)
}

// appendOpened is appendChecked for the file name relative to the open
// directory dirfd (named dir; unix.AT_FDCWD and "" for a path): the path
// its errors name is built only for them.
func appendOpened(buf []byte, dirfd int, dir, name string, max, uid int) ([]byte, error) {
	var st syscall.Stat_t
	return appendOpenedStat(buf, dirfd, dir, name, max, uid, &st)
}

// appendOpenedStat is appendOpened, leaving the fstat of the opened file
// (made before its read) in st.
func appendOpenedStat(buf []byte, dirfd int, dir, name string, max, uid int, st *syscall.Stat_t) ([]byte, error) {
	const op = "open"
	pathOf := func() string {
		if dir == "" {
			return name
		}
		return filepath.Join(dir, name)
	}
	var fd int
	var err error
	for {
		fd, err = unix.Openat(dirfd, name, os.O_RDONLY|openFlags, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		path := pathOf()
		return buf, wrapOpenErr(op, path, &fs.PathError{Op: op, Path: path, Err: err})
	}
	defer closeFD(fd)
	if err := syscall.Fstat(fd, st); err != nil {
		return buf, &fs.PathError{Op: "stat", Path: pathOf(), Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return buf, &fs.PathError{Op: op, Path: pathOf(), Err: ErrNotRegular}
	}
	// The common case, owned by uid and not writable by others, is
	// CheckTrust's nil, said without building the path it names.
	if int(st.Uid) != uid || st.Mode&0o002 != 0 {
		path, own := pathOf(), *st // a copy escapes, on this path alone
		if err := CheckTrust(path, statInfo{st: &own, name: path}, uid); err != nil {
			return buf, err
		}
	}
	if st.Size > int64(max) {
		return buf, &fs.PathError{Op: "read", Path: pathOf(), Err: fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, st.Size, max)}
	}
	// Room for what fstat counted and one byte more, so that a file that
	// grew since is seen to; past max it is refused.
	start, want := len(buf), int(st.Size)+1
	if cap(buf)-start < want {
		buf = append(buf[:start:start], make([]byte, want)...)[:start]
	}
	room := buf[start : start+want]
	n := 0
	for {
		m, err := unix.Read(fd, room[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return buf[:start], &fs.PathError{Op: "read", Path: pathOf(), Err: err}
		}
		n += m
		// What fstat counted is read: a regular file has nothing more
		// unless it grew since, so no read is spent to see its end. One
		// that grew is read on, within max.
		if m == 0 || int64(n) >= st.Size && n < len(room) {
			break
		}
		if n == len(room) {
			if n > max {
				break
			}
			grown := min(2*len(room), max+1)
			buf = append(buf[:start+n:start+n], make([]byte, grown-n)...)[:start]
			room = buf[start : start+grown]
		}
	}
	if n > max {
		return buf[:start], &fs.PathError{Op: "read", Path: pathOf(), Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)}
	}
	return buf[:start+n], nil
}

// openFD is the checked open after the check before it, on a bare
// descriptor: opened read-only with openFlags (no symlink followed, no
// blocking), then fstat: regular and trusted by uid, or closed and refused.
func openFD(path string, uid int) (int, *syscall.Stat_t, error) {
	return openFDAt(unix.AT_FDCWD, path, path, uid)
}

// openFDAt is openFD for the file name relative to the open directory
// dirfd (unix.AT_FDCWD for a path), path naming it in errors.
func openFDAt(dirfd int, name, path string, uid int) (int, *syscall.Stat_t, error) {
	const op = "open"
	var fd int
	var err error
	for {
		fd, err = unix.Openat(dirfd, name, os.O_RDONLY|openFlags, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return -1, nil, wrapOpenErr(op, path, &fs.PathError{Op: op, Path: path, Err: err})
	}
	st := new(syscall.Stat_t)
	if err := syscall.Fstat(fd, st); err != nil {
		unix.Close(fd)
		return -1, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		unix.Close(fd)
		return -1, nil, &fs.PathError{Op: op, Path: path, Err: ErrNotRegular}
	}
	if err := CheckTrust(path, statInfo{st: st, name: path}, uid); err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	return fd, st, nil
}

// statInfo is the fs.FileInfo of a regular file's fstat, for CheckTrust.
type statInfo struct {
	st   *syscall.Stat_t
	name string
}

func (s statInfo) Name() string       { return s.name }
func (s statInfo) Size() int64        { return s.st.Size }
func (s statInfo) Mode() fs.FileMode  { return fs.FileMode(s.st.Mode & 0o777) }
func (s statInfo) ModTime() time.Time { return statMtime(s.st) }
func (s statInfo) IsDir() bool        { return false }
func (s statInfo) Sys() any           { return s.st }
