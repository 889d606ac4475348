package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// smallRiderBytes is the largest rider transcript ReadRider reads whole:
// one read of the file gives its line count, its head timestamp and its
// tail, and each row is decoded once into only the fields the riding rule
// and the rider's last step and text need. Larger transcripts take the
// general path (CountLines, headTime, readTail), bounded to RiderTailBytes.
// Both paths give the same Rider for the same bytes (TestRiderPathsAgree).
const smallRiderBytes = 64 << 10

// riderFacts is what ReadRider reads from a rider's transcript.
type riderFacts struct {
	rows    int64
	started time.Time
	tail    tailFacts
}

// readRiderGeneral reads a transcript of any size: it counts all its lines,
// looks for the head timestamp in its first RiderTailBytes and judges its
// tail from its last RiderTailBytes, parsing rows with ParseRow.
func readRiderGeneral(f io.ReaderAt, size int64) (riderFacts, error) {
	var rf riderFacts
	var err error
	if rf.rows, err = CountLines(f, size); err != nil {
		return rf, err
	}
	if rf.started, err = headTime(io.NewSectionReader(f, 0, min(size, RiderTailBytes)), size); err != nil {
		return rf, err
	}
	rf.tail, err = readTail(f, size)
	return rf, err
}

// readRiderSmall reads a transcript of at most smallRiderBytes (so within
// every bound of the general path) with one read of its first size bytes.
func readRiderSmall(f io.ReaderAt, size int64) (riderFacts, error) {
	buf := make([]byte, size)
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
	Type    RowType      `json:"type"`
	IsMeta  bool         `json:"isMeta"`
	Origin  *tailOrigin  `json:"origin"`
	Message *tailMessage `json:"message"`
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
		if !ok || row.Message == nil || (row.Type != RowUser && row.Type != RowAssistant) {
			continue
		}
		if row.Type == RowUser && row.IsMeta && (row.Origin == nil || row.Origin.Kind != OriginKindPeer) {
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
func (j *tailJudge) add(typ RowType, id, stopReason string, blocks []tailBlock) {
	if !j.lastMsg {
		switch {
		case typ == RowUser:
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
	if typ != RowAssistant {
		return
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		switch {
		case b.Type == "tool_use" && !j.haveStep:
			j.haveStep = true
			j.t.lastStep = clip(oneLine(b.Name+": "+SummarizeInput(b.Input)), MaxRiderText)
		case b.Type == "text" && !j.haveText && strings.TrimSpace(b.Text) != "":
			j.haveText = true
			j.t.lastText = clip(strings.TrimSpace(oneLine(b.Text)), MaxRiderText)
		}
	}
}

// finalAnswer is Row.FinalAnswer on a decoded row.
func finalAnswer(typ RowType, stopReason string, blocks []tailBlock) bool {
	if typ != RowAssistant || stopReason != StopEndTurn && stopReason != StopStopSequence {
		return false
	}
	for _, b := range blocks {
		if b.Type == "tool_use" {
			return false
		}
	}
	return true
}

// maxScanDepth is how deeply nested a row scanRow reads itself; deeper
// rows are left to encoding/json.
const maxScanDepth = 64

// scanRow is decodeRow into a tailRow (and the row's timestamp) in one pass
// over the line, without encoding/json, for the rows Claude Code writes. It
// reports handled false, and the caller decodes the line with encoding/json,
// for every line it is not sure to read exactly as encoding/json does: a
// line that is not valid JSON, a key of the row, its message, origin or a
// content block that is escaped, not ASCII, repeated, or equal to a field
// name but for case, and a row nested deeper than maxScanDepth.
func scanRow(line []byte) (row tailRow, ts string, ok, handled bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return tailRow{}, "", false, true
	}
	s := rowScanner{b: line}
	var seen [5]bool
	s.object(0, func(key []byte) bool {
		switch k := fieldIndex(key, seen[:], "type", "isMeta", "origin", "message", "timestamp"); k {
		case 0:
			row.Type = RowType(s.stringField())
		case 1:
			row.IsMeta = s.boolField()
		case 2:
			row.Origin = s.origin()
		case 3:
			row.Message = s.message()
		case 4:
			ts = s.stringField()
		case -1:
			s.skip(1)
		default:
			return false
		}
		return true
	})
	if s.bail || s.i != len(s.b) {
		return tailRow{}, "", false, false
	}
	return row, ts, true, true
}

// fieldIndex is the index of key among names, -1 when it is none of them,
// or -2 when encoding/json might match it differently than by bytes: it is
// escaped, not ASCII, a name seen before, or a name but for case.
func fieldIndex(key []byte, seen []bool, names ...string) int {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return -2
		}
	}
	for i, n := range names {
		if len(key) != len(n) {
			continue // ASCII keys fold to names of their own length only
		}
		if string(key) == n {
			if seen[i] {
				return -2
			}
			seen[i] = true
			return i
		}
		if strings.EqualFold(string(key), n) {
			return -2
		}
	}
	return -1
}

// rowScanner validates JSON as encoding/json does while reading the fields
// scanRow wants; bail is set on anything it leaves to encoding/json.
type rowScanner struct {
	b    []byte
	i    int
	bail bool
}

func (s *rowScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object reads an object at s.i; member is called with each key, s.i at
// the start of its value, and reads the value (or returns false to bail).
// A nil member skips every value.
func (s *rowScanner) object(depth int, member func(key []byte) bool) {
	if depth > maxScanDepth || s.i >= len(s.b) || s.b[s.i] != '{' {
		s.bail = true
		return
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return
	}
	for !s.bail {
		key, _ := s.str()
		if s.bail {
			return
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			s.bail = true
			return
		}
		s.i++
		s.ws()
		if member == nil {
			s.skip(depth + 1)
		} else if !member(key) {
			s.bail = true
		}
		if s.bail {
			return
		}
		s.ws()
		if s.i >= len(s.b) {
			s.bail = true
			return
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			return
		default:
			s.bail = true
		}
	}
}

// skip reads any value at s.i.
func (s *rowScanner) skip(depth int) {
	if depth > maxScanDepth || s.i >= len(s.b) {
		s.bail = true
		return
	}
	switch c := s.b[s.i]; {
	case c == '{':
		s.object(depth, nil)
	case c == '[':
		s.array(depth, func(int) { s.skip(depth + 1) })
	case c == '"':
		s.str()
	case c == '-' || c >= '0' && c <= '9':
		s.number()
	default:
		s.literal()
	}
}

// array reads an array at s.i, calling item for each element with s.i at
// its start.
func (s *rowScanner) array(depth int, item func(depth int)) {
	if depth > maxScanDepth || s.b[s.i] != '[' {
		s.bail = true
		return
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return
	}
	for !s.bail {
		item(depth + 1)
		if s.bail {
			return
		}
		s.ws()
		if s.i >= len(s.b) {
			s.bail = true
			return
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			return
		default:
			s.bail = true
		}
	}
}

// str reads a string at s.i and returns its bytes between the quotes and
// whether it holds an escape.
func (s *rowScanner) str() (raw []byte, escaped bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.bail = true
		return nil, false
	}
	start := s.i + 1
	for i := start; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], escaped
		case c < 0x20:
			s.bail = true
			return nil, false
		case c == '\\':
			escaped = true
			i++
			if i >= len(s.b) {
				s.bail = true
				return nil, false
			}
			switch s.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s.b) {
					s.bail = true
					return nil, false
				}
				for _, h := range s.b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						s.bail = true
						return nil, false
					}
				}
				i += 4
			default:
				s.bail = true
				return nil, false
			}
		}
	}
	s.bail = true
	return nil, false
}

// number reads a JSON number at s.i.
func (s *rowScanner) number() {
	b, i := s.b, s.i
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		s.bail = true
		return
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			s.bail = true
			return
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			s.bail = true
			return
		}
	}
	s.i = i
}

// literal reads true, false or null at s.i and returns its first byte.
func (s *rowScanner) literal() byte {
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
			s.i += len(lit)
			return lit[0]
		}
	}
	s.bail = true
	return 0
}

// stringField reads a value into a string field as encoding/json does: a
// string is decoded, anything else leaves the field "".
func (s *rowScanner) stringField() string {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.skip(1)
		return ""
	}
	start := s.i
	raw, escaped := s.str()
	if s.bail {
		return ""
	}
	if !escaped && utf8.Valid(raw) {
		return string(raw)
	}
	var v string
	if json.Unmarshal(s.b[start:s.i], &v) != nil {
		s.bail = true
	}
	return v
}

// boolField reads a value into a bool field: true is true, anything else
// leaves it false.
func (s *rowScanner) boolField() bool {
	if s.i < len(s.b) && s.b[s.i] == 't' {
		return s.literal() == 't'
	}
	s.skip(1)
	return false
}

// origin reads a value into Row.Origin's place: null is nil, an object its
// kind, anything else an empty origin (encoding/json allocates it).
func (s *rowScanner) origin() *tailOrigin {
	switch {
	case s.i < len(s.b) && s.b[s.i] == '{':
		o := &tailOrigin{}
		var seen [1]bool
		s.object(1, func(key []byte) bool {
			switch k := fieldIndex(key, seen[:], "kind"); k {
			case 0:
				o.Kind = s.stringField()
			case -1:
				s.skip(2)
			default:
				return false
			}
			return true
		})
		return o
	case s.i < len(s.b) && s.b[s.i] == 'n':
		s.literal()
		return nil
	}
	s.skip(1)
	return &tailOrigin{}
}

// message reads a value into Row.Message's place, as origin does.
func (s *rowScanner) message() *tailMessage {
	switch {
	case s.i < len(s.b) && s.b[s.i] == '{':
		m := &tailMessage{}
		var seen [3]bool
		s.object(1, func(key []byte) bool {
			switch k := fieldIndex(key, seen[:], "id", "stop_reason", "content"); k {
			case 0:
				m.ID = s.stringField()
			case 1:
				m.StopReason = s.stringField()
			case 2:
				m.Content = s.content()
			case -1:
				s.skip(2)
			default:
				return false
			}
			return true
		})
		return m
	case s.i < len(s.b) && s.b[s.i] == 'n':
		s.literal()
		return nil
	}
	s.skip(1)
	return &tailMessage{}
}

// content reads a message's content as contentBlocks does.
func (s *rowScanner) content() tailContent {
	if s.i >= len(s.b) {
		s.bail = true
		return nil
	}
	switch s.b[s.i] {
	case '"':
		return tailContent{{Type: "text", Text: s.stringField()}}
	case '[':
		blocks := tailContent{}
		s.array(2, func(depth int) {
			var b tailBlock
			if s.i < len(s.b) && s.b[s.i] == '{' {
				var seen [4]bool
				s.object(depth, func(key []byte) bool {
					switch k := fieldIndex(key, seen[:], "type", "text", "name", "input"); k {
					case 0:
						b.Type = s.stringField()
					case 1:
						b.Text = s.stringField()
					case 2:
						b.Name = s.stringField()
					case 3:
						start := s.i
						s.skip(depth + 1)
						b.Input = json.RawMessage(bytes.Clone(s.b[start:s.i]))
					case -1:
						s.skip(depth + 1)
					default:
						return false
					}
					return true
				})
			} else {
				s.skip(depth)
			}
			blocks = append(blocks, b)
		})
		return blocks
	}
	s.skip(2)
	return nil
}
