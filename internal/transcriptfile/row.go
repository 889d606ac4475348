package transcriptfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"
)

// RowType is a transcript row's "type". Rows of other types exist and are
// tolerated; these are the ones the module reads.
type RowType string

// The row types the module interprets.
const (
	RowUser           RowType = "user"
	RowAssistant      RowType = "assistant"
	RowAttachment     RowType = "attachment"
	RowQueueOperation RowType = "queue-operation"
	// RowCostState is the row a claude process writes when it exits: the
	// session's cost so far (a resumed process's counts the earlier
	// processes', measured with 2.1.332: e2e TestCostState).
	RowCostState RowType = "cost-state"
)

// Attachment types the module interprets.
const (
	// AttachmentQueuedCommand is a line queued while a turn ran and
	// absorbed into it (a peer's when it carries an origin).
	AttachmentQueuedCommand = "queued_command"
)

// QueueEnqueue is the operation of the queue-operation row Claude Code
// writes when it queues a line (the doorman's proof of delivery).
const QueueEnqueue = "enqueue"

// OriginKindPeer is the origin kind of a line another process wrote to the
// session's door.
const OriginKindPeer = "peer"

// Stop reasons of an assistant message that ends a turn with a final answer.
const (
	StopEndTurn      = "end_turn"
	StopStopSequence = "stop_sequence"
	StopToolUse      = "tool_use"
)

// Row is one transcript line, with the fields the module uses. Fields a
// row lacks, or holds with an unexpected JSON type, are zero.
type Row struct {
	Type        RowType     `json:"type"`
	UUID        string      `json:"uuid"`
	ParentUUID  string      `json:"parentUuid"`
	Timestamp   string      `json:"timestamp"`
	SessionID   string      `json:"sessionId"`
	CWD         string      `json:"cwd"`
	Entrypoint  string      `json:"entrypoint"`
	IsSidechain bool        `json:"isSidechain"`
	IsMeta      bool        `json:"isMeta"`
	AgentID     string      `json:"agentId"`
	TurnOrigin  string      `json:"turnOrigin"`
	Origin      *Origin     `json:"origin"`
	Message     *Message    `json:"message"`
	Attachment  *Attachment `json:"attachment"`

	// queue-operation rows.
	Operation string          `json:"operation"`
	Reason    string          `json:"reason"`
	Content   json.RawMessage `json:"content"`

	// cost-state rows: Claude Code's own figure of the session's cost, and
	// whether a model it used had no price (the figure leaves it out).
	TotalCostUSD        *float64 `json:"totalCostUSD"`
	HasUnknownModelCost bool     `json:"hasUnknownModelCost"`

	// IsCompactSummary marks the summary Claude Code injects after compacting.
	IsCompactSummary bool `json:"isCompactSummary"`

	// A tool_result row of a call the CLI's permission check refused
	// (measured with 2.1.332): toolDenialKind (e.g. "user-rejected") and
	// permissionDecision {"decision": "reject", ...}.
	ToolDenialKind     string              `json:"toolDenialKind"`
	PermissionDecision *PermissionDecision `json:"permissionDecision"`
}

// PermissionDecision is the CLI's permission decision recorded on a
// tool_result row.
type PermissionDecision struct {
	Decision string `json:"decision"` // "reject" for a refused call
}

// OriginKindHuman is the origin kind of a prompt the user typed into the
// interactive TUI (with promptSource "typed").
const OriginKindHuman = "human"

// Origin says who a line came from when it was not typed by the user:
// for a peer, the door's from and msg_id and the writer the session verified.
type Origin struct {
	Kind                  string `json:"kind"`
	From                  string `json:"from"`
	VerifiedPeerPid       int    `json:"verifiedPeerPid"`
	VerifiedPeerProcStart string `json:"verifiedPeerProcStart"`
	MsgID                 string `json:"msg_id"`
	SelfSent              bool   `json:"selfSent"`
}

// Message is a user or assistant message of a row.
type Message struct {
	Role       string          `json:"role"`
	ID         string          `json:"id"`
	Model      string          `json:"model"`
	Content    json.RawMessage `json:"content"` // a string or an array of blocks
	StopReason string          `json:"stop_reason"`
	// Usage is an assistant message's token counts (nil when the row has
	// none). Rows of one message (one per content block) repeat it.
	Usage *Usage `json:"usage"`
}

// Usage is the token counts of one model request, as the API reported
// them on the assistant message.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// Total is every token of the request: input, cache and output.
func (u *Usage) Total() int64 {
	if u == nil {
		return 0
	}
	return u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// A TokenTally counts the tokens of a transcript's own model requests,
// each once: the rows of one assistant message (one per content block)
// share its id and repeat its usage. Rows fed newest first count as rows
// fed oldest first. Its zero value is an empty tally.
type TokenTally struct {
	// Tokens is the tokens (input, cache and output) counted so far.
	Tokens int64
	lastID string
}

// Add counts r and reports whether it begins an assistant message of the
// session's own (a model request answered); a rider's rows (sidechain)
// and other rows count nothing.
func (t *TokenTally) Add(r *Row) bool {
	if r.Type != RowAssistant || r.Message == nil || r.IsSidechain {
		return false
	}
	if id := r.Message.ID; id != "" && id == t.lastID {
		return false
	}
	t.lastID = r.Message.ID
	t.Tokens += r.Message.Usage.Total()
	return true
}

// Block is one content block of a message.
type Block struct {
	Type      string          `json:"type"` // text, tool_use, tool_result, thinking, image, ...
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	// tool_result blocks: whether the call failed, and its content (a
	// string or blocks).
	IsError bool            `json:"is_error"`
	Content json.RawMessage `json:"content"`
}

// Attachment is the attachment of an attachment row.
type Attachment struct {
	Type   string          `json:"type"`
	Prompt json.RawMessage `json:"prompt"` // queued_command: the line (a string, or blocks)
	Origin *Origin         `json:"origin"`
	IsMeta bool            `json:"isMeta"`
}

// ErrBadRow is returned (wrapped) by ParseRow for a line that is not a JSON
// object.
var ErrBadRow = errors.New("transcript: bad row")

// ParseRow parses one transcript line leniently: unknown fields and types
// are ignored and a field holding an unexpected JSON type is left zero. Only
// a line that is not a JSON object is an error (wrapping ErrBadRow).
func ParseRow(line []byte) (Row, error) {
	var r Row
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return Row{}, ErrBadRow
	}
	if err := json.Unmarshal(line, &r); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return Row{}, errors.Join(ErrBadRow, err)
		}
		// encoding/json finished the rest of the row; keep it.
	}
	return r, nil
}

// Time returns the row's timestamp, or the zero time when it has none or
// it does not parse.
func (r *Row) Time() time.Time {
	t, err := time.Parse(time.RFC3339Nano, r.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Blocks returns the message's content as blocks: a string content is one
// text block. Blocks that do not parse are left out.
func (m *Message) Blocks() []Block {
	if m == nil {
		return nil
	}
	return contentBlocks(m.Content)
}

func contentBlocks(raw json.RawMessage) []Block {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		return []Block{{Type: "text", Text: s}}
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		out := make([]Block, 0, len(items))
		for _, it := range items {
			var b Block
			if err := json.Unmarshal(it, &b); err != nil {
				var te *json.UnmarshalTypeError
				if !errors.As(err, &te) {
					continue
				}
			}
			out = append(out, b)
		}
		return out
	}
	return nil
}

// TextOf joins the text blocks of raw content with "\n".
func TextOf(raw json.RawMessage) string {
	var buf []byte
	for _, b := range contentBlocks(raw) {
		if b.Type != "text" || b.Text == "" {
			continue
		}
		if len(buf) > 0 {
			buf = append(buf, '\n')
		}
		buf = append(buf, b.Text...)
	}
	return string(buf)
}

// PeerOrigin returns the peer origin of a user row or of a queued_command
// attachment row, or nil.
func (r *Row) PeerOrigin() *Origin {
	o := r.Origin
	if r.Type == RowAttachment && r.Attachment != nil {
		o = r.Attachment.Origin
	}
	if o == nil || o.Kind != OriginKindPeer {
		return nil
	}
	return o
}

// PeerLineMsgID is the one rule of "a row shows a peer line": the msg_id
// of the peer line the row shows the model, when it is a main-thread user
// row or queued_command attachment row whose origin is a peer's (the
// doorman's door frame carried that msg_id); "" otherwise. A sidechain's
// row shows the main thread's model nothing.
func (r *Row) PeerLineMsgID() string {
	switch {
	case r.IsSidechain:
		return ""
	case r.Type == RowUser:
	case r.Type == RowAttachment && r.Attachment != nil && r.Attachment.Type == AttachmentQueuedCommand:
	default:
		return ""
	}
	if o := r.PeerOrigin(); o != nil {
		return o.MsgID
	}
	return ""
}

// FinalAnswer reports whether the row is an assistant message that ends its
// turn with text: stop_reason end_turn or stop_sequence and no tool_use.
func (r *Row) FinalAnswer() bool {
	if r.Type != RowAssistant || r.Message == nil {
		return false
	}
	if r.Message.StopReason != StopEndTurn && r.Message.StopReason != StopStopSequence {
		return false
	}
	for _, b := range r.Message.Blocks() {
		if b.Type == "tool_use" {
			return false
		}
	}
	return true
}
