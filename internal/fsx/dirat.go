package fsx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OpenDirNoFollow is [OpenDir] for a directory that is not followed when
// it is a symlink: the open fails (ELOOP), as it does (ENOTDIR) for what
// is not a directory, never blocking.
func OpenDirNoFollow(path string) (*Dir, error) {
	return openDirAt(unix.AT_FDCWD, path, path, euid())
}

// OpenDir opens the directory name in d, not following a symlink, as
// [OpenDirNoFollow] does.
func (d *Dir) OpenDir(name string) (*Dir, error) {
	path := filepath.Join(d.path, name)
	if d.fd < 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrClosed}
	}
	return openDirAt(d.fd, name, path, d.uid)
}

func openDirAt(dirfd int, name, path string, uid int) (*Dir, error) {
	var fd int
	var err error
	for {
		// O_DIRECTORY refuses a FIFO in a directory's place at the open,
		// which never blocks; without O_NONBLOCK the descriptor is no
		// poller's.
		fd, err = unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), fd: fd, path: path, uid: uid}, nil
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// ReadDir lists the directory sorted by name, as [os.ReadDir] does. While
// d is open, an entry's Info is an fstatat relative to d, and
// [AppendDirEntry] and [OpenDirEntryReadAt] open it relative to d (one
// name resolved, not its path), with every check they make; after Close,
// by its path.
func (d *Dir) ReadDir() ([]fs.DirEntry, error) {
	ents, err := d.f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for i, e := range ents {
		ents[i] = dirEntry{DirEntry: e, d: d}
	}
	return ents, err
}

// dirEntry is an entry of Dir.ReadDir.
type dirEntry struct {
	fs.DirEntry
	d *Dir
}

// Info is the entry's lstat, relative to its directory while it is open.
func (e dirEntry) Info() (fs.FileInfo, error) {
	if e.d.fd < 0 {
		return e.DirEntry.Info()
	}
	var st syscall.Stat_t
	name := e.Name()
	if err := e.d.lstatAt(name, &st); err != nil {
		return nil, err
	}
	return fileInfo{name: name, st: st}, nil
}

// lstatAt is the lstat of the file name in d, open, into st: an fstatat
// relative to d's descriptor that follows no symlink.
func (d *Dir) lstatAt(name string, st *syscall.Stat_t) error {
	for {
		// unix.Stat_t is syscall.Stat_t's layout (what os.Lstat's Sys
		// holds), field for field.
		err := unix.Fstatat(d.fd, name, (*unix.Stat_t)(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EINTR) {
			return &fs.PathError{Op: "lstat", Path: filepath.Join(d.path, name), Err: err}
		}
	}
}

// EntryStat is the lstat of e, an entry of [Dir.ReadDir] (Info's, made
// relative to its directory while that is open), as its modification time
// and its [Sig] when it is of a regular file that uid trusts (the checks
// [Dir.AppendEntry] makes of an opened file, minus its size bound; else
// the zero Sig, which no Sig a cache keeps is equal to), without an
// fs.FileInfo made for it: a reader that stats every entry of many
// directories allocates nothing for the stat. Another fs.DirEntry is asked
// for its Info.
func EntryStat(e fs.DirEntry, uid int) (time.Time, Sig, error) {
	de, ok := e.(dirEntry)
	if !ok || de.d.fd < 0 {
		fi, err := e.Info()
		if err != nil {
			return time.Time{}, Sig{}, err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fi.ModTime(), Sig{}, nil
		}
		return fi.ModTime(), trustedSig(st, uid), nil
	}
	var st syscall.Stat_t
	if err := de.d.lstatAt(e.Name(), &st); err != nil {
		return time.Time{}, Sig{}, err
	}
	return statMtime(&st), trustedSig(&st, uid), nil
}

// fileInfo is an lstat's fs.FileInfo, as os.Lstat gives it.
type fileInfo struct {
	name string
	st   syscall.Stat_t
}

func (f fileInfo) Name() string       { return f.name }
func (f fileInfo) Size() int64        { return f.st.Size }
func (f fileInfo) ModTime() time.Time { return statMtime(&f.st) }
func (f fileInfo) IsDir() bool        { return f.Mode().IsDir() }
func (f fileInfo) Sys() any           { return &f.st }
func (f fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(f.st.Mode & 0o777)
	switch f.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if f.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if f.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if f.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
