package station

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// How a target was matched.
const (
	MatchID       = "id"       // the full session id
	MatchPID      = "pid"      // the claude process id
	MatchName     = "name"     // the exact session name
	MatchPrefix   = "prefix"   // a unique session id prefix of at least 8 characters
	MatchFragment = "fragment" // a unique name fragment of at least 4 characters
)

// Minimum lengths of the partial forms of a target.
const (
	MinIDPrefix     = 8
	MinNameFragment = 4
)

// Target is a resolved session: a live one, or a full id that no live
// session names (an offline session; lines for it wait for its next doorman).
type Target struct {
	SessionID string
	Running   bool
	// Session is the live registry row; nil when Running is false.
	Session *Session
	// MatchedBy is one of the Match constants.
	MatchedBy string
}

// Sentinels for why a target does not resolve.
var (
	ErrUnknownTarget   = errors.New("unknown target")
	ErrAmbiguousTarget = errors.New("ambiguous target")
	ErrBadTarget       = errors.New("bad target")
)

// TargetError says which target failed to resolve and why. Candidates lists
// the session ids an ambiguous target matched.
type TargetError struct {
	Target     string
	Candidates []string
	Err        error
}

func (e *TargetError) Error() string {
	if len(e.Candidates) > 0 {
		return fmt.Sprintf("%s %q: matches %s", e.Err, e.Target, strings.Join(e.Candidates, ", "))
	}
	return fmt.Sprintf("%s %q", e.Err, e.Target)
}

func (e *TargetError) Unwrap() error { return e.Err }

// Resolve finds the session a user means by target, in this order: a full
// session id (live, else an offline target), a pid of a live session, the
// exact name of live sessions, then a unique id prefix (≥ 8 characters) or
// name fragment (≥ 4 characters) among live sessions. Several matches are
// [ErrAmbiguousTarget]; none is [ErrUnknownTarget].
func (s *Station) Resolve(target string) (Target, error) {
	target = strings.TrimSpace(target)
	if target == "" || strings.ContainsAny(target, "/\x00\n") {
		return Target{}, &TargetError{Target: target, Err: ErrBadTarget}
	}
	live, err := s.Live()
	if err != nil {
		return Target{}, err
	}
	one := func(x Session, how string) Target {
		return Target{SessionID: x.SessionID, Running: true, Session: &x, MatchedBy: how}
	}
	if IsSessionID(target) {
		id := strings.ToLower(target)
		for _, x := range live {
			if strings.EqualFold(x.SessionID, id) {
				return one(x, MatchID), nil
			}
		}
		return Target{SessionID: id, MatchedBy: MatchID}, nil
	}
	if pid, err := strconv.Atoi(target); err == nil && pid > 0 {
		for _, x := range live {
			if x.PID == pid {
				return one(x, MatchPID), nil
			}
		}
		return Target{}, &TargetError{Target: target, Err: ErrUnknownTarget}
	}
	pick := func(match func(Session) bool, how string) (Target, bool, error) {
		var hits []Session
		for _, x := range live {
			if match(x) {
				hits = append(hits, x)
			}
		}
		switch len(hits) {
		case 0:
			return Target{}, false, nil
		case 1:
			return one(hits[0], how), true, nil
		}
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.SessionID
		}
		sort.Strings(ids)
		return Target{}, true, &TargetError{Target: target, Candidates: ids, Err: ErrAmbiguousTarget}
	}
	if t, ok, err := pick(func(x Session) bool { return x.Name != "" && x.Name == target }, MatchName); ok {
		return t, err
	}
	// A prefix and a fragment are weighed together: a string that is both
	// an id prefix of one session and a name fragment of another is ambiguous.
	lower := strings.ToLower(target)
	byPrefix := func(x Session) bool {
		return len(target) >= MinIDPrefix && strings.HasPrefix(strings.ToLower(x.SessionID), lower)
	}
	byFragment := func(x Session) bool {
		return len(target) >= MinNameFragment && x.Name != "" && strings.Contains(x.Name, target)
	}
	if t, ok, err := pick(func(x Session) bool { return byPrefix(x) || byFragment(x) }, ""); ok {
		if err == nil {
			t.MatchedBy = MatchFragment
			if byPrefix(*t.Session) {
				t.MatchedBy = MatchPrefix
			}
		}
		return t, err
	}
	return Target{}, &TargetError{Target: target, Err: ErrUnknownTarget}
}
