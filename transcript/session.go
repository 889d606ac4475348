package transcript

import (
	"errors"
	"fmt"

	"github.com/oo-family/oo-claude/station"
)

// Reading is a session's last exchanges, with where they were read: what
// `oo-claude read --json` prints.
type Reading struct {
	Session    string     `json:"session"`
	Name       string     `json:"name"`
	PID        int        `json:"pid"`
	Running    bool       `json:"running"`
	Status     string     `json:"status"` // the registry status, or "offline"
	Transcript string     `json:"transcript"`
	Turns      int        `json:"turns"`
	Exchanges  []Exchange `json:"exchanges"` // oldest first; never nil
}

// ReadSession resolves target on st (a running session by id, pid, name,
// fragment or prefix; one that is not running by its full id), locates its
// transcript under projectsDir (by the registry row's cwd when it runs)
// and returns its last n exchanges. Target errors are station's
// (*station.TargetError); a missing transcript wraps [ErrNotFound]. A nil
// st is an error, not a panic.
func ReadSession(st *station.Station, projectsDir, target string, n int) (Reading, error) {
	if n <= 0 {
		n = DefaultExchanges
	}
	if st == nil {
		return Reading{}, pathError("read", projectsDir, errors.New("no station"))
	}
	t, err := st.Resolve(target)
	if err != nil {
		return Reading{}, err
	}
	r := Reading{Session: t.SessionID, Running: t.Running, Status: "offline", Turns: n}
	cwd := ""
	if t.Session != nil {
		r.Name, r.PID, r.Status, cwd = t.Session.Name, t.Session.PID, t.Session.Status, t.Session.CWD
	}
	path, err := Locate(projectsDir, t.SessionID, cwd)
	if errors.Is(err, ErrNotFound) {
		return r, fmt.Errorf("no transcript for session %s under %s: %w", t.SessionID, projectsDir, err)
	}
	if err != nil {
		return r, err
	}
	r.Transcript = path
	if r.Exchanges, err = Exchanges(path, n); err != nil {
		return r, err
	}
	if r.Exchanges == nil {
		r.Exchanges = []Exchange{}
	}
	return r, nil
}
