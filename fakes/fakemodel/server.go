package fakemodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/fakes/internal/fakewait"
)

// ErrClosed is returned by [Server.WaitRequest] when the server closes
// before a matching request arrives.
var ErrClosed = errors.New("fakemodel: server closed")

// maxBody bounds a request body; Claude Code's requests are a few hundred KB
// at most.
const maxBody = 64 << 20

// Options configure a [Server], set before it starts (as the fields of an
// httptest.Server are). The zero value answers every request Text("ok").
type Options struct {
	// Handler is asked for every request that is not a side request. Its
	// non-zero Reply is sent; the zero Reply passes the request on to the
	// queue. It runs on the request's goroutine and may block (for
	// instance until the test lets the model go on); Close does not
	// interrupt it.
	Handler func(*Request) Reply
	// Replies are queued for the conversation, taken one per non-side
	// request in order ([Server.Enqueue] adds more).
	Replies []Reply
	// DefaultReply is the reply for a conversation request when neither
	// the handler nor the queue has one; the zero Reply means Text("ok").
	DefaultReply Reply
	// SideFilter replaces [IsSideRequest] as the test of whether a request
	// is a side request (answered by the side reply, never by the script).
	// A filter that always returns false sends everything to the script;
	// nil keeps IsSideRequest.
	SideFilter func(*Request) bool
	// SideReply is the reply to side requests; nil means Text("ok").
	SideReply func(*Request) Reply
	// Now is the clock stamped on requests and calls; nil means time.Now.
	Now func() time.Time
	// Logf, when set, logs one line per HTTP request (method, path, and
	// for messages the request summary and the reply kind), e.g. with
	// testing.T.Logf. Close waits for handlers, so a t.Logf is safe while
	// the test runs Close before it ends.
	Logf func(format string, args ...any)
}

type config struct {
	handler    func(*Request) Reply
	replies    []Reply
	defReply   Reply
	sideFilter func(*Request) bool
	sideReply  func(*Request) Reply
	now        func() time.Time
	logf       func(format string, args ...any)
}

// Server is a running fake Messages API server. Its methods are safe for
// concurrent use. Make one with [NewServer]: a Server not made by it (nil,
// or the zero value) is a closed one with nothing recorded (Close does
// nothing, WaitRequest returns [ErrClosed]).
type Server struct {
	// URL is the base URL, "http://127.0.0.1:<port>", with no trailing
	// slash: the value for ANTHROPIC_BASE_URL.
	URL string

	cfg  config
	srv  *http.Server
	done chan struct{} // closed by Close

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup // handlers and the serve loop
	queue    []Reply
	requests []*Request
	calls    []Call
	changed  fakewait.Signal // fired when a request is recorded
	toolSeq  int
}

// NewServer starts a fake Messages API server on 127.0.0.1 with a
// kernel-chosen port. It panics if it cannot listen, like
// httptest.NewServer. The caller must Close it.
func NewServer(o Options) *Server {
	cfg := config{handler: o.Handler, replies: o.Replies, defReply: o.DefaultReply, sideFilter: o.SideFilter,
		sideReply: o.SideReply, now: o.Now, logf: o.Logf}
	if cfg.defReply.IsZero() {
		cfg.defReply = Text("ok")
	}
	if cfg.sideReply == nil {
		cfg.sideReply = func(*Request) Reply { return Text("ok") }
	}
	if cfg.sideFilter == nil {
		cfg.sideFilter = IsSideRequest
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("fakemodel: listen: %v", err))
	}
	s := &Server{
		URL:   "http://" + ln.Addr().String(),
		cfg:   cfg,
		done:  make(chan struct{}),
		queue: append([]Reply(nil), cfg.replies...),
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 30 * time.Second}
	s.inflight.Add(1)
	go func() {
		defer s.inflight.Done()
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return s
}

// Close stops the server: delays are cut short, connections are closed, and
// Close returns once every handler has returned. It is safe to call more
// than once.
func (s *Server) Close() {
	if s.srv == nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	_ = s.srv.Close()
	s.inflight.Wait()
}

// Enqueue appends replies to the conversation queue.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// Pending returns how many queued replies are not yet taken.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every recorded POST /v1/messages request in arrival
// order, side requests included.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
	}
	return out
}

// Len returns how many POST /v1/messages requests were recorded.
func (s *Server) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Calls returns every HTTP request that reached the server, of any method
// and path, in arrival order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// WaitRequest returns the first recorded request, past or future, for which
// match returns true (nil match matches any). It blocks until one arrives,
// ctx ends (the error wraps ctx.Err()) or the server closes ([ErrClosed]).
// To wait for a request after a known point, match on [Request.Seq].
// The returned request must not be modified.
func (s *Server) WaitRequest(ctx context.Context, match func(*Request) bool) (*Request, error) {
	if s.srv == nil {
		return nil, ErrClosed
	}
	next := 0
	var found *Request
	err := fakewait.Until(ctx, &s.changed, 0, s.done, ErrClosed, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for ; next < len(s.requests); next++ {
			if r := s.requests[next]; match == nil || match(r) {
				found = r
				return true
			}
		}
		return false
	})
	if err != nil && err != ErrClosed {
		return nil, fmt.Errorf("fakemodel: wait for request (%d recorded): %w", s.Len(), err)
	}
	return found, err
}

// serveHTTP records the call and dispatches it.
func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	s.inflight.Add(1)
	s.calls = append(s.calls, Call{Time: s.cfg.now(), Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery})
	s.mu.Unlock()
	defer s.inflight.Done()

	s.logf("%s %s", hr.Method, hr.URL.RequestURI())
	switch {
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages":
		s.serveMessages(w, hr)
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages/count_tokens":
		body, _ := io.ReadAll(io.LimitReader(hr.Body, maxBody))
		writeJSON(w, http.StatusOK, map[string]int{"input_tokens": estimateTokens(len(body))})
	default:
		_, _ = io.Copy(io.Discard, io.LimitReader(hr.Body, maxBody))
		writeJSON(w, http.StatusOK, struct{}{})
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.logf != nil {
		s.cfg.logf("fakemodel: "+format, args...)
	}
}

// serveMessages records a messages request, picks its reply and sends it.
func (s *Server) serveMessages(w http.ResponseWriter, hr *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(hr.Body, maxBody))
	if err != nil {
		return // the client went away
	}
	req := &Request{
		Time:   s.cfg.now(),
		Path:   hr.URL.Path,
		Query:  hr.URL.RawQuery,
		Header: hr.Header.Clone(),
		Raw:    raw,
	}
	req.parseBody()
	if req.ParseErr == nil {
		req.Side = s.cfg.sideFilter(req)
	}
	s.record(req)

	var reply Reply
	kind := "default"
	switch {
	case req.ParseErr != nil:
		reply, kind = Error(http.StatusBadRequest, req.ParseErr.Error()), "parse error"
	case req.Side:
		reply, kind = s.cfg.sideReply(req), "side"
	default:
		reply, kind = s.conversationReply(req)
	}
	s.logf("%s -> %s reply %s", req, kind, reply.summary())

	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-hr.Context().Done():
			t.Stop()
			return
		case <-s.done:
			t.Stop()
			return
		}
	}
	if reply.Status >= 400 {
		writeError(w, reply.Status, reply.Text)
		return
	}
	msg := s.message(req, reply)
	if req.Stream {
		s.stream(w, hr, msg)
		return
	}
	writeJSON(w, http.StatusOK, msg)
}

// record appends req and wakes waiters.
func (s *Server) record(req *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Seq = len(s.requests) + 1
	s.requests = append(s.requests, req)
	s.changed.Notify()
}

// conversationReply asks the handler, then the queue, then the default.
func (s *Server) conversationReply(req *Request) (Reply, string) {
	if s.cfg.handler != nil {
		if r := s.cfg.handler(req); !r.IsZero() {
			return r, "handler"
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		return r, "queued"
	}
	return s.cfg.defReply, "default"
}

func (r Reply) summary() string {
	switch {
	case r.Status >= 400:
		return fmt.Sprintf("error %d", r.Status)
	case r.ToolUse != nil:
		return "tool_use " + r.ToolUse.Name
	default:
		return fmt.Sprintf("text %q", truncate(r.Text, 60))
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// wireMessage is a Messages API response message.
type wireMessage struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"`
	Role         string      `json:"role"`
	Model        string      `json:"model"`
	Content      []wireBlock `json:"content"`
	StopReason   *string     `json:"stop_reason"`
	StopSequence *string     `json:"stop_sequence"`
	Usage        wireUsage   `json:"usage"`
}

type wireBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// message builds the response message for reply.
func (s *Server) message(req *Request, reply Reply) wireMessage {
	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	msg := wireMessage{
		ID:    fmt.Sprintf("msg_fake_%d", req.Seq),
		Type:  "message",
		Role:  "assistant",
		Model: model,
		Usage: wireUsage{InputTokens: estimateTokens(len(req.Raw))},
	}
	if reply.Text != "" || reply.ToolUse == nil {
		text := reply.Text
		msg.Content = append(msg.Content, wireBlock{Type: "text", Text: &text})
	}
	stop := reply.StopReason
	if tu := reply.ToolUse; tu != nil {
		id := tu.ID
		if id == "" {
			s.mu.Lock()
			s.toolSeq++
			id = fmt.Sprintf("toolu_fake_%d_%d", req.Seq, s.toolSeq)
			s.mu.Unlock()
		}
		input, err := json.Marshal(tu.Input)
		if err != nil || tu.Input == nil {
			input = []byte("{}")
		}
		msg.Content = append(msg.Content, wireBlock{Type: "tool_use", ID: id, Name: tu.Name, Input: input})
		if stop == "" {
			stop = "tool_use"
		}
	}
	if stop == "" {
		stop = "end_turn"
	}
	msg.StopReason = &stop
	msg.Usage.OutputTokens = estimateTokens(len(reply.Text)) + 1
	return msg
}

// stream sends msg as the server-sent events of a streamed response.
func (s *Server) stream(w http.ResponseWriter, hr *http.Request, msg wireMessage) {
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Request-Id", "req_"+msg.ID)
	w.WriteHeader(http.StatusOK)

	event := func(name string, data any) bool {
		b, err := json.Marshal(data)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return hr.Context().Err() == nil
	}

	content, stop := msg.Content, msg.StopReason
	start := msg
	start.Content, start.StopReason = []wireBlock{}, nil
	start.Usage.OutputTokens = 1
	if !event("message_start", map[string]any{"type": "message_start", "message": start}) {
		return
	}
	event("ping", map[string]any{"type": "ping"})
	for i, b := range content {
		var first wireBlock
		var deltas []map[string]any
		switch b.Type {
		case "tool_use":
			first = wireBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage("{}")}
			for _, part := range chunks(string(b.Input), 3) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": part})
			}
		default:
			empty := ""
			first = wireBlock{Type: "text", Text: &empty}
			for _, part := range chunks(*b.Text, 3) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": part})
			}
		}
		if !event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": first}) {
			return
		}
		for _, d := range deltas {
			if !event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d}) {
				return
			}
		}
		if !event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}) {
			return
		}
	}
	if !event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": msg.Usage.OutputTokens},
	}) {
		return
	}
	event("message_stop", map[string]any{"type": "message_stop"})
}

// chunks splits s into at most n pieces on rune boundaries; "" gives none.
func chunks(s string, n int) []string {
	if s == "" {
		return nil
	}
	size := (len(s) + n - 1) / n
	var out []string
	for len(s) > 0 {
		k := min(size, len(s))
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// estimateTokens guesses a token count from a byte count, at least 1.
func estimateTokens(n int) int { return max(1, n/4) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError sends an Anthropic-style error body.
func writeError(w http.ResponseWriter, status int, message string) {
	if strings.TrimSpace(message) == "" {
		message = http.StatusText(status)
		if message == "" {
			message = "error"
		}
	}
	writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]string{"type": errorType(status), "message": message},
	})
}
