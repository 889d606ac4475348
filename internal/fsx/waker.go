package fsx

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DirWatch is the module's one source of file events: an inotify watch
// (through fsnotify) on a set of directories, of which each change to an
// entry (created, written, removed, renamed, chmod) is an event. A
// directory that does not exist yet is watched through its nearest
// existing ancestor until it appears (see [DirWatch.Add]).
//
// The order that loses nothing is armed first, read second: Add returns
// once the kernel holds the watch, so a change made after Add returns is
// an event, and a reader that reads the file after Add and waits for the
// next event misses no append. A [Waker] does that for a wait on a few
// files; a watcher of many directories (observatory.Watch) uses DirWatch
// itself.
//
// Events and Errors are fsnotify's channels; an error (a full kernel queue,
// fsnotify.ErrEventOverflow) means events were lost: read everything again.
// A DirWatch is not safe for concurrent use, except its channels.
type DirWatch struct {
	fw *fsnotify.Watcher
	// dirs are the directories asked for, each with the directory
	// actually watched for it (itself, or its nearest existing ancestor).
	dirs    map[string]string
	pending map[string]bool // the asked-for dirs watched through an ancestor
	count   map[string]int  // watched directory → how many asked-for dirs use it
}

// NewDirWatch opens the inotify instance. Its error (no inotify, the
// instance limit) means the caller waits by polling.
func NewDirWatch() (*DirWatch, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return &DirWatch{fw: fw, dirs: map[string]string{}, pending: map[string]bool{}, count: map[string]int{}}, nil
}

// Events are the file events: Name is the path of the changed entry.
func (d *DirWatch) Events() <-chan fsnotify.Event { return d.fw.Events }

// Errors are the watch's errors: events were lost.
func (d *DirWatch) Errors() <-chan error { return d.fw.Errors }

// Add watches dir itself; a directory that does not exist is an error
// matching os.ErrNotExist (the caller watches its parent for it, or
// uses [DirWatch.AddOrAncestor]). When dir is removed its watch ends.
func (d *DirWatch) Add(dir string) error {
	dir = filepath.Clean(dir)
	if at, ok := d.dirs[dir]; ok && at == dir {
		return nil
	}
	if err := d.watch(dir); err != nil {
		return err
	}
	d.Remove(dir) // an ancestor watched for it before
	d.dirs[dir] = dir
	return nil
}

// AddOrAncestor watches dir and reports whether dir itself is watched now.
// While dir does not exist its nearest existing ancestor is watched
// instead (false, nil), and [DirWatch.Handle] moves the watch down as the
// directories on the way appear, and back up when dir is removed. An error
// is a directory that cannot be watched at all.
func (d *DirWatch) AddOrAncestor(dir string) (bool, error) {
	dir = filepath.Clean(dir)
	old, known := d.dirs[dir]
	if known && old == dir {
		return true, nil
	}
	for a := dir; ; a = filepath.Dir(a) {
		err := d.watch(a)
		if err == nil {
			if known {
				d.unwatch(old)
			}
			d.dirs[dir] = a
			d.pending[dir] = true
			if a != dir && d.watch(dir) == nil {
				// Created meanwhile: no event will say so.
				d.unwatch(a)
				d.dirs[dir] = dir
			}
			return d.dirs[dir] == dir, nil
		}
		if !errors.Is(err, os.ErrNotExist) || a == filepath.Dir(a) {
			if known {
				return false, nil // keep what was watched for it
			}
			return false, err
		}
	}
}

// Handle keeps the watch true to one event and reports whether the event
// may have made entries appear wholesale (a directory given to
// AddOrAncestor now exists, or was removed and is watched through its
// ancestor again): what is in it is to be read again. Call it for each
// event before looking at the event itself.
func (d *DirWatch) Handle(ev fsnotify.Event) bool {
	name := filepath.Clean(ev.Name)
	changed := false
	if d.count[name] > 0 && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		// A watched directory itself went away: the kernel dropped its
		// watch (or it moved). Watch the directories that used it again.
		delete(d.count, name)
		d.fw.Remove(name)
		for dir, at := range d.dirs {
			if at != name {
				continue
			}
			delete(d.dirs, dir)
			if d.pending[dir] {
				d.AddOrAncestor(dir)
				changed = true
			}
		}
	}
	if ev.Has(fsnotify.Create) {
		for dir := range d.pending {
			if at := d.dirs[dir]; at != dir && within(name, at) && within(dir, name) {
				if ok, _ := d.AddOrAncestor(dir); ok {
					changed = true
				}
			}
		}
	}
	return changed
}

// within reports whether p is base or under it.
func within(p, base string) bool {
	if p == base {
		return true
	}
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != "../")
}

// Watching reports whether dir itself (not an ancestor) is watched.
func (d *DirWatch) Watching(dir string) bool {
	dir = filepath.Clean(dir)
	return d.dirs[dir] == dir
}

// Remove stops watching dir (and the ancestor watched for it, if no other
// directory uses it).
func (d *DirWatch) Remove(dir string) {
	dir = filepath.Clean(dir)
	if at, ok := d.dirs[dir]; ok {
		delete(d.dirs, dir)
		delete(d.pending, dir)
		d.unwatch(at)
	}
}

func (d *DirWatch) watch(dir string) error {
	if d.count[dir] > 0 {
		d.count[dir]++
		return nil
	}
	if err := d.fw.Add(dir); err != nil {
		return err
	}
	d.count[dir] = 1
	return nil
}

func (d *DirWatch) unwatch(dir string) {
	d.count[dir]--
	if d.count[dir] <= 0 {
		delete(d.count, dir)
		d.fw.Remove(dir)
	}
}

// Close ends the watch and closes its channels.
func (d *DirWatch) Close() error {
	if d == nil || d.fw == nil {
		return nil
	}
	return d.fw.Close()
}

// Waker wakes one waiter when one of a few files may have changed: an event
// for it in its directory, a lost event, the directory appearing, or, only
// where the kernel cannot tell (no watch could be set up), the fallback
// poll. Use it in the order that loses nothing: NewWaker, then read the
// files, then wait on C and read again; a change after NewWaker returned
// wakes C. Wake-ups coalesce: C holds at most one.
type Waker struct {
	// C receives a value when the files may have changed.
	C <-chan struct{}

	c    chan struct{}
	dw   *DirWatch
	stop chan struct{}
	done chan struct{}
	once sync.Once
	poll bool
	// interrupt, when set, ends a wait of the Waker's goroutine (Close);
	// interrupted is closed once it has run (at once without one).
	interrupt   func()
	interrupted chan struct{}
	// woken counts the goroutine's wake-ups (Woken).
	woken atomic.Int64
	// writes counts the events that said a file's content may have
	// changed, while writesKnown (Writes).
	writes      atomic.Int64
	writesKnown atomic.Bool
}

func newWaker() *Waker {
	c := make(chan struct{}, 1)
	return &Waker{C: c, c: c, stop: make(chan struct{}), done: make(chan struct{}), interrupted: make(chan struct{})}
}

// NewWaker arms the wake-up for files (paths of files, which need not
// exist, nor their directories). fallback is the poll used when the
// directories cannot be watched; 0 means a quarter second. It never fails:
// Polling reports the fallback.
func NewWaker(fallback time.Duration, files ...string) *Waker {
	if fallback <= 0 {
		fallback = 250 * time.Millisecond
	}
	k := newWaker()
	dw, names := dirWatchFor(files)
	k.dw, k.poll = dw, dw == nil
	go k.run(names, fallback)
	return k
}

// dirWatchFor watches the directories of files (each through its nearest
// existing ancestor while it is absent) and returns the watch, nil when
// none could be set up, with the files' clean names.
func dirWatchFor(files []string) (*DirWatch, map[string]bool) {
	names := map[string]bool{}
	var dirs []string
	for _, f := range files {
		f = filepath.Clean(f)
		names[f] = true
		dirs = append(dirs, filepath.Dir(f))
	}
	dw, err := NewDirWatch()
	if err == nil {
		for _, d := range dirs {
			if _, err = dw.AddOrAncestor(d); err != nil {
				break
			}
		}
		if err != nil {
			dw.Close()
			dw = nil
		}
	}
	return dw, names
}

// NewFileWaker is [NewWaker] for files that are appended to, truncated
// and replaced in a directory where other files change often (an inbox
// beside its heartbeat, acks and offset; a registry row beside the other
// sessions' rows): it watches each file's inode itself, not its
// directory, so a neighbour's change does not wake even the Waker's own
// goroutine. An append, truncation or rewrite of a file wakes C; so does
// its replacement (a rename over it or its removal: its link count
// changes), after which the new file at the path is the one watched; a
// file absent (at the start or after a removal) is waited for through its
// directory, whose new entries then wake the goroutine until it appears.
// The order that loses nothing is NewWaker's: NewFileWaker, then read the
// files, then wait on C and read again. Where inotify is not available it
// is NewWaker.
func NewFileWaker(fallback time.Duration, files ...string) *Waker {
	if fallback <= 0 {
		fallback = 250 * time.Millisecond
	}
	return newFileWaker(fallback, files)
}

// Polling reports whether the Waker polls (no file events could be set up).
func (k *Waker) Polling() bool { return k != nil && k.poll }

// Woken is how many times the Waker's goroutine has woken so far: for
// each batch of file events it read (whether or not one woke C) and each
// tick of its poll. Tests and benchmarks count an idle waiter's cost with
// it.
func (k *Waker) Woken() int64 {
	if k == nil {
		return 0
	}
	return k.woken.Load()
}

// Writes reports how many batches of file events so far said that a
// watched file's content may have changed (a write or a truncation, or
// events lost), and whether the Waker counts them: only while it watches
// the files' inodes ([NewFileWaker] on Linux). A touch, which sets a
// file's times and writes nothing, is not one, nor is a write that failed
// with nothing written (the kernel sends no event for it, though it sets
// the file's time). A reader that reads the count before it looks at a
// file tells those from a rewrite to the same size.
func (k *Waker) Writes() (n int64, known bool) {
	if k == nil || !k.writesKnown.Load() {
		return 0, false
	}
	return k.writes.Load(), true
}

func (k *Waker) wake() {
	select {
	case k.c <- struct{}{}:
	default:
	}
}

func (k *Waker) run(names map[string]bool, fallback time.Duration) {
	defer close(k.done)
	k.watchOrPoll(names, fallback)
}

// watchOrPoll follows k.dw's events, if any, and polls when there are
// none (or they ended), until the Waker is closed.
func (k *Waker) watchOrPoll(names map[string]bool, fallback time.Duration) {
	if k.dw != nil && k.follow(names) {
		return
	}
	// No file events (or they ended): the fallback poll.
	k.pollEvery(fallback)
}

// pollEvery wakes C every fallback until the Waker is closed.
func (k *Waker) pollEvery(fallback time.Duration) {
	t := time.NewTicker(fallback)
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-t.C:
			k.woken.Add(1)
			k.wake()
		}
	}
}

// follow turns file events into wake-ups until the Waker is closed (true)
// or the events end (false).
func (k *Waker) follow(names map[string]bool) bool {
	defer k.dw.Close()
	for {
		select {
		case <-k.stop:
			return true
		case ev, ok := <-k.dw.Events():
			k.woken.Add(1)
			if !ok {
				k.wake()
				return false
			}
			if k.dw.Handle(ev) || names[filepath.Clean(ev.Name)] {
				k.wake()
			}
		case _, ok := <-k.dw.Errors():
			k.woken.Add(1)
			if !ok {
				k.wake()
				return false
			}
			k.wake() // events were lost: look
		}
	}
}

// Close releases the watch and returns once it is released: an inotify
// instance that held a watch is retired by the kernel after a grace
// period (milliseconds), which the close of its descriptor waits for. It
// is safe to call twice, after Drop and on nil.
func (k *Waker) Close() {
	if k == nil || k.stop == nil {
		return
	}
	k.end(false)
	<-k.interrupted
	<-k.done
	waitedCloses.Add(1)
}

// Drop releases the watch as Close does, without waiting for it: the
// descriptor is closed on a goroutine of the Waker's, so a caller done
// waiting goes on at once while the kernel's grace period (see Close)
// passes beside its work. A process that exits meanwhile still waits for
// what is left of it. Safe to call twice, after Close and on nil.
func (k *Waker) Drop() {
	if k == nil || k.stop == nil {
		return
	}
	k.end(true)
}

// end stops the Waker's goroutine, once; background interrupts its wait
// on a goroutine of its own.
func (k *Waker) end(background bool) {
	k.once.Do(func() {
		close(k.stop)
		switch {
		case k.interrupt == nil:
			close(k.interrupted)
		case background:
			go func() {
				k.interrupt()
				close(k.interrupted)
			}()
		default:
			k.interrupt()
			close(k.interrupted)
		}
	})
}

// waitedCloses counts the Close calls of this process's Wakers.
var waitedCloses atomic.Int64

// WaitedCloses is how many times a Waker of this process was closed with
// Close, which waits for the kernel to retire its watch (not Drop): a
// test counts that a path which must not wait for it drops its Waker.
func WaitedCloses() int64 { return waitedCloses.Load() }
