package fsx

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// euid is the effective uid the readers of many small files check trust
// against, asked of the kernel once: oo-claude never changes its uid, and
// geteuid is a system call on every open otherwise.
var euid = sync.OnceValue(os.Geteuid)

// ReadAtFile is a regular file opened by [OpenReadAt] or
// [OpenDirEntryReadAt], read at offsets (pread), on a bare descriptor that
// is never an *os.File: no poller registration and no O_NONBLOCK to clear
// (a regular file ignores it). Close it once; it is not safe for
// concurrent use.
type ReadAtFile struct {
	fd   int
	path string
}

// OpenReadAt opens the regular file at path for reading at offsets with
// the checks of the checked open ([OpenRead]): a path that is not a
// regular file is refused before it is opened, the open cannot follow a
// symlink or block, and fstat checks the opened file again, regular and
// trusted by the effective uid ([CheckTrust]). The fstat is returned as the
// file's FileInfo, so a reader that needs the size or mtime spends no
// second stat: with the close, four system calls where OpenRead and a Stat
// take seven.
func OpenReadAt(path string) (*ReadAtFile, fs.FileInfo, error) {
	if err := refuseBeforeOpen("open", path); err != nil {
		return nil, nil, err
	}
	return openReadAt(path, euid())
}

// OpenDirEntryReadAt is [OpenReadAt] for the entry e of the directory dir,
// as [os.ReadDir] or [filepath.WalkDir] listed it: the entry's type stands
// for the lstat before the open, as in [AppendDirEntry]. An entry that is
// not a regular file is refused unopened ([ErrSymlink], [ErrNotRegular]);
// the open and fstat check the file again, so one replaced since the
// listing is refused too.
func OpenDirEntryReadAt(dir string, e fs.DirEntry) (*ReadAtFile, fs.FileInfo, error) {
	de, at := e.(dirEntry)
	if at && de.d.fd >= 0 {
		dir = de.d.path
	}
	path := filepath.Join(dir, e.Name())
	switch t := e.Type(); {
	case t&fs.ModeSymlink != 0:
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: ErrSymlink}
	case !t.IsRegular():
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	if !at || de.d.fd < 0 {
		return openReadAt(path, euid())
	}
	// Relative to its open directory: one name resolved, not the path.
	fd, st, err := openFDAt(de.d.fd, e.Name(), path, de.d.uid)
	if err != nil {
		return nil, nil, err
	}
	return &ReadAtFile{fd: fd, path: path}, statInfo{st: st, name: e.Name()}, nil
}

func openReadAt(path string, uid int) (*ReadAtFile, fs.FileInfo, error) {
	fd, st, err := openFD(path, uid)
	if err != nil {
		return nil, nil, err
	}
	return &ReadAtFile{fd: fd, path: path}, statInfo{st: st, name: filepath.Base(path)}, nil
}

// ReadAt reads len(p) bytes at off, as [os.File.ReadAt] does: fewer only
// with an error, io.EOF at the file's end.
func (f *ReadAtFile) ReadAt(p []byte, off int64) (int, error) {
	if f == nil || f.fd < 0 {
		return 0, os.ErrClosed
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.path, Err: errors.New("negative offset")}
	}
	n := 0
	for len(p) > 0 {
		m, err := unix.Pread(f.fd, p, off)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return n, &fs.PathError{Op: "read", Path: f.path, Err: err}
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
		p = p[m:]
		off += int64(m)
	}
	return n, nil
}

// Close closes the descriptor; a second Close is os.ErrClosed.
func (f *ReadAtFile) Close() error {
	if f == nil || f.fd < 0 {
		return os.ErrClosed
	}
	err := unix.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}
