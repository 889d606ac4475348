package doorman

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// serverName is the MCP serverInfo name.
const serverName = "oo-claude-doorman"

// toolName is the one tool the server offers.
const toolName = "claude_inbox_status"

// latestProtocol is answered to an initialize whose protocolVersion is
// not one of protocols: the newest revision that negotiates with
// initialize.
const latestProtocol = "2025-11-25"

// modernProtocol is the revision without initialize (2026-07-28): a client
// probes with server/discover, and every request carries the protocol
// version, client info and client capabilities in its _meta.
const modernProtocol = "2026-07-28"

// protocols returns the MCP versions the server answers with as asked,
// newest first: server/discover lists them all, initialize negotiates the
// others. (A func, so no caller can change the list.)
func protocols() []string {
	return []string{modernProtocol, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

// The _meta keys of the 2026-07-28 revision.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// JSON-RPC error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
)

// codeUnsupportedProtocolVersion is the 2026-07-28 revision's error for a
// protocol version the server does not speak.
const codeUnsupportedProtocolVersion = -32022

// maxMessage bounds one incoming line.
const maxMessage = 4 << 20

// Server is the doorman's MCP stdio server: newline-delimited JSON-RPC 2.0
// on In and Out.
type Server struct {
	In  io.Reader
	Out io.Writer
	// Log receives log lines (stderr); nil discards them.
	Log io.Writer
	// Version is serverInfo.version.
	Version string
	// Report answers the tool; nil answers an empty report.
	Report func() Report

	mu         sync.Mutex // guards Out: one frame at a time
	negotiated string     // the initialize answer's version; Serve's goroutine only
}

// Report is what claude_inbox_status returns.
type Report struct {
	Inbox        string     `json:"inbox"`
	SessionID    string     `json:"session_id"`
	State        State      `json:"state"`
	Detail       string     `json:"detail,omitempty"`
	Delivered    int        `json:"delivered"`
	Refused      int        `json:"refused"`
	Pending      int        `json:"pending"`
	PendingBytes int64      `json:"pending_bytes"`
	Heartbeat    *Heartbeat `json:"heartbeat"`
	ThreadAlive  bool       `json:"thread_alive"`
	LastError    string     `json:"last_error,omitempty"`
}

// message is any JSON-RPC 2.0 object; which of request, notification and
// response it is depends on the members present.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

var nullID = json.RawMessage("null")

// errNoStdio: a Server without In or Out.
var errNoStdio = errors.New("doorman: mcp server needs In and Out")

// Serve answers requests until In ends (EOF: nil) or ctx ends (ctx.Err()).
// Every request read before EOF is answered before Serve returns. A Server
// without In or Out answers nothing and returns an error. When ctx
// ends first, the goroutine reading In stays blocked until In is closed.
func (s *Server) Serve(ctx context.Context) error {
	if s == nil || s.In == nil || s.Out == nil {
		return errNoStdio
	}
	lines := make(chan []byte)
	done := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(s.In, 64<<10)
		for {
			line, err := readLine(br)
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					done <- ctx.Err()
					return
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				done <- err
				return
			}
		}
	}()
	for {
		select {
		case line := <-lines:
			s.handleLine(line)
		case err := <-done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// readLine reads one line; an over-long line is skipped and reported as a
// line holding only "\x00" (answered as a parse error).
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(out)+len(frag) > maxMessage {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			return []byte{0}, err
		}
		out = append(out, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return out, err
	}
}

func (s *Server) logf(format string, a ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "oo-claude doorman: mcp: "+format+"\n", a...)
	}
}

// handleLine answers one line: a message or a batch of them.
func (s *Server) handleLine(line []byte) {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		s.logf("unparseable message (%d bytes)", len(line))
		s.send(errorResponse(nullID, codeParseError, "parse error"))
		return
	}
	if line[0] != '[' {
		if r, ok := s.handle(line); ok {
			s.send(r)
		}
		return
	}
	var batch []json.RawMessage
	json.Unmarshal(line, &batch) // valid JSON and an array: cannot fail
	switch {
	case len(batch) == 0:
		s.send(errorResponse(nullID, codeInvalidRequest, "invalid request: empty batch"))
		return
	case s.negotiated != "2025-03-26":
		// Batches exist in 2025-03-26 only: 2024-11-05 had none and
		// 2025-06-18 removed them.
		s.send(errorResponse(nullID, codeInvalidRequest, "invalid request: batches are not supported in protocol version "+cmp.Or(s.negotiated, "(none negotiated)")))
		return
	}
	var out []response
	for _, m := range batch {
		if r, ok := s.handle(m); ok {
			out = append(out, r)
		}
	}
	if len(out) > 0 {
		s.send(out)
	}
}

// handle answers one message; ok is false when it gets no answer (a
// notification, a response). A panic inside becomes -32603.
func (s *Server) handle(raw []byte) (r response, ok bool) {
	var m message
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return errorResponse(nullID, codeInvalidRequest, "invalid request"), true
	}
	id, idOK := validID(m.ID)
	if len(m.Method) == 0 && len(m.ID) > 0 && (len(m.Result) > 0 || len(m.Error) > 0) {
		// A response: this server sends no requests, so nothing awaits
		// it, and JSON-RPC answers no response.
		s.logf("ignored a response (%d bytes)", len(raw))
		return response{}, false
	}
	var method string
	if m.JSONRPC != "2.0" || len(m.Method) == 0 || m.Method[0] != '"' || json.Unmarshal(m.Method, &method) != nil || !idOK {
		// Not a request, so not a notification either: it is answered,
		// with a null id when its id is absent or not one MCP allows.
		return errorResponse(id, codeInvalidRequest, "invalid request"), true
	}
	if len(m.ID) == 0 {
		return response{}, false // notifications are never answered
	}
	defer func() {
		if p := recover(); p != nil {
			s.logf("internal error: %v", p)
			r, ok = errorResponse(id, codeInternalError, "internal error"), true
		}
	}()
	result, rerr := s.dispatch(method, m.Params)
	if rerr != nil {
		return response{JSONRPC: "2.0", ID: id, Error: rerr}, true
	}
	return response{JSONRPC: "2.0", ID: id, Result: result}, true
}

// validID returns id as echoed and whether it is one MCP allows: a string
// (valid UTF-8, so that stdout stays valid JSON text) or an integer. An
// absent id is valid (a notification); an invalid one is echoed as null.
func validID(id json.RawMessage) (json.RawMessage, bool) {
	switch {
	case len(id) == 0:
		return nullID, true
	case id[0] == '"':
		var str string
		if !utf8.Valid(id) || json.Unmarshal(id, &str) != nil {
			return nullID, false
		}
		return id, true
	}
	if _, err := strconv.ParseInt(string(id), 10, 64); err != nil || id[0] == '+' {
		return nullID, false
	}
	return id, true
}

func errorResponse(id json.RawMessage, code int, msg string) response {
	return response{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: code, Message: msg}}
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      serverInfo     `json:"serverInfo"`
}

// discoverResult answers server/discover (2026-07-28).
type discoverResult struct {
	ResultType        string         `json:"resultType"`
	Meta              map[string]any `json:"_meta"`
	SupportedVersions []string       `json:"supportedVersions"`
	Capabilities      map[string]any `json:"capabilities"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations json.RawMessage `json:"annotations"`
}

type toolsResult struct {
	ResultType string         `json:"resultType,omitempty"`
	Meta       map[string]any `json:"_meta,omitempty"`
	Tools      []tool         `json:"tools"`
}

type toolResult struct {
	ResultType        string         `json:"resultType,omitempty"`
	Meta              map[string]any `json:"_meta,omitempty"`
	Content           []textContent  `json:"content"`
	StructuredContent any            `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

var statusTool = tool{
	Name:        toolName,
	Title:       "Claude inbox status",
	Description: "Read-only: this session's inbox file, how many lines its doorman delivered, refused and has pending, the doorman's heartbeat and whether its follow loop runs.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
	Annotations: json.RawMessage(`{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`),
}

// modern reports whether params carry the 2026-07-28 revision's _meta:
// version is the protocol version asked for; rerr is set when the request
// is modern but cannot be served.
func modern(params json.RawMessage) (version string, rerr *rpcError) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta == nil {
		return "", nil
	}
	if json.Unmarshal(p.Meta[metaProtocolVersion], &version) != nil || version < modernProtocol {
		return "", nil // an older client's _meta (progress tokens and the like)
	}
	if !slices.Contains(protocols(), version) {
		data, _ := json.Marshal(map[string]any{"supported": protocols(), "requested": version})
		return version, &rpcError{Code: codeUnsupportedProtocolVersion, Message: "unsupported protocol version", Data: data}
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(p.Meta[metaClientCapabilities], &caps) != nil || caps == nil {
		return version, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("missing or invalid _meta field %q", metaClientCapabilities)}
	}
	return version, nil
}

func (s *Server) dispatch(method string, params json.RawMessage) (any, *rpcError) {
	version, rerr := modern(params)
	if rerr != nil {
		return nil, rerr
	}
	var meta map[string]any
	resultType := ""
	if version != "" {
		meta = map[string]any{metaServerInfo: serverInfo{Name: serverName, Version: s.Version}}
		resultType = "complete"
	}
	switch method {
	case "initialize", "ping":
		if version != "" {
			return nil, &rpcError{Code: codeMethodNotFound, Message: fmt.Sprintf("method %q is not part of protocol version %s", method, version)}
		}
		if method == "ping" {
			return struct{}{}, nil
		}
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(params, &p)
		v := latestProtocol
		if p.ProtocolVersion < modernProtocol && slices.Contains(protocols(), p.ProtocolVersion) {
			v = p.ProtocolVersion
		}
		s.negotiated = v
		return initializeResult{
			ProtocolVersion: v,
			Capabilities:    map[string]any{"tools": struct{}{}},
			ServerInfo:      serverInfo{Name: serverName, Version: s.Version},
		}, nil
	case "server/discover":
		if version == "" {
			// Without the revision's _meta the probe is an older
			// client's: it falls back to initialize on this answer.
			return nil, &rpcError{Code: codeMethodNotFound, Message: "method not found: server/discover"}
		}
		return discoverResult{
			ResultType: resultType, Meta: meta,
			SupportedVersions: protocols(),
			Capabilities:      map[string]any{"tools": struct{}{}},
		}, nil
	case "tools/list":
		return toolsResult{ResultType: resultType, Meta: meta, Tools: []tool{statusTool}}, nil
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(params, &p); err != nil || p.Name != toolName {
			return nil, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
		}
		if msg := checkArguments(p.Arguments); msg != "" {
			// A tool input validation error is a tool execution error
			// (the 2025-11-25 revision): the model reads it and can try
			// again, so it is a result with isError, not a JSON-RPC error.
			return toolResult{ResultType: resultType, Meta: meta, Content: []textContent{{Type: "text", Text: msg}}, IsError: true}, nil
		}
		var r Report
		if s.Report != nil {
			r = s.Report()
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, &rpcError{Code: codeInternalError, Message: "internal error"}
		}
		return toolResult{ResultType: resultType, Meta: meta, Content: []textContent{{Type: "text", Text: string(b)}}, StructuredContent: r}, nil
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "method not found: " + method}
}

// checkArguments validates tools/call arguments against statusTool's
// inputSchema (an object with no properties, none additional): absent, null
// and {} pass. It returns why they fail, or "".
func checkArguments(args json.RawMessage) string {
	if len(args) == 0 || string(args) == "null" {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return `invalid arguments: want an object, as the inputSchema says`
	}
	if len(obj) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(obj))
	b, _ := json.Marshal(keys)
	return "invalid arguments: the inputSchema allows no properties, got " + string(b)
}

// send writes one frame (a response or a batch of them); stdout carries
// nothing else.
func (s *Server) send(frame any) {
	b, err := json.Marshal(frame)
	if err != nil {
		s.logf("cannot encode a response: %v", err)
		id := nullID
		if r, ok := frame.(response); ok {
			id = r.ID
		}
		b, _ = json.Marshal(errorResponse(id, codeInternalError, "internal error"))
	}
	b = append(b, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.Out.Write(b); err != nil {
		s.logf("write: %v", err)
	}
}

// ServeMCP is a doorman as the session's MCP server (what Claude Code
// starts): it runs d's follow loop and srv (the MCP stdio server)
// together, until srv's input ends (Claude Code closes a server's stdin
// to stop it; a read error of In ends it the same way) or ctx ends (the SIGINT Claude Code sends). Both are stopped before
// it returns, the loop's stopped heartbeat written. srv's Report defaults
// to d.Report, its Log to d's log and its Version to d's. An identity
// failure is reported by the tool (d.Report), not returned: a session
// whose doorman may not deliver still gets its MCP answers. The error is
// srv's, nil on EOF or ctx's end; a nil srv, or one without In or Out, is
// an error and runs nothing, and so is a Doorman not made by [New].
func (d *Doorman) ServeMCP(ctx context.Context, srv *Server) error {
	if d == nil || d.o.Host == nil {
		return errNotNew
	}
	if srv == nil || srv.In == nil || srv.Out == nil {
		return errNoStdio
	}
	if srv.Report == nil {
		srv.Report = d.Report
	}
	if srv.Log == nil {
		srv.Log = d.log
	}
	if srv.Version == "" {
		srv.Version = d.o.Version
	}
	loopCtx, stop := context.WithCancel(ctx)
	defer stop()
	loopDone := make(chan error, 1)
	go func() { loopDone <- d.Run(loopCtx) }()
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Serve(ctx) }()
	var err error
	select {
	case err = <-srvDone: // EOF: every request before it is answered
	case <-ctx.Done():
	}
	stop()
	<-loopDone
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}
