package receipt

import (
	"encoding/json"
	"time"

	"github.com/oo-family/oo-claude/internal/jsonrow"
)

// Doorman is the doorman's heartbeat as a send row reports it (the row's
// "doorman" key): the v0.1 keys fresh, pid, age and state (COMPATIBILITY.md,
// "Added keys (extensions)"), plus why it was not fresh.
type Doorman struct {
	Fresh bool     `json:"fresh"`
	PID   *int     `json:"pid"`
	Age   *float64 `json:"age"`   // seconds since the heartbeat's last_seen
	State *string  `json:"state"` // the heartbeat's state; null when it has none
	// NotFreshBecause is oo-claude's extension: missing, unreadable, stale,
	// state, pid-gone or other-session; null when fresh.
	NotFreshBecause *string `json:"not_fresh_because"`
	// LastError is oo-claude's extension: the heartbeat's last_error (why
	// lines are pending); null when it has none.
	LastError *string `json:"last_error"`
	// Pending is oo-claude's extension: the reason last_error starts with
	// when it says why lines are pending (receiver-did-not-queue,
	// ack-unwritable, bad-token, attempt-unwritable); null otherwise.
	Pending *string `json:"pending"`
}

// SendRow is the receipt of one send: every key of the v0.1 send row
// (COMPATIBILITY.md, "Added keys (extensions)"), in its
// order, unused ones null, then oo-claude's additions (seen, seen_s,
// reply, reply_s, priority).
// ReceiptWriteError is present only in a row that is printed after the
// write failed.
type SendRow struct {
	TS    string `json:"ts"`    // when the verdict was reached (ISO 8601, UTC, ms)
	TSMS  int64  `json:"ts_ms"` // the same, unix milliseconds
	Kind  Kind   `json:"kind"`  // always "send"
	Class string `json:"class"` // delivered-steer, delivered-start, refused, queued-no-doorman, queued-offline, timeout, dropped
	// Delivered is true for the delivered-* classes.
	Delivered bool    `json:"delivered"`
	Target    string  `json:"target"`     // the target as the caller gave it
	SessionID *string `json:"session_id"` // the resolved session id; null when the target did not resolve
	Name      *string `json:"name"`       // the session's registry name (running sessions)
	PID       *int    `json:"pid"`        // the session's claude pid (running sessions)
	Running   *bool   `json:"running"`    // whether a live registry row names the session; null when unresolved
	Status    *string `json:"status"`     // the registry status (busy, idle, waiting)
	From      *string `json:"from"`       // the sender name
	Line      *string `json:"line"`       // the line as written (with its tag), or as it was refused
	SHA256    *string `json:"sha256"`     // hex sha256 of the line's bytes
	Bytes     *int    `json:"bytes"`      // the line's length in bytes, without the newline
	Inbox     *string `json:"inbox"`      // the inbox file
	// LineOffset is the byte offset at which the line starts in the inbox;
	// null when it was not written.
	LineOffset *int64   `json:"line_offset"`
	Doorman    *Doorman `json:"doorman"` // the heartbeat read after the append; null when none was read
	// Ack is the doorman's ack line for this line, as the doorman wrote it.
	Ack          json.RawMessage `json:"ack"`
	PeerStatus   *string         `json:"peer_status"`    // busy | idle, from the ack
	MsgID        *string         `json:"msg_id"`         // the door frame's msg_id, from the ack
	WaitedS      *float64        `json:"waited_s"`       // how long the ack was waited for
	WaitS        *float64        `json:"wait_s"`         // the Sender's Wait
	MinIntervalS *float64        `json:"min_interval_s"` // the Sender's MinInterval
	Reason       *string         `json:"reason"`         // why refused / queued-no-doorman / dropped
	Note         *string         `json:"note"`           // human advice (e.g. resend after N s)
	Hint         *string         `json:"hint"`           // a command to run next (e.g. oo-claude resume <id>)
	// ClientVersion is the sending program's version (the CLI's own);
	// null when the program gave none.
	ClientVersion *string `json:"client_version"`

	// Seen is oo-claude's addition (Sender.SeenWait): whether the session's
	// transcript showed a row with msg_id within the wait, the proof that
	// the model saw the line; null when it was not asked for or the line
	// was not delivered.
	Seen *bool `json:"seen"`
	// SeenS is how long the transcript was watched after the ack: until
	// the row came, or the whole seen wait; null with seen.
	SeenS *float64 `json:"seen_s"`
	// Transcript and TranscriptOffset are oo-claude's additions: the
	// session's transcript the seen or reply wait read, and the byte
	// offset it started from (the transcript's size before the append),
	// so a program reads the reply later from there
	// (transcript.ReplyOptions.From); null when no wait read one.
	Transcript       *string `json:"transcript"`
	TranscriptOffset *int64  `json:"transcript_offset"`
	// Reply is oo-claude's addition (Sender.ReplyWait): the session's answer
	// to the line; null when it was not asked for, the line was not
	// delivered, or no complete reply came within the wait.
	Reply *Reply `json:"reply"`
	// ReplyS is how long the reply was waited for after the ack: until it
	// was complete, or the whole reply wait; null when not asked for.
	ReplyS *float64 `json:"reply_s"`
	// Priority is oo-claude's addition (Request.Priority): the line's
	// priority, now, next or later; null when no line was formed.
	Priority *string `json:"priority"`
	// Confirm is oo-claude's addition, from the ack: what the delivery
	// rests on, "transcript" (the receiver's enqueue row was seen) or
	// "settle" (the session's transcript could not be located); null
	// without a delivered ack.
	Confirm *string `json:"confirm"`
	// QueuedAt is the ack's queued_at: the timestamp of the receiver's
	// enqueue row for the line; null when none was seen.
	QueuedAt *string `json:"queued_at"`
	// WaitEnd is oo-claude's addition (send --seen, --reply): why the seen
	// or reply wait ended without the row or the answer it waited for:
	// "wait-timeout", "session-ended" (the session's process exited, its
	// registry row went, or it switched to another session id),
	// "interrupted" or "io-error"; null when it got what it waited for or
	// no wait ran.
	WaitEnd *string `json:"wait_end"`
	// Interrupted is oo-claude's addition: what cut a wait of the send
	// short (the ack's, the row's or the reply's) or stopped it before the
	// line was written: the signal's name ("SIGINT", "SIGTERM"), or
	// "canceled" or "deadline-exceeded" for a program's context; null when
	// nothing did.
	Interrupted *string `json:"interrupted"`
	// Station is oo-claude's addition: the station the send ran on
	// (OO_CLAUDE_STATION, user@host by default); null when the sender
	// named none.
	Station *string `json:"station"`

	ReceiptWriteError *string `json:"receipt_write_error,omitempty"`
}

// Reply is a session's answer to one line it was sent, as the transcript
// shows it: the main-chain assistant text written after the row that shows
// the line went to the model, to the end of that turn or to the next prompt
// (package transcript reads it; this is its one shape, also the send row's
// "reply" object).
type Reply struct {
	// Text is the assistant's text blocks, in order, joined with "\n".
	Text string `json:"text"`
	// Tools names the tools the model called in between, in order (a
	// tool called twice is named twice); empty, never null, when none.
	Tools []string `json:"tools"`
	// StopReason is the stop_reason of the reply's last assistant message
	// (end_turn, stop_sequence, max_tokens, tool_use, ...); "" when the
	// model wrote nothing.
	StopReason string `json:"stop_reason"`
	// TurnEnded reports that the turn ended with this reply (a final
	// answer); false when the next prompt (a user's or another peer's
	// line) cut it while the turn went on.
	TurnEnded bool `json:"turn_ended"`
	// At is the timestamp of the reply's last row; zero when unknown.
	At time.Time `json:"at,omitzero"`
}

func (r SendRow) stamped(t time.Time) any {
	if r.TS == "" {
		r.TS, r.TSMS = jsonrow.Stamp(t)
	}
	if r.Kind == "" {
		r.Kind = KindSend
	}
	return r
}

// Run is what one `claude -p` run reported, the keys the resume and start
// rows (and start's result file) share: the v0.1 resume keys
// (COMPATIBILITY.md, "Added keys (extensions)"), null until known.
type Run struct {
	ExitCode       *int     `json:"exit_code"`       // claude's exit code
	Subtype        *string  `json:"subtype"`         // the result's subtype (success, error_max_turns, …)
	IsError        *bool    `json:"is_error"`        // the result's is_error
	NumTurns       *int     `json:"num_turns"`       // the result's num_turns
	TotalCostUSD   *float64 `json:"total_cost_usd"`  // the result's total_cost_usd (the whole process)
	TerminalReason *string  `json:"terminal_reason"` // the result's terminal_reason
	Result         *string  `json:"result"`          // the result's text
	// ResultSessionID is the result's session_id (the session's own when
	// all went well).
	ResultSessionID *string `json:"result_session_id"`
	DurationMS      *int64  `json:"duration_ms"` // the result's duration_ms, else the process's wall time
	StderrTail      *string `json:"stderr_tail"` // the last lines claude wrote to stderr
	// Turns is every turn of the process, in order (one per result event
	// of --output-format stream-json): a line that arrived while claude
	// ran starts a turn of its own. The keys above describe the final
	// turn, total_cost_usd the whole process. Null when claude did not
	// run; empty when it printed no result.
	Turns []Turn `json:"turns"`
}

// Turn is one turn of a claude -p process, from its result event.
type Turn struct {
	Index int `json:"index"` // the result's result_index (0 for the first turn)
	// StartedBy is what started the turn: "prompt" (the line or prompt
	// oo-claude passed) or "peer" (a line delivered while claude ran).
	StartedBy string  `json:"started_by"`
	MsgID     *string `json:"msg_id"` // a peer turn's origin.msg_id: the frame the doorman wrote
	From      *string `json:"from"`   // a peer turn's origin.from
	Subtype   string  `json:"subtype"`
	IsError   bool    `json:"is_error"`
	Result    *string `json:"result"` // the turn's text (claude's reason when is_error)
	NumTurns  int     `json:"num_turns"`
	// CostUSD is this turn's cost; TotalCostUSD claude's total_cost_usd at
	// the turn's end, which for a resumed session counts its earlier
	// processes too.
	CostUSD        float64 `json:"cost_usd"`
	TotalCostUSD   float64 `json:"total_cost_usd"`
	DurationMS     int64   `json:"duration_ms"`
	TerminalReason *string `json:"terminal_reason"`
}

// Started-by values of a [Turn].
const (
	TurnByPrompt = "prompt"
	TurnByPeer   = "peer"
)

// ResumeRow is the receipt of one resume: the send row's keys (the ones a
// resume has no use for stay null: inbox, line_offset, ack, waits …), then
// the v0.1 resume keys (COMPATIBILITY.md, "Added keys (extensions)").
// Argv has the line replaced by "<line>".
type ResumeRow struct {
	TS            string          `json:"ts"`
	TSMS          int64           `json:"ts_ms"`
	Kind          Kind            `json:"kind"`  // always "resume"
	Class         string          `json:"class"` // delivered-resume, refused, held-by-session, error, timeout
	Delivered     bool            `json:"delivered"`
	Target        string          `json:"target"`
	SessionID     *string         `json:"session_id"`
	Name          *string         `json:"name"`
	PID           *int            `json:"pid"` // the claude child's pid
	Running       *bool           `json:"running"`
	Status        *string         `json:"status"`
	From          *string         `json:"from"`
	Line          *string         `json:"line"`
	SHA256        *string         `json:"sha256"`
	Bytes         *int            `json:"bytes"`
	Inbox         *string         `json:"inbox"`
	LineOffset    *int64          `json:"line_offset"`
	Doorman       *Doorman        `json:"doorman"` // the heartbeat that made it held-by-session, if that was why
	Ack           json.RawMessage `json:"ack"`
	PeerStatus    *string         `json:"peer_status"`
	MsgID         *string         `json:"msg_id"`
	WaitedS       *float64        `json:"waited_s"`
	WaitS         *float64        `json:"wait_s"`
	MinIntervalS  *float64        `json:"min_interval_s"`
	Reason        *string         `json:"reason"`
	Note          *string         `json:"note"`
	Hint          *string         `json:"hint"`
	ClientVersion *string         `json:"client_version"`

	CWD        *string  `json:"cwd"`        // where claude ran: the transcript's recorded cwd or the request's CWD
	Transcript *string  `json:"transcript"` // the session's transcript file
	Model      *string  `json:"model"`      // claude --model
	MaxTurns   *int     `json:"max_turns"`  // claude --max-turns
	BudgetUSD  *float64 `json:"budget_usd"` // claude --max-budget-usd
	Tools      *string  `json:"tools"`      // claude --tools as passed ("" = none)
	Argv       []string `json:"argv"`       // claude's argv, the line replaced by <line>
	HeldBy     *string  `json:"held_by"`    // registry-row | heartbeat | process | lock, when held-by-session
	Run

	ReceiptWriteError *string `json:"receipt_write_error,omitempty"`
}

func (r ResumeRow) stamped(t time.Time) any {
	if r.TS == "" {
		r.TS, r.TSMS = jsonrow.Stamp(t)
	}
	if r.Kind == "" {
		r.Kind = KindResume
	}
	return r
}

// StartRow is the receipt of one start. The v0.1 contract names no keys for
// it (COMPATIBILITY.md, "Added keys (extensions)", lists these); these are
// the start verb's facts: the keys every row has, the prompt as a line, the
// run's parameters and its result (the same names as the resume row), and
// the start-only facts (unit, result file, state, which doorman).
type StartRow struct {
	TS            string  `json:"ts"`
	TSMS          int64   `json:"ts_ms"`
	Kind          Kind    `json:"kind"`       // always "start"
	Class         string  `json:"class"`      // completed, started (a systemd start), refused, failed, timeout
	SessionID     *string `json:"session_id"` // the new session's id (the request's, or generated)
	Name          *string `json:"name"`       // the request's name, recorded only here and in the result file
	PID           *int    `json:"pid"`        // the claude child's pid (foreground)
	Line          *string `json:"line"`       // the prompt
	SHA256        *string `json:"sha256"`
	Bytes         *int    `json:"bytes"`
	Reason        *string `json:"reason"`
	Note          *string `json:"note"`
	Hint          *string `json:"hint"`
	ClientVersion *string `json:"client_version"`

	State      *string `json:"state"`       // started, completed, failed, timeout (as in the result file)
	Unit       *string `json:"unit"`        // the systemd unit of a systemd start, e.g. oo-claude-ffde609f
	ResultFile *string `json:"result_file"` // the result JSON (the request's Out, or <state>/start/<uuid>.json)
	Inbox      *string `json:"inbox"`       // the new session's inbox, created before claude starts
	// Doorman is which doorman was meant: injected, user-scope or none.
	Doorman *string `json:"doorman"`
	// DoormanHeartbeat is the doorman's heartbeat read after the run.
	DoormanHeartbeat json.RawMessage `json:"doorman_heartbeat"`
	DoormanDelivered *int            `json:"doorman_delivered"` // lines the doorman delivered during the run
	ParentSession    *string         `json:"parent_session"`    // the lineage parent, when started from a session
	Systemd          bool            `json:"systemd"`           // the start ran as a systemd user unit

	CWD          *string  `json:"cwd"`
	Model        *string  `json:"model"`
	MaxTurns     *int     `json:"max_turns"`
	BudgetUSD    *float64 `json:"budget_usd"`
	Tools        *string  `json:"tools"`
	AllowedTools *string  `json:"allowed_tools"`
	TimeoutS     *float64 `json:"timeout_s"`
	Argv         []string `json:"argv"` // claude's argv, the prompt replaced by <line>
	Run

	ReceiptWriteError *string `json:"receipt_write_error,omitempty"`
}

func (r StartRow) stamped(t time.Time) any {
	if r.TS == "" {
		r.TS, r.TSMS = jsonrow.Stamp(t)
	}
	if r.Kind == "" {
		r.Kind = KindStart
	}
	return r
}
