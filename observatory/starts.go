package observatory

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/claudeproc"
)

// The states of a start (Start.State) the document lists without
// IncludeFinished.
const (
	StartStarted = "started" // its supervisor runs it (or its unit is about to)
	StartLost    = "lost"    // its supervisor is gone without writing the outcome
)

// Start is a headless start's result file in <state>/start/, the starts
// array of the document: the runs still started and the lost ones (every
// one with Options.IncludeFinished). A started file whose supervisor is
// gone is listed as lost, and the reader finalizes it (see Build).
type Start struct {
	Session       string             `json:"session"`
	State         string             `json:"state"` // started, lost; with IncludeFinished also completed, failed, timeout, refused
	ResultFile    string             `json:"result_file"`
	Unit          inboxv1.NullString `json:"unit"` // the systemd unit of a detached start
	PID           *int               `json:"pid"`  // claude's
	SupervisorPID *int               `json:"supervisor_pid"`
	StartedAt     inboxv1.NullString `json:"started_at"`
	EndedAt       inboxv1.NullString `json:"ended_at"`
	Reason        inboxv1.NullString `json:"reason"`
	// Finalized: this read wrote the lost state into the result file.
	Finalized bool `json:"finalized"`
}

// starts lists the result files of <state>/start/, oldest first.
func (b *builder) starts(pid int) ([]Start, []string) {
	out := []Start{}
	dir := claudeproc.StartDir(b.st.Paths)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, []string{err.Error()}
	}
	rr := claudeproc.ResultReader{Proc: b.st.Proc, Paths: b.st.Paths, Now: func() time.Time { return b.now }, PID: pid}
	var warns []string
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, name)
		if !b.all {
			// A finished file is never rewritten: its first key tells.
			if st, err := claudeproc.FileState(path); err == nil && st != StartStarted && st != StartLost {
				continue
			}
		}
		f, err := rr.Read(path)
		if err != nil {
			warns = append(warns, err.Error())
			continue
		}
		if !b.all && f.State != StartStarted && f.State != StartLost {
			continue
		}
		s := Start{Session: f.SessionID, State: f.State, ResultFile: path, Unit: inboxv1.NullString(f.Unit),
			StartedAt: inboxv1.NullString(f.StartedAt), EndedAt: inboxv1.NullString(f.EndedAt), Reason: inboxv1.NullString(f.Reason), Finalized: f.Finalized}
		if f.PID > 0 {
			s.PID = &f.PID
		}
		if f.SupervisorPID > 0 {
			s.SupervisorPID = &f.SupervisorPID
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt < out[j].StartedAt })
	return out, warns
}
