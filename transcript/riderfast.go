package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oo-family/oo-claude/internal/jsonscan"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// smallRiderBytes is the largest rider transcript ReadRider reads whole:
// one read of the file gives its line count, its head timestamp and its
// tail, and each row is decoded once into only the fields the riding rule
// and the rider's last step and text need. Larger transcripts take the
// general path (countLines, headTime, readTail), bounded to transcriptfile.TailBytes.
// Both paths give the same Rider for the same bytes (TestRiderPathsAgree).
const smallRiderBytes = 64 << 10

// smallBufs are readRiderSmall's buffers (of at most smallRiderBytes),
// one per reader at a time: the sessions document reads thousands of
// riders, each with one read.
var smallBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// riderFacts is what ReadRider reads from a rider's transcript.
type riderFacts struct {
	rows    int64
	started time.Time
	tail    tailFacts
}

// readRiderGeneral reads a transcript of any size: it counts all its lines,
// looks for the head timestamp in its first transcriptfile.TailBytes and judges its
// tail from its last transcriptfile.TailBytes, parsing rows with ParseRow.
func readRiderGeneral(f io.ReaderAt, size int64) (riderFacts, error) {
	var rf riderFacts
	var err error
	if rf.rows, err = countLines(f, size); err != nil {
		return rf, err
	}
	if rf.started, err = headTime(io.NewSectionReader(f, 0, min(size, transcriptfile.TailBytes)), size); err != nil {
		return rf, err
	}
	rf.tail, err = readTail(f, size)
	return rf, err
}

// readRiderSmall reads a transcript of at most smallRiderBytes (so within
// every bound of the general path) with one read of its first size bytes.
func readRiderSmall(f io.ReaderAt, size int64) (riderFacts, error) {
	// The read's buffer is reused: nothing riderFactsOf returns points
	// into it (every string is a copy).
	bp := smallBufs.Get().(*[]byte)
	buf := slices.Grow((*bp)[:0], int(size))[:size]
	defer func() { *bp = buf[:0]; smallBufs.Put(bp) }()
	if got, err := f.ReadAt(buf, 0); int64(got) < size {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the file shrank under us
		}
		return riderFacts{}, err
	}
	return riderFactsOf(buf), nil
}

// riderFactsOf judges a whole transcript held in buf.
func riderFactsOf(buf []byte) riderFacts {
	rf := riderFacts{rows: int64(bytes.Count(buf, []byte{'\n'}))}
	// A last line without its "\n" is being written: it is no row yet.
	complete := buf[:bytes.LastIndexByte(buf, '\n')+1]
	rf.started = headTimeOf(complete)
	rf.tail = tailOf(complete)
	return rf
}

// headTimeOf is headTime over complete lines held in memory: the timestamp
// of the first row that has one, decoding only the timestamp.
func headTimeOf(complete []byte) time.Time {
	for rest := complete; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		line := rest[:i+1]
		rest = rest[i+1:]
		if !bytes.Contains(line, markTimestamp) {
			continue
		}
		_, ts, ok, handled := scanRow(line)
		if !handled {
			var row struct {
				Timestamp string `json:"timestamp"`
			}
			ok = decodeRow(line, &row)
			ts = row.Timestamp
		}
		if !ok {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil && !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// decodeRow decodes line into v as leniently as ParseRow: it reports false
// only when the line is not a JSON object.
func decodeRow(line []byte, v any) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	if err := json.Unmarshal(line, v); err != nil {
		var te *json.UnmarshalTypeError
		return errors.As(err, &te)
	}
	return true
}

// tailRow is a row with only the fields readTail looks at. Each field has
// the type Row gives it, so encoding/json fills it exactly as it fills Row's
// (pointers allocated the same way, the same values left zero).
type tailRow struct {
	Type    transcriptfile.RowType `json:"type"`
	IsMeta  bool                   `json:"isMeta"`
	Origin  *tailOrigin            `json:"origin"`
	Message *tailMessage           `json:"message"`
}

type tailOrigin struct {
	Kind string `json:"kind"`
}

type tailMessage struct {
	ID         string      `json:"id"`
	StopReason string      `json:"stop_reason"`
	Content    tailContent `json:"content"`
}

// tailBlock is a content block with only the fields readTail looks at.
type tailBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// tailContent is a message's content decoded while its row is: the blocks
// Message.Blocks would return.
type tailContent []tailBlock

// UnmarshalJSON decodes content as contentBlocks does: a string is one text
// block; in an array, an item that is not an object is a zero block. It
// never fails, so the rest of the row is still decoded.
func (c *tailContent) UnmarshalJSON(raw []byte) error {
	*c = nil
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			*c = tailContent{{Type: "text", Text: s}}
		}
	case '[':
		var blocks []tailBlock
		err := json.Unmarshal(raw, &blocks)
		var te *json.UnmarshalTypeError
		if err == nil || errors.As(err, &te) {
			*c = blocks
		}
	}
	return nil
}

// tailOf is readTail over complete lines held in memory, decoding each row
// it looks at once, into a tailRow.
func tailOf(complete []byte) tailFacts {
	var j tailJudge
	for end := len(complete); end > 0 && !j.done(); {
		// complete[end-1] is the '\n' of the line before end.
		start := bytes.LastIndexByte(complete[:end-1], '\n') + 1
		line := bytes.TrimSuffix(complete[start:end-1], []byte{'\r'})
		end = start
		if len(line) == 0 || !bytes.Contains(line, markUser) && !bytes.Contains(line, markAssistant) {
			continue
		}
		row, _, ok, handled := scanRow(line)
		if !handled {
			row = tailRow{}
			ok = decodeRow(line, &row)
		}
		if !ok || row.Message == nil || (row.Type != transcriptfile.RowUser && row.Type != transcriptfile.RowAssistant) {
			continue
		}
		if row.Type == transcriptfile.RowUser && row.IsMeta && (row.Origin == nil || row.Origin.Kind != transcriptfile.OriginKindPeer) {
			continue // system-injected, not a message of the conversation
		}
		j.add(row.Type, row.Message.ID, row.Message.StopReason, row.Message.Content)
	}
	return j.t
}

// tailJudge walks a transcript's messages from the last: is the last
// message a final answer, what were the last tool call and the last
// assistant text.
type tailJudge struct {
	t         tailFacts
	lastMsg   bool   // the last message has been judged
	lastMsgID string // the message id of the last assistant message, while judging it
	haveStep  bool
	haveText  bool
}

func (j *tailJudge) done() bool { return j.lastMsg && j.haveStep && j.haveText }

// add takes the row before the previous one added: a user or assistant
// message of the conversation.
func (j *tailJudge) add(typ transcriptfile.RowType, id, stopReason string, blocks []tailBlock) {
	if !j.lastMsg {
		switch {
		case typ == transcriptfile.RowUser:
			// Last is a user message (the model is due), or the user
			// message before the judged assistant message.
			j.lastMsg = true
		case j.lastMsgID == "":
			j.lastMsgID = id
			j.t.final = finalAnswer(typ, stopReason, blocks)
			if j.lastMsgID == "" {
				j.lastMsg = true
			}
		case id != j.lastMsgID:
			j.lastMsg = true
		default:
			// An earlier row of the same message (one row per block).
			for _, b := range blocks {
				if b.Type == "tool_use" {
					j.t.final = false
				}
			}
		}
	}
	if typ != transcriptfile.RowAssistant {
		return
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		switch {
		case b.Type == "tool_use" && !j.haveStep:
			j.haveStep = true
			j.t.lastStep = clip(oneLine(b.Name+": "+summarizeInput(b.Input)), maxRiderText)
		case b.Type == "text" && !j.haveText && strings.TrimSpace(b.Text) != "":
			j.haveText = true
			j.t.lastText = clip(strings.TrimSpace(oneLine(b.Text)), maxRiderText)
		}
	}
}

// finalAnswer is Row.FinalAnswer on a decoded row.
func finalAnswer(typ transcriptfile.RowType, stopReason string, blocks []tailBlock) bool {
	if typ != transcriptfile.RowAssistant || stopReason != transcriptfile.StopEndTurn && stopReason != transcriptfile.StopStopSequence {
		return false
	}
	for _, b := range blocks {
		if b.Type == "tool_use" {
			return false
		}
	}
	return true
}

// The words scanRow reads without allocating (jsonscan.StringOf): the
// values of a row's type, an origin's kind, a message's stop_reason and a
// content block's type that Claude Code writes most.
var (
	rowTypes    = [...]string{string(transcriptfile.RowUser), string(transcriptfile.RowAssistant), string(transcriptfile.RowAttachment), string(transcriptfile.RowQueueOperation)}
	originKinds = [...]string{transcriptfile.OriginKindPeer}
	stopReasons = [...]string{"tool_use", transcriptfile.StopEndTurn, transcriptfile.StopStopSequence, "max_tokens"}
	blockTypes  = [...]string{"text", "tool_use", "tool_result", "thinking"}
)

// scanRow is decodeRow into a tailRow (and the row's timestamp) in one pass
// over the line, without encoding/json, for the rows Claude Code writes. It
// reports handled false, and the caller decodes the line with encoding/json,
// for every line it is not sure to read exactly as encoding/json does: a
// line that is not valid JSON, a key of the row, its message, origin or a
// content block that is escaped, not ASCII, repeated, or equal to a field
// name but for case, and a row nested deeper than jsonscan.MaxDepth.
func scanRow(line []byte) (row tailRow, ts string, ok, handled bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return tailRow{}, "", false, true
	}
	s := jsonscan.New(line)
	var seen [5]bool
	s.Object(0, func(key []byte) bool {
		switch k := jsonscan.FieldIndex(key, seen[:], "type", "isMeta", "origin", "message", "timestamp"); k {
		case 0:
			row.Type = transcriptfile.RowType(s.StringOf(rowTypes[:]))
		case 1:
			row.IsMeta = s.Bool()
		case 2:
			row.Origin = origin(s)
		case 3:
			row.Message = message(s)
		case 4:
			ts = s.String()
		case -1:
			s.Skip(1)
		default:
			return false
		}
		return true
	})
	if !s.Done() {
		return tailRow{}, "", false, false
	}
	return row, ts, true, true
}

// origin reads a value into Row.Origin's place: null is nil, an object its
// kind, anything else an empty origin (encoding/json allocates it).
func origin(s *jsonscan.Scanner) *tailOrigin {
	switch s.Peek() {
	case '{':
		o := &tailOrigin{}
		var seen [1]bool
		s.Object(1, func(key []byte) bool {
			switch k := jsonscan.FieldIndex(key, seen[:], "kind"); k {
			case 0:
				o.Kind = s.StringOf(originKinds[:])
			case -1:
				s.Skip(2)
			default:
				return false
			}
			return true
		})
		return o
	case 'n':
		s.Null()
		return nil
	}
	s.Skip(1)
	return &tailOrigin{}
}

// message reads a value into Row.Message's place, as origin does.
func message(s *jsonscan.Scanner) *tailMessage {
	switch s.Peek() {
	case '{':
		m := &tailMessage{}
		var seen [3]bool
		s.Object(1, func(key []byte) bool {
			switch k := jsonscan.FieldIndex(key, seen[:], "id", "stop_reason", "content"); k {
			case 0:
				m.ID = s.String()
			case 1:
				m.StopReason = s.StringOf(stopReasons[:])
			case 2:
				m.Content = content(s)
			case -1:
				s.Skip(2)
			default:
				return false
			}
			return true
		})
		return m
	case 'n':
		s.Null()
		return nil
	}
	s.Skip(1)
	return &tailMessage{}
}

// content reads a message's content as contentBlocks does.
func content(s *jsonscan.Scanner) tailContent {
	switch s.Peek() {
	case 0:
		s.Bail()
		return nil
	case '"':
		return tailContent{{Type: "text", Text: s.String()}}
	case '[':
		blocks := tailContent{}
		s.Array(2, func(depth int) {
			var b tailBlock
			if s.Peek() == '{' {
				var seen [4]bool
				s.Object(depth, func(key []byte) bool {
					switch k := jsonscan.FieldIndex(key, seen[:], "type", "text", "name", "input"); k {
					case 0:
						b.Type = s.StringOf(blockTypes[:])
					case 1:
						b.Text = s.String()
					case 2:
						b.Name = s.String()
					case 3:
						b.Input = json.RawMessage(s.Raw(depth + 1))
					case -1:
						s.Skip(depth + 1)
					default:
						return false
					}
					return true
				})
			} else {
				s.Skip(depth)
			}
			blocks = append(blocks, b)
		})
		return blocks
	}
	s.Skip(2)
	return nil
}
