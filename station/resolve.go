package station

import (
	"bytes"
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
	minIDPrefix     = 8
	minNameFragment = 4
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
// session id (live, else an offline target), the pid of a live session (a
// decimal number as the kernel writes it, without sign or leading zeros),
// the exact name of live sessions, then a unique id prefix (≥ 8 characters)
// or name fragment (≥ 4 characters) among live sessions. An all-digit target
// that is no live session's pid goes on to the name, prefix and fragment
// rules, so a session named "2026" or an id prefix of digits alone is
// found. Several matches are [ErrAmbiguousTarget]; none is
// [ErrUnknownTarget].
//
// The work does not grow with the sessions a target cannot name: a pid
// target reads its own registry row (<pid>.json) alone; any other target
// reads the registry files' bytes but decodes, and checks the liveness of,
// only the rows whose bytes can hold a match (and the rows that name the
// same session id as a live one of them, since the newest row of a session
// id is the one that counts, as in [Station.Live]). A pid names one
// process: its row is the answer even when a newer process's row names the
// same session id.
func (s *Station) Resolve(target string) (Target, error) {
	target = strings.TrimSpace(target)
	if target == "" || strings.ContainsAny(target, "/\x00\n") {
		return Target{}, &TargetError{Target: target, Err: ErrBadTarget}
	}
	one := func(x Session, how string) Target {
		return Target{SessionID: x.SessionID, Running: true, Session: &x, MatchedBy: how}
	}
	if IsSessionID(target) {
		id := strings.ToLower(target)
		fold := newFoldSearch(id)
		live, err := s.liveWhere(rowMatch{
			raw:    func(b []byte) bool { return !plainJSON(b) || fold.in(b) },
			fields: func(_, sid string) bool { return strings.EqualFold(sid, id) },
		})
		if err != nil {
			return Target{}, err
		}
		for _, x := range live {
			if strings.EqualFold(x.SessionID, id) {
				return one(x, MatchID), nil
			}
		}
		return Target{SessionID: id, MatchedBy: MatchID}, nil
	}
	if isPIDText(target) {
		pid, _ := strconv.Atoi(target)
		if x, ok := s.LiveByPID(pid); ok {
			return one(x, MatchPID), nil
		}
	}
	// A prefix and a fragment are weighed together: a string that is both
	// an id prefix of one session and a name fragment of another is ambiguous.
	lower := strings.ToLower(target)
	isName := func(name string) bool { return name != "" && name == target }
	isPrefix := func(sid string) bool {
		return len(target) >= minIDPrefix && strings.HasPrefix(strings.ToLower(sid), lower)
	}
	isFragment := func(name string) bool {
		return len(target) >= minNameFragment && name != "" && strings.Contains(name, target)
	}
	byName := func(x Session) bool { return isName(x.Name) }
	byPrefix := func(x Session) bool { return isPrefix(x.SessionID) }
	byFragment := func(x Session) bool { return isFragment(x.Name) }
	// A row whose strings are plain can name the target (in full or as a
	// fragment) only if its bytes hold it, and can have an id with the
	// prefix only if its bytes hold the prefix in some case. A row's id is
	// a session id (parseRow refuses any other), so only a target of hex
	// digits and dashes can be a prefix of one.
	prefixable := len(target) >= minIDPrefix && strings.Trim(lower, "0123456789abcdef-") == ""
	fold := newFoldSearch(lower)
	live, err := s.liveWhere(rowMatch{
		raw: func(b []byte) bool {
			return !plainJSON(b) || bytes.Contains(b, []byte(target)) || prefixable && fold.in(b)
		},
		fields: func(name, sid string) bool { return isName(name) || prefixable && isPrefix(sid) || isFragment(name) },
	})
	if err != nil {
		return Target{}, err
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
	if t, ok, err := pick(byName, MatchName); ok {
		return t, err
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
