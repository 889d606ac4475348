package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/internal/riderwalk"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// RiderState is a rider's state in the observatory schema.
type RiderState string

// Rider states.
const (
	Riding        RiderState = "riding"
	QuietFinished RiderState = "quiet/finished"
)

// Why a rider is quiet/finished (Rider.StateReason).
const (
	ReasonFinalText = "final-text" // its last message is a final answer
	ReasonStale     = "stale"      // its transcript did not change within the window
)

// maxRiderText is the most characters of a rider's last_step and last_text.
const maxRiderText = 200

// Rider is a sub-agent of a session, as the observatory schema
// oo-claude/sessions/v0 shows it (field names are the schema's).
type Rider struct {
	Agent         string     `json:"agent"`           // the agent id (agent-<id>.jsonl)
	Started       time.Time  `json:"started"`         // its first row's timestamp; null when unknown
	LastActivityS int64      `json:"last_activity_s"` // seconds since its transcript changed
	Rows          int64      `json:"rows"`            // complete lines in its transcript
	State         RiderState `json:"state"`
	LastStep      string     `json:"last_step"` // its last tool call, "Name: input summary"
	LastText      string     `json:"last_text"` // its last assistant text, on one line
	Description   string     `json:"description"`
	AgentType     string     `json:"agent_type"`
	Model         string     `json:"model"`
	StateReason   string     `json:"state_reason"` // ReasonFinalText or ReasonStale when quiet/finished, else ""
	Path          string     `json:"path"`
	Bytes         int64      `json:"bytes"`
}

// MarshalJSON writes Started as null when it is unknown.
func (r Rider) MarshalJSON() ([]byte, error) {
	type plain Rider
	var started *time.Time
	if !r.Started.IsZero() {
		started = &r.Started
	}
	return json.Marshal(struct {
		plain
		Started *time.Time `json:"started"`
	}{plain(r), started})
}

// Riders returns the riders of the session whose directory is sessionDir
// (<projects>/<encoded cwd>/<session id>): every agent-<id>.jsonl under its
// subagents directory, also nested ones such as
// subagents/workflows/<run>/agent-<id>.jsonl, with their meta files, oldest
// first. now and window (ten minutes, OO_CLAUDE_RIDING_WINDOW_S's default,
// when <= 0) drive the riding rule: a rider is riding while its transcript
// changed within the window and its last message is not a final answer. A
// session without riders has none and no error. A rider that cannot be
// read is left out and its error joined into the returned error; the
// others are still returned.
func Riders(sessionDir string, now time.Time, window time.Duration) ([]Rider, error) {
	if window <= 0 {
		window = transcriptfile.DefaultRidingWindow
	}
	var paths []string
	if err := riderwalk.Walk(sessionDir, func(p string, _ fs.DirEntry) { paths = append(paths, p) }, nil); err != nil {
		return nil, pathError("riders", filepath.Join(sessionDir, riderwalk.Dir), err)
	}
	var riders []Rider
	var errs []error
	for _, p := range paths {
		r, err := ReadRider(p, now, window)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) { // gone since the walk
				errs = append(errs, err)
			}
			continue
		}
		riders = append(riders, r)
	}
	sort.SliceStable(riders, func(i, j int) bool {
		if !riders[i].Started.Equal(riders[j].Started) {
			return riders[i].Started.Before(riders[j].Started)
		}
		return riders[i].Path < riders[j].Path
	})
	return riders, errors.Join(errs...)
}

// ReadRider reads one rider transcript (agent-<id>.jsonl) and its meta file.
// A transcript of at most 64 KiB (most riders) is read whole with one read
// and each row it looks at is decoded once, into only the fields it needs;
// a larger one is read as Riders' guarantees say: its lines counted, its
// head and its last 4 MiB parsed row by row. Both give the same Rider.
func ReadRider(path string, now time.Time, window time.Duration) (Rider, error) {
	f, fi, err := openRegularAt(path)
	if err != nil {
		return Rider{}, err
	}
	defer f.Close()
	r, err := readRider(f, fi, path, now, window)
	if err != nil {
		return Rider{}, err
	}
	if m, err := transcriptfile.ReadRiderMeta(strings.TrimSuffix(path, transcriptfile.Ext) + ".meta.json"); err == nil {
		r.AgentType, r.Description, r.Model = m.AgentType, m.Description, m.Model
	}
	return r, nil
}

// ReadRiderEntry is [ReadRider] for the rider transcript that a listing of
// the directory dir holds as e (os.ReadDir, filepath.WalkDir): the
// listing's type stands for the check before the open, and the rider's
// meta file is not read (AgentType, Description and Model are left
// empty), so a reader of many riders reads the meta of those it shows
// alone. A nil e is an error.
func ReadRiderEntry(dir string, e fs.DirEntry, now time.Time, window time.Duration) (Rider, error) {
	if e == nil {
		return Rider{}, pathError("open", dir, fs.ErrInvalid)
	}
	path := filepath.Join(dir, e.Name())
	f, fi, err := transcriptfile.OpenEntryAt(dir, e)
	f, fi, err = regularAt(path, f, fi, err)
	if err != nil {
		return Rider{}, err
	}
	defer f.Close()
	return readRider(f, fi, path, now, window)
}

// readRider is ReadRider on the open transcript f (fi its fstat), but
// for the meta file.
func readRider(f io.ReaderAt, fi fs.FileInfo, path string, now time.Time, window time.Duration) (Rider, error) {
	size := fi.Size()
	name := filepath.Base(path)
	r := Rider{
		Agent: strings.TrimSuffix(strings.TrimPrefix(name, "agent-"), transcriptfile.Ext),
		Path:  path,
		Bytes: size,
	}
	read := readRiderGeneral
	if size <= smallRiderBytes {
		read = readRiderSmall
	}
	facts, err := read(f, size)
	if err != nil {
		return Rider{}, pathError("read", path, err)
	}
	r.Rows, r.Started = facts.rows, facts.started
	r.LastStep, r.LastText = facts.tail.lastStep, facts.tail.lastText
	if facts.tail.final {
		r.StateReason = ReasonFinalText
	}
	return r.Judged(fi.ModTime(), now, window), nil
}

// Judged returns r, a rider read from its transcript, as the riding rule
// judges it at now while the transcript's last change is still mod (its
// modification time when it was read): LastActivityS, State and
// StateReason are set again. A rider whose last message was a final
// answer (StateReason [ReasonFinalText]) stays quiet/finished; another
// rides while mod is within window of now (ten minutes when window <= 0).
// A reader that keeps riders, and sees by a stat that a transcript has not
// changed, judges the kept rider again instead of reading the file.
func (r Rider) Judged(mod, now time.Time, window time.Duration) Rider {
	if window <= 0 {
		window = transcriptfile.DefaultRidingWindow
	}
	age := max(now.Sub(mod), 0)
	r.LastActivityS = int64(age.Round(time.Second) / time.Second)
	r.State, r.StateReason = ridingState(age, window, r.StateReason == ReasonFinalText)
	return r
}

// ridingState is oo-claude's riding rule: a rider rides while its
// transcript changed within window (age < window) and its last message is
// not a final answer; otherwise it is quiet/finished because of its final
// text (which wins) or because it is stale. A long tool call counts as
// riding inside the window.
func ridingState(age, window time.Duration, lastIsFinal bool) (RiderState, string) {
	switch {
	case lastIsFinal:
		return QuietFinished, ReasonFinalText
	case age >= window:
		return QuietFinished, ReasonStale
	}
	return Riding, ""
}

// countLines counts the complete lines ("\n"-terminated) in the first size
// bytes of r. It reads them all, in 1 MiB blocks, with bytes.Count: the
// cost is one sequential read of the file, O(size): BENCHMARKS.md has its
// throughput from the page cache (BenchmarkCountLines); a cold file reads
// at disk speed. It is
// the one part of Riders whose cost grows with a transcript's size.
func countLines(r io.ReaderAt, size int64) (int64, error) {
	// A rider is usually a few KiB: size the block to the file, not to the
	// largest read, or listing 2,000 riders allocates gigabytes.
	buf := make([]byte, max(1, min(size, 1<<20)))
	var n int64
	for off := int64(0); off < size; {
		want := min(int64(len(buf)), size-off)
		got, err := r.ReadAt(buf[:want], off)
		n += int64(bytes.Count(buf[:got], []byte{'\n'}))
		off += int64(got)
		if int64(got) < want {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
	}
	return n, nil
}

var markTimestamp = []byte(`"timestamp"`)

// headTime returns the timestamp of the first row that has one.
func headTime(r io.Reader, size int64) (time.Time, error) {
	br := bufio.NewReaderSize(r, int(max(16, min(size, transcriptfile.DefaultChunkSize))))
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' && bytes.Contains(line, markTimestamp) {
			if row, perr := transcriptfile.ParseRow(line); perr == nil {
				if t := row.Time(); !t.IsZero() {
					return t, nil
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return time.Time{}, nil
		}
		if err != nil {
			return time.Time{}, err
		}
	}
}

type tailFacts struct {
	lastStep, lastText string
	final              bool
}

// readTail looks in the last transcriptfile.TailBytes for the last message (is it a
// final answer?), the last tool call and the last assistant text.
func readTail(r io.ReaderAt, size int64) (tailFacts, error) {
	var j tailJudge
	rd := transcriptfile.NewReader(r, size, transcriptfile.TailBytes)
	for !j.done() {
		line, _, err := rd.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return j.t, err
		}
		if !bytes.Contains(line, markUser) && !bytes.Contains(line, markAssistant) {
			continue
		}
		row, err := transcriptfile.ParseRow(line)
		if err != nil || row.Message == nil || (row.Type != transcriptfile.RowUser && row.Type != transcriptfile.RowAssistant) {
			continue
		}
		if row.Type == transcriptfile.RowUser && row.IsMeta && row.PeerOrigin() == nil {
			continue // system-injected, not a message of the conversation
		}
		blocks := row.Message.Blocks()
		tb := make([]tailBlock, len(blocks))
		for i, b := range blocks {
			tb[i] = tailBlock{Type: b.Type, Text: b.Text, Name: b.Name, Input: b.Input}
		}
		j.add(row.Type, row.Message.ID, row.Message.StopReason, tb)
	}
	return j.t, nil
}
