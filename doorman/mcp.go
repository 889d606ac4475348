package doorman

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/oo-family/oo-claude/claudeinbox"
)

// ServerName is the MCP serverInfo name.
const ServerName = "oo-claude-doorman"

// ToolName is the one tool the server offers.
const ToolName = "claude_inbox_status"

// LatestProtocol is answered to a client whose protocolVersion is not one
// of [Protocols].
const LatestProtocol = "2025-11-25"

// Protocols are the MCP versions the server answers with as asked.
var Protocols = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// JSON-RPC error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

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

	mu sync.Mutex // guards Out: one frame at a time
}

// Report is what claude_inbox_status returns.
type Report struct {
	Inbox        string                 `json:"inbox"`
	SessionID    string                 `json:"session_id"`
	State        string                 `json:"state"`
	Detail       string                 `json:"detail,omitempty"`
	Delivered    int                    `json:"delivered"`
	Refused      int                    `json:"refused"`
	Pending      int                    `json:"pending"`
	PendingBytes int64                  `json:"pending_bytes"`
	Heartbeat    *claudeinbox.Heartbeat `json:"heartbeat"`
	ThreadAlive  bool                   `json:"thread_alive"`
	LastError    string                 `json:"last_error,omitempty"`
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Serve answers requests until In ends (EOF: nil) or ctx ends (ctx.Err()).
// Every request read before EOF is answered before Serve returns. When ctx
// ends first, the goroutine reading In stays blocked until In is closed.
func (s *Server) Serve(ctx context.Context) error {
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
			s.handle(line)
		case err := <-done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

var errTooLong = errors.New("message longer than 4 MiB")

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

// handle answers one message; a panic inside becomes -32603.
func (s *Server) handle(line []byte) {
	var id json.RawMessage
	defer func() {
		if r := recover(); r != nil {
			s.logf("internal error: %v", r)
			if id != nil {
				s.send(response{JSONRPC: "2.0", ID: id, Error: &rpcError{CodeInternalError, "internal error"}})
			}
		}
	}()
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		s.logf("unparseable message (%d bytes)", len(line))
		s.send(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{CodeParseError, "parse error"}})
		return
	}
	id = req.ID
	isNote := len(req.ID) == 0
	if req.JSONRPC != "2.0" || req.Method == nil {
		// Not a request, so not a notification either: it is answered,
		// with a null id when it carries none (JSON-RPC 2.0, 5).
		if isNote {
			id = json.RawMessage("null")
		}
		s.send(response{JSONRPC: "2.0", ID: id, Error: &rpcError{CodeInvalidRequest, "invalid request"}})
		return
	}
	if isNote {
		return // notifications are never answered
	}
	result, rerr := s.dispatch(*req.Method, req.Params)
	if rerr != nil {
		s.send(response{JSONRPC: "2.0", ID: id, Error: rerr})
		return
	}
	s.send(response{JSONRPC: "2.0", ID: id, Result: result})
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      serverInfo     `json:"serverInfo"`
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

type toolResult struct {
	Content           []textContent `json:"content"`
	StructuredContent any           `json:"structuredContent"`
	IsError           bool          `json:"isError"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

var statusTool = tool{
	Name:        ToolName,
	Title:       "Claude inbox status",
	Description: "Read-only: this session's inbox file, how many lines its doorman delivered, refused and has pending, the doorman's heartbeat and whether its follow loop runs.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
	Annotations: json.RawMessage(`{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`),
}

func (s *Server) dispatch(method string, params json.RawMessage) (any, *rpcError) {
	switch method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(params, &p)
		v := LatestProtocol
		for _, x := range Protocols {
			if p.ProtocolVersion == x {
				v = x
			}
		}
		return initializeResult{
			ProtocolVersion: v,
			Capabilities:    map[string]any{"tools": struct{}{}},
			ServerInfo:      serverInfo{Name: ServerName, Version: s.Version},
		}, nil
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		return map[string][]tool{"tools": {statusTool}}, nil
	case "tools/call":
		var p struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(params, &p); err != nil || p.Name != ToolName {
			return nil, &rpcError{CodeInvalidParams, fmt.Sprintf("unknown tool %q", p.Name)}
		}
		var r Report
		if s.Report != nil {
			r = s.Report()
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, &rpcError{CodeInternalError, "internal error"}
		}
		return toolResult{Content: []textContent{{Type: "text", Text: string(b)}}, StructuredContent: r}, nil
	}
	return nil, &rpcError{CodeMethodNotFound, "method not found: " + method}
}

// send writes one frame; stdout carries nothing else.
func (s *Server) send(r response) {
	b, err := json.Marshal(r)
	if err != nil {
		s.logf("cannot encode a response: %v", err)
		b, _ = json.Marshal(response{JSONRPC: "2.0", ID: r.ID, Error: &rpcError{CodeInternalError, "internal error"}})
	}
	b = append(b, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.Out.Write(b); err != nil {
		s.logf("write: %v", err)
	}
}

// ServeMCP is `oo-claude doorman --mcp`: it runs d's follow loop and srv
// (the MCP stdio server, whose Report is d.Report when nil) together, until
// srv's input ends (Claude Code closes a server's stdin to stop it) or ctx
// ends (the SIGINT Claude Code sends). Both are stopped before it returns,
// the loop's stopped heartbeat written. An identity failure is reported by
// the tool (d.Report), not returned: a session whose doorman may not deliver
// still gets its MCP answers. The error is srv's, nil on EOF or ctx's end.
func (d *Doorman) ServeMCP(ctx context.Context, srv *Server) error {
	if srv.Report == nil {
		srv.Report = d.Report
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
