package station

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// Row is one registry file, <sessions>/<pid>.json, as Claude Code writes it.
// Unknown fields are tolerated and ignored.
type Row struct {
	PID                    int      `json:"pid"`
	SessionID              string   `json:"sessionId"`
	CWD                    string   `json:"cwd"`
	StartedAt              int64    `json:"startedAt"` // unix ms
	ProcStart              string   `json:"procStart"`
	Version                string   `json:"version,omitempty"`
	PeerProtocol           int      `json:"peerProtocol,omitempty"`
	PeerFeatures           []string `json:"peerFeatures,omitempty"`
	Kind                   string   `json:"kind,omitempty"`       // interactive, bg, daemon, daemon-worker
	Entrypoint             string   `json:"entrypoint,omitempty"` // sdk-cli for -p, claude-desktop, ...
	PidDomain              string   `json:"pidDomain,omitempty"`
	AsksForConvertedSkills any      `json:"asksForConvertedSkills,omitempty"`
	MessagingSocketPath    string   `json:"messagingSocketPath,omitempty"`
	Name                   string   `json:"name,omitempty"`
	NameSource             string   `json:"nameSource,omitempty"`
	NameSince              int64    `json:"nameSince,omitempty"`
	HostSessionID          string   `json:"hostSessionId,omitempty"` // local_…, desktop sessions only
	Status                 string   `json:"status,omitempty"`        // busy, idle, waiting
	WaitingFor             any      `json:"waitingFor,omitempty"`
	UpdatedAt              int64    `json:"updatedAt,omitempty"`
	StatusUpdatedAt        int64    `json:"statusUpdatedAt,omitempty"`
}

// Registry statuses as Claude Code writes them.
const (
	StatusBusy    = "busy"
	StatusIdle    = "idle"
	StatusWaiting = "waiting"
)

// Session is a registry row with what the station found out about it.
type Session struct {
	Row
	File string // the registry file
	// Live is true when the pid runs with the row's procStart.
	Live bool
}

// Station is a view of one machine: its paths, its process table and a clock.
type Station struct {
	Paths Paths
	Proc  Proc
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// New returns a Station reading the given paths and the real /proc.
func New(p Paths) *Station { return &Station{Paths: p} }

func (s *Station) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Clock returns the station's clock, time.Now when none was given.
func (s *Station) Clock() func() time.Time {
	if s.Now != nil {
		return s.Now
	}
	return time.Now
}

// IsSessionID reports whether s has the shape of a session id: a UUID in
// its canonical 36-character form (either case). Session ids become file
// names, so nothing else is accepted as one. Every oo-claude package checks
// ids and msg_ids with this one function.
func IsSessionID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// ErrBadRow reports a registry file that cannot be used.
var ErrBadRow = errors.New("unusable registry row")

// ReadRow reads and checks one registry file.
func ReadRow(path string) (Row, error) {
	b, err := fsx.ReadFile(path)
	if err != nil {
		return Row{}, err
	}
	var r Row
	if err := json.Unmarshal(b, &r); err != nil {
		return Row{}, &fs.PathError{Op: "parse", Path: path, Err: fmt.Errorf("%w: %v", ErrBadRow, err)}
	}
	if r.PID <= 0 || !IsSessionID(r.SessionID) {
		return Row{}, &fs.PathError{Op: "parse", Path: path, Err: fmt.Errorf("%w: pid %d, sessionId %q", ErrBadRow, r.PID, r.SessionID)}
	}
	return r, nil
}

// Sessions reads every registry row, live or not, ordered by start time
// (oldest first). Files that are not rows (keys, temporary files) and rows
// that cannot be parsed are skipped: a row being rewritten must not fail a
// listing.
func (s *Station) Sessions() ([]Session, error) {
	ents, err := os.ReadDir(s.Paths.SessionsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []Session
	for _, e := range ents {
		name := e.Name()
		stem, ok := strings.CutSuffix(name, ".json")
		if !ok {
			continue
		}
		if _, err := strconv.Atoi(stem); err != nil {
			continue
		}
		path := filepath.Join(s.Paths.SessionsDir, name)
		r, err := ReadRow(path)
		if err != nil {
			continue
		}
		out = append(out, Session{Row: r, File: path, Live: s.Proc.Alive(r.PID, r.ProcStart)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].StartedAt != out[j].StartedAt {
			return out[i].StartedAt < out[j].StartedAt
		}
		return out[i].PID < out[j].PID
	})
	return out, nil
}

// Live returns the live sessions: rows whose pid runs with their procStart.
// When two live rows name the same session id, the newer one is kept.
func (s *Station) Live() ([]Session, error) {
	all, err := s.Sessions()
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	var out []Session
	for _, x := range all {
		if !x.Live {
			continue
		}
		if i, ok := seen[x.SessionID]; ok {
			out[i] = x // sorted oldest first: the later row wins
			continue
		}
		seen[x.SessionID] = len(out)
		out = append(out, x)
	}
	return out, nil
}

// LiveByPID returns the live row of pid, if any.
func (s *Station) LiveByPID(pid int) (Session, bool) {
	path := filepath.Join(s.Paths.SessionsDir, strconv.Itoa(pid)+".json")
	r, err := ReadRow(path)
	if err != nil || r.PID != pid || !s.Proc.Alive(r.PID, r.ProcStart) {
		return Session{}, false
	}
	return Session{Row: r, File: path, Live: true}, true
}

// LiveBySessionID returns the live row that names id, if any.
func (s *Station) LiveBySessionID(id string) (Session, bool, error) {
	live, err := s.Live()
	if err != nil {
		return Session{}, false, err
	}
	for _, x := range live {
		if x.SessionID == id {
			return x, true, nil
		}
	}
	return Session{}, false, nil
}

// KeyFile returns the path of a session's key file:
// <sessions>/<pid>.<sha256 hex of the socket path>.key.
func (s *Station) KeyFile(r Row) string {
	sum := sha256.Sum256([]byte(r.MessagingSocketPath))
	return filepath.Join(s.Paths.SessionsDir, strconv.Itoa(r.PID)+"."+hex.EncodeToString(sum[:])+".key")
}

// ErrNoToken reports a session whose key file holds no usable token.
var ErrNoToken = errors.New("no messaging token")

// PeerToken reads the session's messaging token from its key file. The key
// must name the row's procStart, so a stale key of a recycled pid is not
// used. Errors never carry the token.
func (s *Station) PeerToken(r Row) (Token, error) {
	path := s.KeyFile(r)
	b, err := fsx.ReadFile(path)
	if err != nil {
		return "", err
	}
	var k struct {
		PeerToken string `json:"peerToken"`
		ProcStart string `json:"procStart"`
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return "", &fs.PathError{Op: "parse", Path: path, Err: ErrNoToken}
	}
	if k.PeerToken == "" || (k.ProcStart != "" && r.ProcStart != "" && k.ProcStart != r.ProcStart) {
		return "", &fs.PathError{Op: "read", Path: path, Err: ErrNoToken}
	}
	return Token(k.PeerToken), nil
}
