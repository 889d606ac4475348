package hostile

import (
	"os"

	"golang.org/x/sys/unix"
)

// NoFreeFD lowers this process's soft limit on open descriptors
// (RLIMIT_NOFILE) to its lowest free descriptor, so that no new one can be
// opened: inotify_init1 then fails with EMFILE, the error a user who
// reached fs.inotify.max_user_instances gets, which makes a file watch
// fail as that limit would, without touching the machine's settings or
// other processes. It returns what restores the limit (also run at
// cleanup; running it twice is harmless). Descriptors already open stay
// usable. The limit is the whole process's: only for a test that does not
// run in parallel with others, and that restores it before it opens
// anything itself.
func NoFreeFD(t TB) (restore func()) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal("hostile: getrlimit:", err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal("hostile:", err)
	}
	lowest := f.Fd() // the lowest free descriptor: every one below is open
	f.Close()
	lim := old
	lim.Cur = uint64(lowest)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal("hostile: setrlimit:", err)
	}
	restore = func() { unix.Setrlimit(unix.RLIMIT_NOFILE, &old) }
	t.Cleanup(restore)
	return restore
}

// Open descriptor kinds as /proc/self/fd names them, for [OpenFDs].
const (
	InotifyFD = "anon_inode:inotify"
	TimerFD   = "anon_inode:[timerfd]"
)

// OpenFDs counts this process's open descriptors whose /proc/self/fd link
// reads kind (InotifyFD, TimerFD): a test that an object's descriptor is
// opened and closed. It skips the test where /proc/self/fd cannot be read.
// The count is the whole process's: only for a test that does not run in
// parallel with others opening such descriptors.
func OpenFDs(t TB, kind string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd: ", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == kind {
			n++
		}
	}
	return n
}
