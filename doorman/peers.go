package doorman

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// The station tools: what a session's model may do with its peers through
// its own doorman (ServeMCP offers them; a bare [Server] does not).
const (
	toolSessions = "station_sessions"
	toolSend     = "station_send"
	toolRead     = "station_read"
)

// Bounds of the station tools.
const (
	// modelSendsPerMinute is the budget of station_send calls one
	// session's model gets in any minute, counted by its doorman process;
	// a call past it is refused (reason model-send-budget) with the
	// seconds until the oldest of them leaves the minute. The sender's
	// throttles (Sender.MinInterval per target) apply besides.
	modelSendsPerMinute = 10
	// maxToolWait bounds station_send's seen and reply waits (longer asks
	// are clamped to it).
	maxToolWait = 60 * time.Second
	// maxReadExchanges bounds station_read's n (larger asks are clamped).
	maxReadExchanges = 20
	// maxReadText is the most characters station_read keeps of each text
	// (prompt, assistant text, peer line); a cut text ends with "…".
	maxReadText = 2000
	// maxReadItems is the most tool calls and peer lines kept per exchange.
	maxReadItems = 20
	// maxListed is the most sessions station_sessions lists.
	maxListed = 100
)

// peerTools is what the station tools need: the doorman's own session,
// the station, the knobs, the clock and the model's send budget.
type peerTools struct {
	self    func() (sid string, state inboxv1.State) // the doorman's session; "" while unknown
	st      *station.Station
	cfg     station.Config
	now     func() time.Time
	version string

	mu   sync.Mutex
	sent []time.Time // the model's sends in the last minute, oldest first
}

// peerTools returns d's station tools.
func (d *Doorman) peerTools() *peerTools {
	return &peerTools{
		self: func() (string, inboxv1.State) {
			s := d.Status()
			return s.SessionID, s.State
		},
		st: d.o.Host.Station, cfg: d.o.Config, now: d.o.Host.now, version: d.o.Version,
	}
}

// errNoSelf: the doorman has not established its session.
var errNoSelf = errors.New("the station tools need the doorman to know its session")

// me is the doorman's session id, when it knows it: following or standby
// (another doorman of the same session delivers).
func (p *peerTools) me() (string, error) {
	sid, state := p.self()
	if sid == "" || (state != inboxv1.StateFollowing && state != inboxv1.StateStandby) {
		return "", fmt.Errorf("%w: the doorman is %s", errNoSelf, state)
	}
	return sid, nil
}

// fromName is the session's sender name: its registry name, else its
// short id.
func (p *peerTools) fromName(sid string) string {
	if s, ok, _ := p.st.LiveBySessionID(sid); ok {
		if n := inbox.SanitizeFrom(s.Name); n != "" {
			return n
		}
	}
	return shortID(sid)
}

func shortID(sid string) string {
	if len(sid) > 8 {
		return sid[:8]
	}
	return sid
}

// spend takes one send from the budget, or says how long until one is free.
func (p *peerTools) spend() (retry time.Duration, ok bool) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	keep := p.sent[:0]
	for _, t := range p.sent {
		if now.Sub(t) < time.Minute {
			keep = append(keep, t)
		}
	}
	p.sent = keep
	if len(p.sent) >= modelSendsPerMinute {
		return time.Minute - now.Sub(p.sent[0]), false
	}
	p.sent = append(p.sent, now)
	return 0, true
}

// toolError is a tool result the model reads as an error.
func toolError(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// toolResult is v as the tool's text and structured content.
func toolResult(v any) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return toolError(map[string]string{"error": "internal error"})
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

// refusal is a station tool's own refusal, in the verdict's words.
type refusal struct {
	Class       string   `json:"class"`
	Delivered   bool     `json:"delivered"`
	Target      string   `json:"target,omitempty"`
	SessionID   string   `json:"session_id,omitempty"`
	Reason      string   `json:"reason"`
	Note        string   `json:"note"`
	RetryAfterS *float64 `json:"retry_after_s,omitempty"`
}

// Input schemas: no properties but those named (the SDK refuses any other,
// "from" among them, as a tool error the model reads).
var (
	sessionsInput = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	sendInput     = json.RawMessage(`{"type":"object","properties":{` +
		`"target":{"type":"string","description":"the session: its full id, name, unique name fragment (4+ characters), id prefix (8+) or pid"},` +
		`"line":{"type":"string","description":"the message, one line; it is sent with this session's name as its sender"},` +
		`"priority":{"type":"string","enum":["now","next","later"],"description":"when the receiver shows it: now (aborts its running tool), next (default), later (a turn of its own)"},` +
		`"seen_s":{"type":"number","minimum":0,"description":"wait up to this many seconds (at most 60) for the receiver's transcript to show the line"},` +
		`"reply_s":{"type":"number","minimum":0,"description":"wait up to this many seconds (at most 60) for the receiver's answer"}` +
		`},"required":["target","line"],"additionalProperties":false}`)
	readInput = json.RawMessage(`{"type":"object","properties":{` +
		`"target":{"type":"string","description":"the session: its full id, name, unique name fragment (4+ characters), id prefix (8+) or pid"},` +
		`"n":{"type":"integer","minimum":1,"description":"how many of its last exchanges (default 3, at most 20)"}` +
		`},"required":["target"],"additionalProperties":false}`)
)

type sendArgs struct {
	Target   string  `json:"target"`
	Line     string  `json:"line"`
	Priority string  `json:"priority"`
	SeenS    float64 `json:"seen_s"`
	ReplyS   float64 `json:"reply_s"`
}

type readArgs struct {
	Target string `json:"target"`
	N      int    `json:"n"`
}

// listedSession is one row of station_sessions.
type listedSession struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	CWD     string `json:"cwd"`
	Status  string `json:"status"`
	Doorman string `json:"doorman"` // its state when its heartbeat is fresh, else "none" or "stale"
	Pending int64  `json:"pending"`
	Self    bool   `json:"self,omitempty"`
}

// addTools adds the station tools to srv.
func (p *peerTools) addTools(srv *mcp.Server) {
	f, t := false, true
	mcp.AddTool(srv, &mcp.Tool{
		Name:        toolSessions,
		Title:       "Station sessions",
		Description: "Read-only: the Claude Code sessions running on this machine (id, name, cwd, status, their doorman's state, lines pending in their inbox); self marks this session.",
		InputSchema: sessionsInput,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &f, IdempotentHint: true, OpenWorldHint: &f},
	}, func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
		return p.guard(p.sessions), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:  toolSend,
		Title: "Send a line to another session",
		Description: fmt.Sprintf("Send one line to another session's inbox, signed with this session's name, and return the verdict oo-claude send --json gives "+
			"(class delivered-steer or delivered-start with confirm \"transcript\" when the receiver queued it; queued-*, timeout, dropped with retry_after_s, refused with a reason). "+
			"seen_s and reply_s wait (at most 60 s) for the receiver to see and answer it. At most %d sends a minute.", modelSendsPerMinute),
		InputSchema: sendInput,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &f, OpenWorldHint: &t},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a sendArgs) (*mcp.CallToolResult, any, error) {
		return p.guard(func() *mcp.CallToolResult { return p.send(ctx, a) }), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:        toolRead,
		Title:       "Read a session's last exchanges",
		Description: fmt.Sprintf("Read-only: another session's last n exchanges (default 3, at most %d): each prompt, the assistant's text, its tool calls and the peer lines it took; texts are cut to %d characters.", maxReadExchanges, maxReadText),
		InputSchema: readInput,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &f, IdempotentHint: true, OpenWorldHint: &f},
	}, func(_ context.Context, _ *mcp.CallToolRequest, a readArgs) (*mcp.CallToolResult, any, error) {
		return p.guard(func() *mcp.CallToolResult { return p.read(a) }), nil, nil
	})
}

// guard runs a tool: a panic is a tool error, never the doorman's end.
func (p *peerTools) guard(tool func() *mcp.CallToolResult) (res *mcp.CallToolResult) {
	defer func() {
		if r := recover(); r != nil {
			res = toolError(map[string]string{"error": "internal error"})
		}
	}()
	return tool()
}

func (p *peerTools) sessions() *mcp.CallToolResult {
	me, err := p.me()
	if err != nil {
		return toolError(map[string]string{"error": err.Error()})
	}
	live, err := p.st.Live()
	if err != nil {
		return toolError(map[string]string{"error": "reading the registry: " + err.Error()})
	}
	out := struct {
		Sessions []listedSession `json:"sessions"`
		More     int             `json:"more"`
	}{Sessions: []listedSession{}}
	now := p.now()
	alive := func(pid int) bool { return p.st.Proc.Alive(pid, "") }
	for _, s := range live {
		if len(out.Sessions) == maxListed {
			out.More++
			continue
		}
		ls := listedSession{ID: s.SessionID, Name: s.Name, CWD: s.CWD, Status: s.Status, Doorman: "none", Self: s.SessionID == me}
		if in, err := inbox.ReadState(p.cfg.InboxDir, s.SessionID, now, alive); err == nil {
			ls.Pending = in.Pending
			if in.Doorman != nil {
				ls.Doorman = "stale"
				if in.Doorman.Fresh {
					ls.Doorman = string(in.Doorman.State)
				}
			}
		}
		out.Sessions = append(out.Sessions, ls)
	}
	return toolResult(out)
}

func (p *peerTools) send(ctx context.Context, a sendArgs) *mcp.CallToolResult {
	me, err := p.me()
	if err != nil {
		return toolError(map[string]string{"error": err.Error()})
	}
	refuse := func(sid, reason, note string, retry time.Duration) *mcp.CallToolResult {
		r := refusal{Class: string(claudeinbox.Refused), Target: a.Target, SessionID: sid, Reason: reason, Note: note}
		if retry > 0 {
			s := math.Ceil(retry.Seconds())
			r.RetryAfterS = &s
		}
		return toolError(r)
	}
	if strings.TrimSpace(a.Line) == "" {
		// Checked here: a structured line without text is no structured
		// line, and would be sent as its JSON.
		return refuse("", string(inboxv1.ReasonEmpty), "empty line: there is nothing to send", 0)
	}
	if _, tagged := inbox.SenderTag(a.Line); tagged {
		return refuse("", string(inboxv1.ReasonTaggedLine), "the line starts with a sender tag; the sender is this session and is set by its doorman", 0)
	}
	if t, err := p.st.Resolve(a.Target); err == nil && t.SessionID == me {
		return refuse(t.SessionID, string(inboxv1.ReasonSelfSend), "a line to this session itself is refused", 0)
	}
	if retry, ok := p.spend(); !ok {
		return refuse("", string(inboxv1.ReasonModelSendBudget), fmt.Sprintf("this session's model may send %d lines a minute; retry in %.0f s", modelSendsPerMinute, math.Ceil(retry.Seconds())), retry)
	}
	from := p.fromName(me)
	b, _ := json.Marshal(inbox.Structured{V: inboxv1.Version, From: from, Line: a.Line, Origin: me})
	s := claudeinbox.NewSender(p.cfg)
	s.Station, s.Now, s.ClientVersion = p.st, p.now, p.version
	w := transcript.Witness{ProjectsDir: p.cfg.ProjectsDir}
	if d := clampWait(a.SeenS); d > 0 {
		s.SeenWait, s.Witness = d, w
	}
	if d := clampWait(a.ReplyS); d > 0 {
		s.ReplyWait, s.Witness = d, w
	}
	v, _ := s.Send(ctx, claudeinbox.Request{Target: a.Target, Line: string(b), From: from, Priority: a.Priority})
	res := toolResult(v.Row())
	res.IsError = v.Class == claudeinbox.Refused
	return res
}

// clampWait is s seconds, within [0, maxToolWait].
func clampWait(s float64) time.Duration {
	if !(s > 0) { // also NaN
		return 0
	}
	if s >= maxToolWait.Seconds() {
		return maxToolWait
	}
	return time.Duration(s * float64(time.Second))
}

func (p *peerTools) read(a readArgs) *mcp.CallToolResult {
	if _, err := p.me(); err != nil {
		return toolError(map[string]string{"error": err.Error()})
	}
	n := min(max(a.N, 0), maxReadExchanges)
	r, err := transcript.ReadSession(p.st, p.cfg.ProjectsDir, a.Target, n)
	if err != nil {
		return toolError(map[string]string{"error": err.Error()})
	}
	for i := range r.Exchanges {
		e := &r.Exchanges[i]
		e.Prompt.Text = cut(e.Prompt.Text)
		if e.Prompt.Peer != nil {
			pl := *e.Prompt.Peer
			pl.Text = cut(pl.Text)
			e.Prompt.Peer = &pl
		}
		e.Assistant = cut(e.Assistant)
		e.Tools = e.Tools[:min(len(e.Tools), maxReadItems)]
		e.Peers = e.Peers[:min(len(e.Peers), maxReadItems)]
		for j := range e.Peers {
			e.Peers[j].Text = cut(e.Peers[j].Text)
		}
	}
	return toolResult(r)
}

// cut keeps maxReadText characters of s.
func cut(s string) string {
	if len(s) <= maxReadText {
		return s
	}
	r := []rune(s)
	if len(r) <= maxReadText {
		return s
	}
	return strings.TrimSpace(string(r[:maxReadText])) + "…"
}
