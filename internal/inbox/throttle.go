package inbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// ThrottleDir is the ledger's directory under the state dir. It holds one
// file per (target session, sender) key, named by a hash of the key,
// holding the unix ms of the key's last admitted line; each file is also
// the flock its key's decisions are taken under. (The single JSON ledger
// of earlier versions, throttle.json, is no longer read.)
const ThrottleDir = "throttle"

// ledgerKeep is how long the ledger remembers a send. Older entries count
// as absent and are pruned from time to time; an interval longer than this
// is honoured only as far as ledgerKeep reaches.
const ledgerKeep = 24 * time.Hour

// pruneEvery is how often, at most, an admission looks for entries older
// than ledgerKeep to remove.
const pruneEvery = time.Hour

// pruneMark is the file in the ledger directory whose mtime says when it
// was last pruned.
const pruneMark = ".pruned"

// ErrBadInterval reports a negative minimum interval.
var ErrBadInterval = errors.New("negative minimum interval")

// Throttle admits at most one line per (target session, sender) within
// Interval. Its ledger lives in files so that every process on the station
// shares it: each decision is taken under the flock of its key's file, so
// of many concurrent senders with the same key exactly one wins inside the
// interval, while senders of other keys never wait for it. A decision
// reads and writes its own key's entry alone, so its cost does not grow
// with the sessions and senders the ledger remembers. The ledger is
// advisory state and is not synced to disk: after a crash of the machine
// it may have forgotten the last sends (an unreadable entry is an absent
// one).
type Throttle struct {
	// Dir is the ledger directory (<state dir>/throttle).
	Dir string
	// Interval is the minimum time between two lines of one sender to one
	// session; 0 disables the throttle. Negative is [ErrBadInterval].
	Interval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// LockWait bounds the wait for a key's lock; 0 means
	// DefaultThrottleLockWait. A decision holds it for microseconds, so a
	// longer wait is a holder that is stuck (stopped, or another program
	// holding the file): then Do answers [ErrThrottleLocked], naming it.
	LockWait time.Duration
}

// DefaultThrottleLockWait is how long Do waits for a key's lock.
const DefaultThrottleLockWait = 5 * time.Second

// ErrThrottleLocked reports a key's ledger lock held for longer than
// Throttle.LockWait; nothing was written.
var ErrThrottleLocked = errors.New("throttle ledger locked")

// Admission is the throttle's decision.
type Admission struct {
	Admitted bool
	// RetryAfter is how long to wait before resending, when not admitted.
	RetryAfter time.Duration
}

// Do decides for one line of sender from to session sid. When the line is
// admitted it runs write (the append) while still holding the lock, and
// records the send only if write succeeds: a refused or failed write never
// consumes the interval. When it is not admitted write is not called. The
// error is write's, or the ledger's (then write was not called, unless
// Admitted says so: the line was written and only its record failed).
func (t *Throttle) Do(ctx context.Context, sid, from string, write func() error) (Admission, error) {
	if t.Interval < 0 {
		return Admission{}, fmt.Errorf("throttle: %w: %v", ErrBadInterval, t.Interval)
	}
	if t.Interval == 0 {
		return Admission{Admitted: true}, write()
	}
	lock, err := t.lockKey(ctx, t.KeyFile(sid, from))
	if err != nil {
		return Admission{}, err
	}
	defer lock.Unlock()

	now := t.now()
	if last, ok := readEntry(lock.File()); ok {
		elapsed := now.Sub(time.UnixMilli(last))
		if elapsed >= 0 && elapsed < t.Interval && elapsed < ledgerKeep {
			return Admission{RetryAfter: t.Interval - elapsed}, nil
		}
	}
	if err := write(); err != nil {
		return Admission{Admitted: true}, err
	}
	if err := writeEntry(lock.File(), now.UnixMilli()); err != nil {
		return Admission{Admitted: true}, &fs.PathError{Op: "record", Path: lock.File().Name(), Err: err}
	}
	t.pruneMaybe(now)
	return Admission{Admitted: true}, nil
}

// KeyFile returns the ledger file of the key (sid, from) in Dir: named by
// the first 128 bits of the SHA-256 of both (sid's length first, so no two
// keys run together), in hex. The raw bytes are hashed, so a key that is
// not UTF-8 is as distinct as any other.
func (t *Throttle) KeyFile(sid, from string) string {
	h := sha256.New()
	h.Write(strconv.AppendInt(nil, int64(len(sid)), 10))
	h.Write([]byte{':'})
	h.Write([]byte(sid))
	h.Write([]byte(from))
	return filepath.Join(t.Dir, hex.EncodeToString(h.Sum(nil)[:16]))
}

// isKeyName reports whether name is a ledger file's name.
func isKeyName(name string) bool {
	if len(name) != 32 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil
}

// lockKey takes the flock of the key file at path. A pruner may remove the
// file between its open and its lock; then the lock is on a file no longer
// at path, and it is taken again on the file that is.
func (t *Throttle) lockKey(ctx context.Context, path string) (*fsx.Lock, error) {
	wait := t.LockWait
	if wait <= 0 {
		wait = DefaultThrottleLockWait
	}
	lctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		lock, err := fsx.LockContext(lctx, path)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				holder := "an unknown process"
				if pid := fsx.Holder(path); pid > 0 {
					holder = fmt.Sprintf("pid %d", pid)
				}
				return nil, fmt.Errorf("%w by %s for more than %s (%s)", ErrThrottleLocked, holder, wait, path)
			}
			return nil, err
		}
		held, err := lock.File().Stat()
		if err != nil {
			lock.Unlock()
			return nil, err
		}
		if at, err := os.Lstat(path); err == nil && os.SameFile(held, at) {
			return lock, nil
		}
		lock.Unlock()
	}
}

// readEntry reads the unix ms a ledger file holds; ok is false for an empty
// or unreadable entry.
func readEntry(f *os.File) (int64, bool) {
	var buf [entryLen + 1]byte
	n, err := f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(string(buf[:n])), 10, 64)
	return ms, err == nil
}

// entryLen is the length of every entry: the unix ms zero-padded to 20
// characters and a newline, so that an entry is rewritten in place, never
// truncated (on ext4 a truncation to zero, like a rename over a file,
// makes the close wait for the data to reach the disk).
const entryLen = 21

// writeEntry replaces the content of a ledger file with ms. The file is
// locked; a reader that finds it torn (a crash mid-write) takes it as
// absent.
func writeEntry(f *os.File, ms int64) error {
	b := fmt.Appendf(nil, "%020d\n", ms)
	if fi, err := f.Stat(); err != nil {
		return err
	} else if fi.Size() > entryLen {
		// Not an entry this code wrote: cut it to the entry's length.
		if err := f.Truncate(entryLen); err != nil {
			return err
		}
	}
	_, err := f.WriteAt(b, 0)
	return err
}

// pruneMaybe removes, at most once per pruneEvery, the ledger files older
// than ledgerKeep. Each is removed under its lock and only when its entry
// is still old (or empty), so a decision taking place on it is never lost.
// Pruning is hygiene: a failure is ignored.
func (t *Throttle) pruneMaybe(now time.Time) {
	mark := filepath.Join(t.Dir, pruneMark)
	real := time.Now()
	if fi, err := os.Lstat(mark); err == nil && real.Sub(fi.ModTime()) < pruneEvery {
		return
	}
	if fsx.WriteFileAtomic(mark, nil) != nil {
		return
	}
	ents, err := os.ReadDir(t.Dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !isKeyName(e.Name()) {
			continue
		}
		// Files touched within ledgerKeep (by the wall clock) are never
		// opened; the entry's own time decides for the rest.
		fi, err := e.Info()
		if err != nil || real.Sub(fi.ModTime()) < ledgerKeep {
			continue
		}
		path := filepath.Join(t.Dir, e.Name())
		lock, err := fsx.TryLock(path)
		if err != nil {
			continue
		}
		if ms, ok := readEntry(lock.File()); !ok || now.Sub(time.UnixMilli(ms)) >= ledgerKeep {
			os.Remove(path)
		}
		lock.Unlock()
	}
}

func (t *Throttle) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// ThrottleFor returns the throttle whose ledger is in stateDir.
func ThrottleFor(stateDir string, interval time.Duration, now func() time.Time) *Throttle {
	return &Throttle{Dir: filepath.Join(stateDir, ThrottleDir), Interval: interval, Now: now}
}
