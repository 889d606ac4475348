package doorman

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oo-family/oo-claude/inboxv1"
)

// serverName is the MCP serverInfo name.
const serverName = "oo-claude-doorman"

// toolName is the one tool the server offers.
const toolName = "claude_inbox_status"

// modernProtocol is the revision without initialize (2026-07-28): a client
// probes with server/discover, and every request carries the protocol
// version, client info and client capabilities in its _meta.
const modernProtocol = "2026-07-28"

// metaProtocolVersion is the _meta key of the 2026-07-28 revision that
// names a request's protocol version.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// JSON-RPC error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
	codeInternalError  = -32603
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

	// peers, set by ServeMCP, adds the station tools.
	peers *peerTools
}

// Report is what claude_inbox_status returns.
type Report struct {
	Inbox        string             `json:"inbox"`
	SessionID    string             `json:"session_id"`
	State        inboxv1.State      `json:"state"`
	Detail       string             `json:"detail,omitempty"`
	Delivered    int                `json:"delivered"`
	Refused      int                `json:"refused"`
	Pending      int                `json:"pending"`
	PendingBytes int64              `json:"pending_bytes"`
	Heartbeat    *inboxv1.Heartbeat `json:"heartbeat"`
	ThreadAlive  bool               `json:"thread_alive"`
	LastError    string             `json:"last_error,omitempty"`
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

var nullID = json.RawMessage("null")

// errNoStdio: a Server without In or Out.
var errNoStdio = errors.New("doorman: mcp server needs In and Out")

// Serve answers requests until In ends (EOF: nil) or ctx ends (ctx.Err()).
// Every request read before EOF is answered before Serve returns. A Server
// without In or Out answers nothing and returns an error. When ctx
// ends first, the goroutine reading In stays blocked until In is closed.
func (s *Server) Serve(ctx context.Context) error {
	if s.In == nil || s.Out == nil {
		return errNoStdio
	}
	t := &stdioTransport{in: s.In, out: s.Out, logf: s.logf}
	return s.sdkServer().Run(ctx, t)
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

// statusInput is claude_inbox_status's inputSchema: an object with no
// properties, none additional (the SDK refuses any other as a tool error
// the model reads).
var statusInput = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

// served is every method the server takes: the SDK would answer
// resources/list, prompts/list, logging/setLevel, completion/complete and
// more for capabilities it does not advertise.
var served = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true, "tools/list": true, "tools/call": true,
	"notifications/initialized": true, "notifications/cancelled": true, "notifications/progress": true,
	"notifications/roots/list_changed": true,
}

// servedOnly refuses what served lacks: method not found, as for a method
// no revision has.
func servedOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !served[method] {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q", method)}
		}
		return next(ctx, method, req)
	}
}

// sdkServer is the SDK's server with the doorman's tool. It advertises
// only what it serves: tools, without listChanged (the list never
// changes); no logging, prompts or resources. The caching hints every
// revision from 2026-07-28 requires are stale at once and for this session
// only (ttlMs 0, cacheScope "private": the values Claude Code fills in for
// a server that omits them).
func (s *Server) sdkServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: serverName, Version: s.Version}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = 0, "private"
		},
	})
	srv.AddReceivingMiddleware(servedOnly)
	f := false
	mcp.AddTool(srv, &mcp.Tool{
		Name:        toolName,
		Title:       "Claude inbox status",
		Description: "Read-only: this session's inbox file, how many lines its doorman delivered, refused and has pending, the doorman's heartbeat and whether its follow loop runs.",
		InputSchema: statusInput,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &f, IdempotentHint: true, OpenWorldHint: &f},
	}, func(context.Context, *mcp.CallToolRequest, map[string]any) (res *mcp.CallToolResult, _ any, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.logf("internal error: %v", p)
				res, err = nil, &jsonrpc.Error{Code: codeInternalError, Message: "internal error"}
			}
		}()
		var r Report
		if s.Report != nil {
			r = s.Report()
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, nil, &jsonrpc.Error{Code: codeInternalError, Message: "internal error"}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: r}, nil, nil
	})
	if s.peers != nil {
		s.peers.addTools(srv)
	}
	return srv
}

// parseInitialize checks initialize's params as every revision's schema
// has them: an object with protocolVersion (a string), capabilities (an
// object) and clientInfo (an object with the strings name and version).
func parseInitialize(params json.RawMessage) (p struct {
	ProtocolVersion string `json:"protocolVersion"`
}, err error) {
	var m struct {
		ProtocolVersion *string                    `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ClientInfo      *struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
		} `json:"clientInfo"`
	}
	switch {
	case len(params) == 0 || params[0] != '{' || json.Unmarshal(params, &m) != nil:
		return p, errors.New("initialize needs params: protocolVersion, capabilities and clientInfo")
	case m.ProtocolVersion == nil:
		return p, errors.New("initialize needs a protocolVersion (a string)")
	case m.Capabilities == nil:
		return p, errors.New("initialize needs capabilities (an object)")
	case m.ClientInfo == nil || m.ClientInfo.Name == nil || m.ClientInfo.Version == nil:
		return p, errors.New("initialize needs clientInfo with a name and a version (strings)")
	}
	p.ProtocolVersion = *m.ProtocolVersion
	return p, nil
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
	if d.o.Host == nil {
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
	if srv.peers == nil {
		srv.peers = d.peerTools()
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
