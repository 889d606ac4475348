package claudeproc

import (
	"bytes"
	"encoding/json"
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
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/station"
)

// The states of a start's result file that its readers act on (headless
// names every state as a Class).
const (
	// StateStarted: a supervisor runs the start (or a detached start
	// waits for its unit) and will write the outcome.
	StateStarted = "started"
	// StateLost: the file was started and its supervisor is gone
	// without writing the outcome (killed, OOM-killed, the machine
	// rebooted); claude died with it. Only a reader writes it.
	StateLost = "lost"
)

// ReasonSupervisorGone begins a lost file's reason.
const ReasonSupervisorGone = "supervisor-gone"

// maxResultFile bounds a result file read: the result text, the stderr
// tail (4 KiB) and the turns of one start.
const maxResultFile = 16 << 20

// StartDir is where starts keep their result files by default:
// <state>/start/<uuid>.json.
func StartDir(p station.Paths) string { return filepath.Join(p.StateDir, "start") }

// WriteResultFile writes v, a start's result file, to path: indented JSON
// and a newline, replaced atomically (0600). It is the file's one encoding;
// the supervisor writes every state with it, a reader the lost one.
func WriteResultFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return fsx.WriteFileAtomic(path, append(b, '\n'))
}

// ResultFile is what a reader makes of a start's result file.
type ResultFile struct {
	Path string
	// State is the file's state, except for a started run whose
	// supervisor is gone, which is StateLost (also when this read could
	// not write it: Finalized says whether it did).
	State         string
	SessionID     string
	Unit          string // "" unless detached
	PID           int    // claude's, 0 when not recorded
	SupervisorPID int    // 0 when not recorded
	StartedAt     string
	EndedAt       string
	Reason        string
	// Finalized reports that this read wrote the lost state into the file.
	Finalized bool
	// Raw is the file as read (as written, when Finalized).
	Raw []byte
}

// ResultReader reads start result files and finalizes the lost ones. A
// started file is lost when its supervisor (supervisor_pid, and
// supervisor_proc_start when recorded, so a reused pid is not taken for
// it) does not run and, for a detached start, no live unit body holds its
// prompt (a claimed prompt file names its pid). The first reader that can
// take the session's lock (the one start and resume hold while they run)
// re-reads the file under it and, still lost, writes it: state lost,
// ended_at, a reason and a note, every other key kept. A detached start's
// prompt file is taken back first, so a unit that starts late runs
// nothing. Two readers at once write it once; a supervisor that runs is
// never overwritten.
type ResultReader struct {
	Proc  station.Proc
	Paths station.Paths // the session's lock: ResumeLockPath(Paths, sid)
	Now   func() time.Time
	// PID is the reader, named in the note and in a prompt it takes back;
	// 0 means os.Getpid().
	PID int
	// ReadOnly judges without locking or writing anything.
	ReadOnly bool
}

func (rr ResultReader) now() time.Time {
	if rr.Now != nil {
		return rr.Now()
	}
	return time.Now()
}

func (rr ResultReader) pid() int {
	if rr.PID > 0 {
		return rr.PID
	}
	return os.Getpid()
}

// resultKeys are the keys a reader judges by.
type resultKeys struct {
	State               string  `json:"state"`
	SessionID           string  `json:"session_id"`
	Unit                *string `json:"unit"`
	PromptFile          *string `json:"prompt_file"`
	PID                 *int    `json:"pid"`
	SupervisorPID       *int    `json:"supervisor_pid"`
	SupervisorProcStart *string `json:"supervisor_proc_start"`
	StartedAt           string  `json:"started_at"`
	EndedAt             *string `json:"ended_at"`
	Reason              *string `json:"reason"`
}

func readResult(path string) ([]byte, resultKeys, error) {
	var k resultKeys
	b, err := fsx.AppendFile(nil, path, maxResultFile)
	if err != nil {
		return nil, k, err
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, k, fmt.Errorf("%s: %w", path, err)
	}
	if k.PromptFile != nil && !ownPrompt(path, *k.PromptFile) {
		// A start only ever names the prompt file it makes next to its
		// result file; another path there (a file edited or planted) is
		// not the run's: it is not claimed, removed or judged by.
		k.PromptFile = nil
	}
	return b, k, nil
}

// ownPrompt reports whether prompt is the prompt file a detached start
// makes for the result file at path (PromptFile of its absolute path, as
// start records it).
func ownPrompt(path, prompt string) bool {
	abs, err := filepath.Abs(path)
	return err == nil && filepath.IsAbs(prompt) && prompt == PromptFile(abs)
}

func (k resultKeys) file(path string, raw []byte) ResultFile {
	f := ResultFile{Path: path, State: k.State, SessionID: k.SessionID, StartedAt: k.StartedAt, Raw: raw}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	f.Unit, f.EndedAt, f.Reason = deref(k.Unit), deref(k.EndedAt), deref(k.Reason)
	if k.PID != nil {
		f.PID = *k.PID
	}
	if k.SupervisorPID != nil {
		f.SupervisorPID = *k.SupervisorPID
	}
	return f
}

// gone says why a started file's run is lost, "" when it is not (its
// supervisor runs, a unit body holds its prompt, or no supervisor is
// recorded: a file of an older oo-claude, judged by its lock alone).
func (rr ResultReader) gone(k resultKeys) string {
	if k.State != StateStarted || k.SupervisorPID == nil || *k.SupervisorPID <= 0 {
		return ""
	}
	sup, start := *k.SupervisorPID, ""
	if k.SupervisorProcStart != nil {
		start = *k.SupervisorProcStart
	}
	if rr.Proc.Alive(sup, start) {
		return ""
	}
	if k.PromptFile != nil && LiveClaim(rr.Proc, *k.PromptFile) != 0 {
		return ""
	}
	why := fmt.Sprintf("%s: its supervisor (pid %d) is gone without writing the outcome", ReasonSupervisorGone, sup)
	if start != "" && rr.Proc.Alive(sup, "") {
		why = fmt.Sprintf("%s: its supervisor (pid %d, started at tick %s) is gone without writing the outcome; pid %d is another process now",
			ReasonSupervisorGone, sup, start, sup)
	}
	return why
}

// Read reads the result file at path and reports its state, finalizing it
// as lost when its run is lost and the session's lock can be taken. An
// error means the file could not be read or is not JSON.
func (rr ResultReader) Read(path string) (ResultFile, error) {
	b, k, err := readResult(path)
	if err != nil {
		return ResultFile{Path: path}, err
	}
	why := rr.gone(k)
	f := k.file(path, b)
	if why == "" {
		return f, nil
	}
	f.State, f.Reason = StateLost, why
	if rr.ReadOnly || !station.IsSessionID(k.SessionID) {
		return f, nil
	}
	lock, err := fsx.TryLock(ResumeLockPath(rr.Paths, k.SessionID))
	if err != nil {
		return f, nil // another reader finalizes it, or a new run of the session holds it
	}
	defer lock.Unlock()
	return rr.finalize(path)
}

// finalize writes the lost state, under the session's lock, after reading
// the file again.
func (rr ResultReader) finalize(path string) (ResultFile, error) {
	b, k, err := readResult(path)
	if err != nil {
		return ResultFile{Path: path}, err
	}
	why := rr.gone(k)
	if why == "" {
		return k.file(path, b), nil // finished, or its supervisor wrote meanwhile
	}
	if k.PromptFile != nil {
		// A unit that has not taken its prompt yet never will.
		if claimed, err := ClaimPrompt(*k.PromptFile, rr.pid()); err == nil {
			_ = os.Remove(claimed)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return k.file(path, b), err
		}
		if LiveClaim(rr.Proc, *k.PromptFile) != 0 {
			return k.file(path, b), nil // a unit body took it meanwhile
		}
		removeDeadClaims(rr.Proc, *k.PromptFile)
	}
	now := jsonrow.FormatTime(rr.now())
	note := fmt.Sprintf("finalized as lost by a reader (pid %d) at %s: the run's supervisor exited without writing its outcome; claude dies with its supervisor", rr.pid(), now)
	if k.PID != nil && *k.PID > 0 {
		note += fmt.Sprintf(" (claude was pid %d)", *k.PID)
	}
	out, err := setKeys(b, []keyValue{{"state", StateLost}, {"ended_at", now}, {"reason", why}, {"note", note}})
	if err != nil {
		return k.file(path, b), err
	}
	if err := fsx.WriteFileAtomic(path, out); err != nil {
		return k.file(path, b), err
	}
	f := k.file(path, out)
	f.State, f.EndedAt, f.Reason, f.Finalized = StateLost, now, why, true
	return f, nil
}

// FileState reads only the state of the result file at path (its first
// key, where the writer puts it): a cheap look before [ResultReader.Read]
// over a directory of finished files. "" when it does not start with one.
func FileState(path string) (string, error) {
	fh, err := fsx.OpenRead(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	dec := json.NewDecoder(io.LimitReader(fh, maxResultFile))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", fmt.Errorf("%s: not a JSON object", path)
	}
	key, err := dec.Token()
	if err != nil || key != "state" {
		return "", nil
	}
	var s string
	if err := dec.Decode(&s); err != nil {
		return "", nil
	}
	return s, nil
}

// ClaimPrompt takes a detached start's prompt file in one atomic rename to
// <prompt>.taken-<pid>, so of everyone who tries (two unit bodies started
// at once, the detaching start giving up, a reader finalizing a lost
// start) exactly one gets it. It returns the claimed path; the claimer
// removes it once it no longer needs to be seen holding the prompt.
func ClaimPrompt(path string, pid int) (string, error) {
	claimed := path + claimInfix + strconv.Itoa(pid)
	if err := os.Rename(path, claimed); err != nil {
		return "", err
	}
	return claimed, nil
}

const claimInfix = ".taken-"

// claims lists the claimed copies of a prompt file with their claimers.
func claims(prompt string) map[string]int {
	ents, err := os.ReadDir(filepath.Dir(prompt))
	if err != nil {
		return nil
	}
	out := map[string]int{}
	prefix := filepath.Base(prompt) + claimInfix
	for _, e := range ents {
		if rest, ok := strings.CutPrefix(e.Name(), prefix); ok {
			if pid, err := strconv.Atoi(rest); err == nil && pid > 0 {
				out[filepath.Join(filepath.Dir(prompt), e.Name())] = pid
			}
		}
	}
	return out
}

// LiveClaim is the pid of a running process that holds a claimed copy of
// the prompt file (a unit body between taking the prompt and recording
// itself as the supervisor), or 0.
func LiveClaim(p station.Proc, prompt string) int {
	for _, pid := range claims(prompt) {
		if p.Alive(pid, "") {
			return pid
		}
	}
	return 0
}

// removeDeadClaims removes the claimed prompt copies whose claimer died.
func removeDeadClaims(p station.Proc, prompt string) {
	for path, pid := range claims(prompt) {
		if !p.Alive(pid, "") {
			_ = os.Remove(path)
		}
	}
}

type keyValue struct {
	key   string
	value any
}

// setKeys rewrites the JSON object b with the given keys set (in place when
// present, appended when not), every other key and the order kept, in
// WriteResultFile's encoding.
func setKeys(b []byte, set []keyValue) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	type member struct {
		key string
		raw json.RawMessage
	}
	var members []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		members = append(members, member{key, raw})
	}
	for _, kv := range set {
		raw, err := json.Marshal(kv.value)
		if err != nil {
			return nil, err
		}
		found := false
		for i := range members {
			if members[i].key == kv.key {
				members[i].raw, found = raw, true
			}
		}
		if !found {
			members = append(members, member{kv.key, raw})
		}
	}
	var out bytes.Buffer
	out.WriteString("{")
	for i, m := range members {
		if i > 0 {
			out.WriteString(",")
		}
		k, _ := json.Marshal(m.key)
		out.WriteString("\n  ")
		out.Write(k)
		out.WriteString(": ")
		if err := json.Indent(&out, m.raw, "  ", "  "); err != nil {
			return nil, err
		}
	}
	if len(members) > 0 {
		out.WriteString("\n")
	}
	out.WriteString("}\n")
	return out.Bytes(), nil
}
