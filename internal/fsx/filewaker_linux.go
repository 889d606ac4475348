package fsx

import (
	"errors"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The inotify masks of a file watch: its inode's own changes (an append
// or truncation is IN_MODIFY; a replace, removal or new link changes the
// link count, IN_ATTRIB; a move or the last unlink its own events) and,
// while a file is absent, its directory's new entries.
const (
	fileWatchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_DONT_FOLLOW
	dirWatchMask  = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_ONLYDIR
)

// fileWatch is one inotify instance watching a few files by their inodes:
// the inode at each path, or, while there is none, the path's directory
// for its appearance. Only its goroutine uses it after newFileWatch.
type fileWatch struct {
	fd    int
	f     *os.File // fd, in the runtime poller: a Read waits without a thread
	files []watchedFile
	dirs  map[string]int // directory → its watch, while a file in it is absent
}

type watchedFile struct {
	path, dir, base string
	wd              int // the watch of the inode at path; -1: none (absent)
}

func newFileWatch(paths []string) (*fileWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	w := &fileWatch{fd: fd, f: os.NewFile(uintptr(fd), "inotify"), dirs: map[string]int{}}
	for _, p := range paths {
		p = filepath.Clean(p)
		w.files = append(w.files, watchedFile{path: p, dir: filepath.Dir(p), base: filepath.Base(p), wd: -1})
	}
	if err := w.arm(); err != nil {
		w.f.Close()
		return nil, err
	}
	return w, nil
}

// arm watches the inode now at each path and, for each path with none,
// its directory, then looks again for the files absent (one created
// between the two looks sends no event to the directory's new watch). A
// directory no absent file needs is no longer watched. An error is a path
// that cannot be watched at all (its directory is gone): the caller polls.
func (w *fileWatch) arm() error {
	need := map[string]bool{}
	for i := range w.files {
		f := &w.files[i]
		ok, err := w.armFile(f)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		if _, watched := w.dirs[f.dir]; !watched {
			dwd, err := unix.InotifyAddWatch(w.fd, f.dir, dirWatchMask)
			if err != nil {
				return &os.PathError{Op: "inotify_add_watch", Path: f.dir, Err: err}
			}
			w.dirs[f.dir] = dwd
		}
		if ok, err := w.armFile(f); err != nil {
			return err
		} else if !ok {
			need[f.dir] = true
		}
	}
	for dir, dwd := range w.dirs {
		if !need[dir] {
			unix.InotifyRmWatch(w.fd, uint32(dwd))
			delete(w.dirs, dir)
		}
	}
	return nil
}

// armFile watches the inode at f.path (dropping the watch of the inode
// that was there before) and reports whether there is one.
func (w *fileWatch) armFile(f *watchedFile) (bool, error) {
	wd, err := unix.InotifyAddWatch(w.fd, f.path, fileWatchMask)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return false, &os.PathError{Op: "inotify_add_watch", Path: f.path, Err: err}
	}
	if f.wd >= 0 && f.wd != wd && !w.shared(f.wd, f) {
		unix.InotifyRmWatch(w.fd, uint32(f.wd))
	}
	if err != nil {
		f.wd = -1
		return false, nil
	}
	f.wd = wd
	return true, nil
}

// shared reports whether another file than f is watched by wd (two paths
// naming one inode).
func (w *fileWatch) shared(wd int, f *watchedFile) bool {
	for i := range w.files {
		if o := &w.files[i]; o != f && o.wd == wd {
			return true
		}
	}
	return false
}

// events reads the next batch of events (waiting for one) and reports
// whether one may be a change of a file (wake) and whether the watches
// must be armed again (a file replaced, moved, removed or created, a
// directory gone, events lost).
//
// written reports an event that says a file's content may have changed:
// a write or truncation (IN_MODIFY), or events lost.
func (w *fileWatch) events(buf []byte) (wake, rearm, written bool, err error) {
	n, err := w.f.Read(buf)
	if err != nil {
		return false, false, false, err
	}
	for off := 0; off+unix.SizeofInotifyEvent <= n; {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		name := ""
		if ev.Len > 0 {
			b := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			for len(b) > 0 && b[len(b)-1] == 0 {
				b = b[:len(b)-1]
			}
			name = string(b)
		}
		off += unix.SizeofInotifyEvent + int(ev.Len)
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			wake, rearm, written = true, true, true
			continue
		}
		wd := int(ev.Wd)
		if ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0 {
			for dir, dwd := range w.dirs {
				if dwd == wd { // a watched directory went away: look again
					unix.InotifyRmWatch(w.fd, uint32(dwd))
					delete(w.dirs, dir)
					wake, rearm = true, true
				}
			}
		}
		for i := range w.files {
			f := &w.files[i]
			switch {
			case f.wd == wd && ev.Mask&unix.IN_MODIFY != 0:
				wake, written = true, true
			case f.wd == wd: // IN_ATTRIB, IN_MOVE_SELF, IN_DELETE_SELF, IN_IGNORED
				wake, rearm = true, true
			case f.wd < 0 && w.watchesDir(f.dir, wd) && (name == f.base || name == ""):
				// The file appeared (or its directory went away).
				wake, rearm = true, true
			}
		}
	}
	return wake, rearm, written, nil
}

// watchesDir reports whether wd is the watch of dir.
func (w *fileWatch) watchesDir(dir string, wd int) bool {
	dwd, ok := w.dirs[dir]
	return ok && dwd == wd
}

func (w *fileWatch) close() error { return w.f.Close() }

// newFileWaker is NewFileWaker on Linux: one inotify instance on the
// files' inodes.
func newFileWaker(fallback time.Duration, files []string) *Waker {
	fw, err := newFileWatch(files)
	if err != nil {
		return NewWaker(fallback, files...)
	}
	k := newWaker()
	k.interrupt = func() { fw.close() }
	k.writesKnown.Store(true)
	go k.runFiles(fw, files, fallback)
	return k
}

// runFiles turns fw's events into wake-ups until the Waker is closed.
// When the files can no longer be watched by inode (a directory of one
// that is absent went away), it watches their directories as NewWaker
// does (through an ancestor until they are back), else it polls.
func (k *Waker) runFiles(fw *fileWatch, files []string, fallback time.Duration) {
	defer close(k.done)
	buf := make([]byte, 16*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		wake, rearm, written, err := fw.events(buf)
		select {
		case <-k.stop:
			return
		default:
		}
		k.woken.Add(1)
		if written {
			k.writes.Add(1)
		}
		if err == nil && rearm {
			err = fw.arm()
		}
		if err != nil {
			k.writesKnown.Store(false)
			fw.close()
			var names map[string]bool
			k.dw, names = dirWatchFor(files)
			k.wake()
			k.watchOrPoll(names, fallback)
			return
		}
		if wake {
			k.wake()
		}
	}
}
