package fsx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Sig is what a stat says of a regular file's content: its device and
// inode, size, and modification and change times in nanoseconds. Every
// write to a file sets its change time to the kernel's clock, which
// nobody can set back, so a file whose Sig is the same as at an earlier
// read, and whose change time was already well behind the clock at that
// read, holds the bytes that read returned (what git's index trusts):
// [Sig.Settled] says so.
type Sig struct {
	Dev, Ino           uint64
	Size, Mtime, Ctime int64
}

// SigSettle is how far a file's change time must be behind the clock at
// a read for its Sig to vouch for the bytes read: beyond a file system's
// timestamp granularity (1 s at worst where [Dir.SigsHold]) and the
// kernel's coarse clock tick, so that any later write sets a change time
// the Sig does not have.
const SigSettle = 2 * time.Second

// Settled reports whether s, a stat made before a read that began at
// began (by the real clock, which the kernel stamps change times with),
// vouches for what that read returned: it is a stat's, and its change
// time was SigSettle behind began.
func (s Sig) Settled(began time.Time) bool {
	return s != Sig{} && s.Ctime < began.Add(-SigSettle).UnixNano()
}

// SigBytes is the length of a Sig as [Sig.Append] writes it.
const SigBytes = 40

// Append appends s to buf as the caches keep it: device, inode, size,
// modification and change times, 64 bits each, little-endian.
func (s Sig) Append(buf []byte) []byte {
	for _, v := range [...]uint64{s.Dev, s.Ino, uint64(s.Size), uint64(s.Mtime), uint64(s.Ctime)} {
		buf = binary.LittleEndian.AppendUint64(buf, v)
	}
	return buf
}

// SigAt is the Sig that [Sig.Append] wrote at the start of b, which holds
// at least SigBytes.
func SigAt(b string) Sig {
	u64 := func(i int) uint64 {
		var v uint64
		for k := 7; k >= 0; k-- {
			v = v<<8 | uint64(b[i+k])
		}
		return v
	}
	return Sig{Dev: u64(0), Ino: u64(8), Size: int64(u64(16)), Mtime: int64(u64(24)), Ctime: int64(u64(32))}
}

func sigOf(st *syscall.Stat_t) Sig {
	m, c := statMtime(st), statCtime(st)
	return Sig{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size, Mtime: m.UnixNano(), Ctime: c.UnixNano()}
}

// trustedSig is the Sig of st, an lstat, when it is of a regular file
// that uid trusts (the checks [Dir.AppendEntry] makes of an opened file,
// minus its size bound); else the zero Sig, which no Sig a cache keeps is
// equal to.
func trustedSig(st *syscall.Stat_t, uid int) Sig {
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != uid || st.Mode&0o002 != 0 {
		return Sig{}
	}
	return sigOf(st)
}

// StatEntry is the Sig of the file name in d, by one fstatat that follows
// no symlink. What [Dir.AppendEntry] would refuse unread (not a regular
// file, not trusted by d's uid, more than max bytes) is an error here too,
// so a reader that trusts a Sig reads nothing AppendEntry would not.
func (d *Dir) StatEntry(name string, max int) (Sig, error) {
	path := func() string { return filepath.Join(d.path, name) }
	if d.fd < 0 {
		return Sig{}, &fs.PathError{Op: "lstat", Path: path(), Err: fs.ErrClosed}
	}
	var st syscall.Stat_t
	if err := d.lstatAt(name, &st); err != nil {
		return Sig{}, err
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
	case syscall.S_IFLNK:
		return Sig{}, &fs.PathError{Op: "lstat", Path: path(), Err: ErrSymlink}
	default:
		return Sig{}, &fs.PathError{Op: "lstat", Path: path(), Err: ErrNotRegular}
	}
	if int(st.Uid) != d.uid || st.Mode&0o002 != 0 {
		p, own := path(), st
		if err := CheckTrust(p, statInfo{st: &own, name: p}, d.uid); err != nil {
			return Sig{}, err
		}
	}
	if st.Size > int64(max) {
		return Sig{}, &fs.PathError{Op: "lstat", Path: path(), Err: fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, st.Size, max)}
	}
	return sigOf(&st), nil
}

// AppendNameSig is [Dir.AppendEntry] for the file name in d that
// [Dir.StatEntry] found a regular file (the check before the open; the
// open and fstat check it again), also returning the Sig of the fstat
// made after the open and before the read: a write after that fstat
// changes the file's Sig, so the Sig never vouches for bytes newer than
// it (a reader that compares Sigs later reads again, never too little).
func (d *Dir) AppendNameSig(buf []byte, name string, max int) ([]byte, Sig, error) {
	var st syscall.Stat_t
	b, err := appendOpenedStat(buf, d.fd, d.path, name, max, d.uid, &st)
	if err != nil {
		return b, Sig{}, err
	}
	return b, sigOf(&st), nil
}

// Names lists the names in d in the order the file system gives (not
// sorted), without their types: what a reader checks by [Dir.StatEntry]
// needs none. It reads the directory in getdents calls of os.ReadDir's
// 8 KiB and makes no fs.DirEntry, for a reader of many entries. Use it
// or [Dir.Entries] on a Dir, not both.
func (d *Dir) Names() ([]string, error) {
	if d.fd < 0 {
		return nil, &fs.PathError{Op: "readdirent", Path: d.path, Err: fs.ErrClosed}
	}
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var names []string
	for {
		n, err := unix.ReadDirent(d.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return names, &fs.PathError{Op: "readdirent", Path: d.path, Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// direntBufs holds Names' buffers, os.ReadDir's size, as os pools its own.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

// Sig is the Sig of the directory d itself (an fstat of it): a name
// added, removed or renamed in d changes it.
func (d *Dir) Sig() (Sig, error) {
	if d.fd < 0 {
		return Sig{}, &fs.PathError{Op: "stat", Path: d.path, Err: fs.ErrClosed}
	}
	var st syscall.Stat_t
	for {
		err := syscall.Fstat(d.fd, &st)
		if err == nil {
			return sigOf(&st), nil
		}
		if !errors.Is(err, syscall.EINTR) {
			return Sig{}, &fs.PathError{Op: "stat", Path: d.path, Err: err}
		}
	}
}
