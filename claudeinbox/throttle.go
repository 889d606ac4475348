package claudeinbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// ThrottleFile is the ledger's name under the state dir; its flock is
// ThrottleFile + ".lock" beside it.
const ThrottleFile = "throttle.json"

// LedgerKeep is how long the ledger remembers a send. Older entries are
// pruned when the ledger is rewritten; an interval longer than this is
// honoured only as far as LedgerKeep reaches.
const LedgerKeep = 24 * time.Hour

// ErrBadInterval reports a negative minimum interval.
var ErrBadInterval = errors.New("negative minimum interval")

// Throttle admits at most one line per (target session, sender) within
// Interval. Its ledger lives in a file so that every process on the
// station shares it: each decision is taken under an flock and the ledger
// is replaced atomically, so of many concurrent senders with the same key
// exactly one wins inside the interval. The ledger is advisory state and is
// not synced to disk: after a crash of the machine it may have forgotten
// the last sends (an unreadable ledger is an empty one).
type Throttle struct {
	// Path is the ledger file (<state dir>/throttle.json).
	Path string
	// Interval is the minimum time between two lines of one sender to one
	// session; 0 disables the throttle. Negative is [ErrBadInterval].
	Interval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Admission is the throttle's decision.
type Admission struct {
	Admitted bool
	// RetryAfter is how long to wait before resending, when not admitted.
	RetryAfter time.Duration
}

// ledger is the file's shape: session id → sender → unix ms of the last
// admitted line.
type ledger struct {
	V    int                         `json:"v"`
	Last map[string]map[string]int64 `json:"last"`
}

// Do decides for one line of sender from to session sid. When the line is
// admitted it runs write (the append) while still holding the lock, and
// records the send only if write succeeds: a refused or failed write never
// consumes the interval. When it is not admitted write is not called. The
// error is write's, or the ledger's (then write was not called).
func (t *Throttle) Do(ctx context.Context, sid, from string, write func() error) (Admission, error) {
	if t.Interval < 0 {
		return Admission{}, fmt.Errorf("throttle: %w: %v", ErrBadInterval, t.Interval)
	}
	if t.Interval == 0 {
		return Admission{Admitted: true}, write()
	}
	lock, err := fsx.LockContext(ctx, t.Path+".lock")
	if err != nil {
		return Admission{}, err
	}
	defer lock.Unlock()

	l, err := t.read()
	if err != nil {
		return Admission{}, err
	}
	// The ledger is JSON, which stores every byte that is not UTF-8 as
	// U+FFFD; key the lookup the same way, or such a key is never found
	// again and never throttled.
	sid, from = string([]rune(sid)), string([]rune(from))
	now := t.now()
	if last, ok := l.Last[sid][from]; ok {
		elapsed := now.Sub(time.UnixMilli(last))
		if elapsed >= 0 && elapsed < t.Interval {
			return Admission{RetryAfter: t.Interval - elapsed}, nil
		}
	}
	if err := write(); err != nil {
		return Admission{Admitted: true}, err
	}
	if l.Last[sid] == nil {
		l.Last[sid] = map[string]int64{}
	}
	l.Last[sid][from] = now.UnixMilli()
	l.prune(now)
	b, err := json.Marshal(l)
	if err != nil {
		return Admission{Admitted: true}, err
	}
	// Replaced atomically but not synced: the ledger is advisory, so a
	// crash may at worst forget the last sends, and then admits one more
	// line per key inside the interval (the receiver's own bucket and
	// duplicate window still hold). An fsync here cost more than the rest
	// of the decision (BENCHMARKS.md, "send").
	return Admission{Admitted: true}, fsx.ReplaceFile(t.Path, b)
}

func (t *Throttle) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// read loads the ledger. A missing file is an empty ledger; so is one that
// does not parse (a ledger is advisory state, and an atomic replace never
// leaves a torn one behind), but a symlink is refused.
func (t *Throttle) read() (ledger, error) {
	l := ledger{V: 1, Last: map[string]map[string]int64{}}
	b, err := fsx.ReadFile(t.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return l, nil
	case err != nil:
		return l, err
	}
	var got ledger
	if json.Unmarshal(b, &got) == nil && got.Last != nil {
		got.V = 1
		return got, nil
	}
	return l, nil
}

func (l *ledger) prune(now time.Time) {
	cut := now.Add(-LedgerKeep).UnixMilli()
	for sid, m := range l.Last {
		for from, ms := range m {
			if ms < cut {
				delete(m, from)
			}
		}
		if len(m) == 0 {
			delete(l.Last, sid)
		}
	}
}

// ThrottleFor returns the throttle whose ledger is in stateDir.
func ThrottleFor(stateDir string, interval time.Duration, now func() time.Time) *Throttle {
	return &Throttle{Path: filepath.Join(stateDir, ThrottleFile), Interval: interval, Now: now}
}
