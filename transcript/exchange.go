package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/internal/jsonscan"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

// DefaultExchanges is how many exchanges Exchanges returns for n <= 0.
const DefaultExchanges = 3

// maxReadRow bounds the bytes Exchanges holds for one row: a longer row
// is passed over (counted, like a line that is not JSON) without being
// held, so a corrupt or sparse transcript cannot make a read hold what it
// cannot afford. 16 MiB is four times a watch's bound and holds a prompt
// with pasted images; parsed, such a row costs about 100 MB at most.
const maxReadRow = 16 << 20

// maxToolInput is the most characters of a tool call's input summary.
const maxToolInput = 120

// Exchange is one turn: the prompt that started it and what followed until
// the next prompt. It is what `oo-claude read --json` prints.
type Exchange struct {
	Prompt     Prompt     `json:"prompt"`
	Assistant  string     `json:"assistant"`   // the assistant's text blocks, joined by a blank line
	Tools      []ToolCall `json:"tools"`       // the tools it called, in order
	Peers      []PeerLine `json:"peers"`       // peer lines absorbed mid-turn, in order
	Start      time.Time  `json:"start"`       // the prompt's timestamp
	End        time.Time  `json:"end"`         // the last row of the exchange
	StopReason string     `json:"stop_reason"` // of the last assistant message ("" while it runs)
}

// Prompt is what started an exchange.
type Prompt struct {
	Kind      PromptKind `json:"kind"`
	Text      string     `json:"text"` // a peer's line without Claude Code's wrapper
	Peer      *PeerLine  `json:"peer"` // set when Kind is PromptPeer
	UUID      string     `json:"uuid"`
	Timestamp time.Time  `json:"timestamp"`
}

// PeerLine is a line another process wrote to the session's door, as the
// session recorded it. MsgID is the frame's msg_id: the doorman's, so a send
// receipt can be matched to it.
type PeerLine struct {
	Text                  string    `json:"text"`
	From                  string    `json:"from"`
	MsgID                 string    `json:"msg_id"`
	VerifiedPeerPid       int       `json:"verified_peer_pid"`
	VerifiedPeerProcStart string    `json:"verified_peer_proc_start"`
	SelfSent              bool      `json:"self_sent"`
	Timestamp             time.Time `json:"timestamp"`
}

// ToolCall is one tool_use of the assistant.
type ToolCall struct {
	Name  string `json:"name"`
	Input string `json:"input"` // a one-line summary of the input, at most 120 characters
	ID    string `json:"id"`
	// Blocked: the CLI did not run the call. Its permission check refused
	// it (the result row's toolDenialKind / permissionDecision reject), or
	// the tool refused it before running ("Blocked: standalone sleep").
	// Left out of the JSON when false.
	Blocked bool `json:"blocked,omitempty"`
}

// stats describes what a read looked at.
type stats struct {
	Rows      int   `json:"rows"`       // rows parsed
	BadLines  int   `json:"bad_lines"`  // lines skipped because they are not JSON objects
	LongRows  int   `json:"long_rows"`  // rows skipped, unread, for being longer than maxReadRow
	TornBytes int64 `json:"torn_bytes"` // length of an unterminated last line left out
	BytesRead int64 `json:"bytes_read"` // bytes read from the file
}

// Exchanges returns the last n exchanges (DefaultExchanges for n <= 0) of
// the transcript at path, oldest first, reading from the end only as far
// back as the n-th last prompt (a transcript with fewer prompts is read
// whole; only the exchanges' summaries are kept in memory). A row longer
// than 16 MiB is skipped as a line that is not JSON is, and the torn last
// line is never held, whatever its length.
//
// A prompt is a user row that is not only tool results: the user's, a
// peer's that started a turn (isMeta with a peer origin — a "later" line, a
// line still queued at the end of a turn, or a "now" line, which Claude Code
// 2.1.332 records as a new turn after the tool result) or one Claude Code
// injected to start a turn (PromptSystem, e.g. a task notification). Peer
// lines absorbed mid-turn are the queued_command attachments with a peer
// origin. Sidechain rows and meta rows without a peer origin are skipped.
func Exchanges(path string, n int) ([]Exchange, error) {
	f, size, err := openTranscript(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ex, _, err := exchangesFrom(f, size, n)
	if err != nil {
		return nil, pathError("read", path, err)
	}
	return ex, nil
}

// exchangesFrom is Exchanges over the first size bytes of r, with what it
// read.
func exchangesFrom(r io.ReaderAt, size int64, n int) ([]Exchange, stats, error) {
	if n <= 0 {
		n = DefaultExchanges
	}
	rd := transcriptfile.NewReader(r, size, 0)
	rd.SetMaxLine(maxReadRow)
	var st stats
	var out []Exchange // newest first
	var acc pending
	for len(out) < n {
		line, _, err := rd.Prev()
		if errors.Is(err, io.EOF) {
			break // rows before the file's first prompt belong to no exchange
		}
		if err != nil {
			return nil, st, err
		}
		if !looksLikeObject(line) {
			st.BadLines++
			continue
		}
		if !mayMatter(line) {
			continue
		}
		row, err := transcriptfile.ParseRow(line)
		if err != nil {
			st.BadLines++
			continue
		}
		st.Rows++
		if row.IsSidechain {
			continue
		}
		if kind, ok := promptKind(&row); ok {
			out = append(out, acc.finish(&row, kind))
			acc = pending{}
			continue
		}
		acc.add(&row)
	}
	st.TornBytes = rd.TornBytes()
	st.LongRows = rd.LongLines()
	st.BytesRead = rd.BytesRead()
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, st, nil
}

// looksLikeObject is the cheap part of ParseRow's check, done on every
// line, also the ones mayMatter lets pass unparsed.
func looksLikeObject(line []byte) bool {
	line = bytes.TrimSpace(line)
	return len(line) >= 2 && line[0] == '{' && line[len(line)-1] == '}'
}

var (
	markUser       = []byte(`"user"`)
	markAssistant  = []byte(`"assistant"`)
	markAttachment = []byte(`"attachment"`)
)

// mayMatter is a cheap filter: a row of a type Exchanges reads holds its
// type as a JSON string, so a line holding none of them is not parsed.
func mayMatter(line []byte) bool {
	return bytes.Contains(line, markUser) || bytes.Contains(line, markAssistant) ||
		bytes.Contains(line, markAttachment)
}

func newExchange(row *transcriptfile.Row, kind PromptKind) Exchange {
	t := row.Time()
	p := Prompt{Kind: kind, UUID: row.UUID, Timestamp: t}
	text := transcriptfile.TextOf(row.Message.Content)
	if kind == PromptPeer {
		text = unwrapPeer(text)
		if o := row.PeerOrigin(); o != nil {
			pl := peerLine(o, text, t)
			p.Peer = &pl
		}
	}
	p.Text = text
	return Exchange{Prompt: p, Start: t, End: t, Tools: []ToolCall{}, Peers: []PeerLine{}}
}

// pending gathers what follows a prompt while the rows are read backwards,
// newest first: only the summary is kept, never the rows, so a long turn
// costs memory for its text and tool calls only.
type pending struct {
	texts   []string // newest first
	tools   []ToolCall
	blocked map[string]bool // tool_use ids whose result says the CLI refused the call
	peers   []PeerLine
	end     time.Time
	stop    string
	stopSet bool
}

// add takes the row before the ones added so far.
func (p *pending) add(row *transcriptfile.Row) {
	switch row.Type {
	case transcriptfile.RowAssistant:
		if row.Message == nil {
			return
		}
		blocks := row.Message.Blocks()
		for i := len(blocks) - 1; i >= 0; i-- {
			b := blocks[i]
			switch b.Type {
			case "text":
				if strings.TrimSpace(b.Text) != "" {
					p.texts = append(p.texts, b.Text)
				}
			case "tool_use":
				p.tools = append(p.tools, ToolCall{Name: b.Name, Input: summarizeInput(b.Input), ID: b.ID, Blocked: p.blocked[b.ID]})
			}
		}
		if !p.stopSet && row.Message.StopReason != "" {
			p.stop, p.stopSet = row.Message.StopReason, true
		}
	case transcriptfile.RowUser:
		// Tool results and meta rows move the end; a result that says the
		// CLI refused its call marks that call (read before it: backwards).
		for _, id := range blockedCalls(row) {
			if p.blocked == nil {
				p.blocked = map[string]bool{}
			}
			p.blocked[id] = true
		}
	case transcriptfile.RowAttachment:
		if row.Attachment == nil || row.Attachment.Type != transcriptfile.AttachmentQueuedCommand {
			return
		}
		o := row.PeerOrigin()
		if o == nil {
			return // the user's own line typed during the turn
		}
		p.peers = append(p.peers, peerLine(o, transcriptfile.TextOf(row.Attachment.Prompt), row.Time()))
	default:
		return
	}
	if t := row.Time(); t.After(p.end) {
		p.end = t
	}
}

// finish returns the exchange prompt started, with what was gathered.
func (p *pending) finish(prompt *transcriptfile.Row, kind PromptKind) Exchange {
	e := newExchange(prompt, kind)
	slices.Reverse(p.texts)
	e.Assistant = strings.Join(p.texts, "\n\n")
	e.Tools = append(e.Tools, p.tools...)
	slices.Reverse(e.Tools)
	e.Peers = append(e.Peers, p.peers...)
	slices.Reverse(e.Peers)
	e.StopReason = p.stop
	if p.end.After(e.End) {
		e.End = p.end
	}
	return e
}

// toolBlocked is how a tool's own refusal before running starts its
// tool_result (Claude Code 2.1.332's Bash: "<tool_use_error>Blocked:
// standalone sleep 25. …").
const toolBlocked = "<tool_use_error>Blocked:"

// blockedCalls returns the tool_use ids of row's tool results that say the
// CLI did not run the call: the row records a permission refusal
// (toolDenialKind, or permissionDecision "reject"), or the result is an
// error the tool gave before running (toolBlocked).
func blockedCalls(row *transcriptfile.Row) []string {
	denied := row.ToolDenialKind != "" || row.PermissionDecision != nil && row.PermissionDecision.Decision == "reject"
	var ids []string
	for _, b := range row.Message.Blocks() {
		if b.Type != "tool_result" || !b.IsError || b.ToolUseID == "" {
			continue
		}
		if denied || strings.HasPrefix(strings.TrimSpace(transcriptfile.TextOf(b.Content)), toolBlocked) {
			ids = append(ids, b.ToolUseID)
		}
	}
	return ids
}

func peerLine(o *transcriptfile.Origin, text string, t time.Time) PeerLine {
	return PeerLine{
		Text: text, From: o.From, MsgID: o.MsgID,
		VerifiedPeerPid: o.VerifiedPeerPid, VerifiedPeerProcStart: o.VerifiedPeerProcStart,
		SelfSent: o.SelfSent, Timestamp: t,
	}
}

// The wrapper Claude Code puts around a peer line that starts a turn.
const (
	peerPrefix = "Another Claude session sent a message:\n"
	peerSuffix = "\n\nThis came from another Claude session"
)

// unwrapPeer returns the peer's line from the user message Claude Code
// built around it, or text unchanged when it does not have that shape.
func unwrapPeer(text string) string {
	rest, ok := strings.CutPrefix(text, peerPrefix)
	if !ok {
		return text
	}
	if i := strings.LastIndex(rest, peerSuffix); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// inputKeys are the input fields that say what a tool call does, in the
// order they are preferred.
var inputKeys = [...]string{"command", "file_path", "notebook_path", "path", "pattern", "url", "query", "description", "prompt", "skill"}

// summarizeInput returns a one-line summary of a tool_use input of at most
// maxToolInput characters: the first of its command, file_path, path,
// pattern, url, query, description, prompt or skill fields that is a
// string, else the input's compact JSON.
func summarizeInput(input json.RawMessage) string {
	s, ok := inputFieldScan(input)
	if !ok {
		s = inputField(input)
	}
	if s == "" {
		var buf bytes.Buffer
		if json.Compact(&buf, input) == nil {
			s = buf.String()
		}
	}
	return clip(oneLine(s), maxToolInput)
}

// inputField is the first of inputKeys whose value in the object input is
// a non-empty string, decoded with encoding/json; "" when none is (or
// input is no object).
func inputField(input []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	for _, k := range inputKeys {
		var v string
		if raw, ok := m[k]; ok && json.Unmarshal(raw, &v) == nil && v != "" {
			return v
		}
	}
	return ""
}

// inputFieldScan is inputField in one pass over input without a map or
// encoding/json (a Bash command, a Read file_path: most tool calls), for
// an object whose keys are plain ASCII: a later key wins over an earlier
// one of the same bytes, as in inputField's map, and a value that is not a
// string counts as none. ok is false when it cannot be sure to read input
// as inputField does (it is not an object, a key is escaped or not ASCII,
// the scanner bails) or none of inputKeys has a non-empty string: the
// caller asks inputField (and the compact JSON follows).
func inputFieldScan(input []byte) (field string, ok bool) {
	s := jsonscan.New(bytes.TrimSpace(input))
	if s.Peek() != '{' {
		return "", false
	}
	var vals [len(inputKeys)]string
	s.Object(0, func(key []byte) bool {
		for _, c := range key {
			if c == '\\' || c >= utf8.RuneSelf {
				return false
			}
		}
		k := slices.Index(inputKeys[:], string(key))
		switch {
		case k < 0:
			s.Skip(1)
		case s.Peek() == '"':
			vals[k] = s.String()
		default:
			s.Skip(1)
			vals[k] = ""
		}
		return true
	})
	if !s.Done() {
		return "", false
	}
	for _, v := range vals {
		if v != "" {
			return v, true
		}
	}
	return "", false
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// clip cuts s to at most n characters, ending in "…" when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, c := 0, 0
	for j := range s {
		if c == n-1 {
			i = j
			break
		}
		c++
	}
	return s[:i] + "…"
}
