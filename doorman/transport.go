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
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is the SDK's mcp.Transport for the doorman: newline-
// delimited JSON-RPC on in and out, holding the guarantees the SDK's own
// IOTransport (v1.8.0) breaks (TestTransportGuarantees):
//   - every request read before in's EOF is answered before Read reports
//     EOF (the SDK stops writing the moment Read fails);
//   - a malformed line is answered here with its JSON-RPC error (-32700,
//     -32600) and the session goes on (the SDK's ends the session);
//   - only the ids MCP allows are passed on, and the SDK sees its own
//     small integer ids: the answer carries the client's id byte for byte
//     (the SDK answers 7.5 as 7, a big integer rounded, invalid UTF-8 as
//     U+FFFD, and drops a null id);
//   - batches are taken in 2025-03-26 only, answered as one array;
//   - out carries JSON-RPC frames only, one whole frame per write.
//
// It also holds the checks the SDK lacks (the smallest shim, each in
// [checkRequest]): a request whose _meta names a revision the server does
// not speak is refused -32022, older or newer (the SDK serves an older one
// as legacy), and a malformed initialize is refused -32602 (the SDK takes
// one without capabilities or clientInfo).
type stdioTransport struct {
	in   io.Reader
	out  io.Writer
	logf func(format string, a ...any)
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		out: t.out, logf: t.logf,
		msgs:    make(chan jsonrpc.Message),
		closed:  make(chan struct{}),
		pending: map[int64]*pendingCall{},
	}
	go c.readLoop(t.in)
	return c, nil
}

// pendingCall is a request passed to the SDK and not yet answered.
type pendingCall struct {
	id     json.RawMessage // the client's, as it sent it
	method string
	batch  *batchFrame // nil outside a batch
	slot   int
	done   chan struct{} // closed when answered
}

// batchFrame collects the answers of one batch: written as one array when
// every slot is filled.
type batchFrame struct {
	answers [][]byte // in the members' order; nil while pending
	left    int      // members passed on and not yet answered
	reading bool     // not all members read yet
}

type stdioConn struct {
	out  io.Writer
	logf func(format string, a ...any)

	msgs   chan jsonrpc.Message // to Read; closed at in's end
	closed chan struct{}
	once   sync.Once

	wmu sync.Mutex // one frame at a time on out

	mu         sync.Mutex
	next       int64
	pending    map[int64]*pendingCall
	drained    chan struct{} // closed when pending empties; nil while none waits
	negotiated string        // the initialize answer's protocolVersion
}

var _ mcp.Connection = (*stdioConn)(nil)

func (c *stdioConn) SessionID() string { return "" }

// Close ends the connection: Read returns EOF. The goroutine reading in
// stays blocked until in is closed.
func (c *stdioConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

// Read returns the next message for the SDK. At in's end it first waits
// until every request passed on has been answered (or the connection is
// closed), then returns io.EOF.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m, ok := <-c.msgs:
		if ok {
			return m, nil
		}
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return nil, io.EOF
	}
	if c.drained == nil {
		c.drained = make(chan struct{})
	}
	drained := c.drained
	c.mu.Unlock()
	select {
	case <-drained:
	case <-c.closed:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return nil, io.EOF
}

// Write writes one message of the SDK's: an answer goes out with the
// client's id (inside its batch's frame when it came in one); a request or
// notification of the server's as it is.
func (c *stdioConn) Write(_ context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return err
		}
		c.writeFrame(b)
		return nil
	}
	n, _ := resp.ID.Raw().(int64)
	c.mu.Lock()
	p := c.pending[n]
	c.mu.Unlock()
	if p == nil {
		c.logf("an answer to no pending request (id %v) dropped", resp.ID.Raw())
		return nil
	}
	b := encodeAnswer(p.id, resp)
	if p.method == "initialize" && resp.Error == nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(resp.Result, &r)
		c.mu.Lock()
		c.negotiated = r.ProtocolVersion
		c.mu.Unlock()
	}
	c.answer(n, p, b)
	return nil
}

// answer writes b for p (or files it in p's batch) and retires p.
func (c *stdioConn) answer(n int64, p *pendingCall, b []byte) {
	if p.batch != nil {
		c.mu.Lock()
		p.batch.answers[p.slot] = b
		p.batch.left--
		full := p.batch.left == 0 && !p.batch.reading
		c.mu.Unlock()
		if full {
			c.writeFrame(joinBatch(p.batch.answers))
		}
	} else {
		c.writeFrame(b)
	}
	c.mu.Lock()
	delete(c.pending, n)
	if len(c.pending) == 0 && c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
	c.mu.Unlock()
	close(p.done)
}

func joinBatch(answers [][]byte) []byte {
	return slices.Concat([]byte{'['}, bytes.Join(answers, []byte{','}), []byte{']'})
}

// wireAnswer is a JSON-RPC response with the client's id as sent.
type wireAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
}

// encodeAnswer is resp with the client's id; an error without a JSON-RPC
// code (the SDK's plain errors) is -32603 with its message.
func encodeAnswer(id json.RawMessage, resp *jsonrpc.Response) []byte {
	a := wireAnswer{JSONRPC: "2.0", ID: id, Result: resp.Result}
	if resp.Error != nil {
		a.Result = nil
		var we *jsonrpc.Error
		if errors.As(resp.Error, &we) {
			a.Error = &jsonrpc.Error{Code: we.Code, Message: resp.Error.Error(), Data: we.Data}
			if we == resp.Error {
				a.Error.Message = we.Message
			}
		} else {
			a.Error = &jsonrpc.Error{Message: resp.Error.Error()}
		}
		if a.Error.Code == 0 {
			a.Error.Code = codeInternalError
		}
	} else if len(a.Result) == 0 {
		a.Result = json.RawMessage("{}")
	}
	b, err := json.Marshal(a)
	if err != nil {
		b, _ = json.Marshal(errorAnswer(id, codeInternalError, "internal error", nil))
	}
	return b
}

func errorAnswer(id json.RawMessage, code int64, msg string, data json.RawMessage) wireAnswer {
	return wireAnswer{JSONRPC: "2.0", ID: id, Error: &jsonrpc.Error{Code: code, Message: msg, Data: data}}
}

func marshalAnswer(a wireAnswer) []byte {
	b, _ := json.Marshal(a) // ids are valid JSON, messages strings: cannot fail
	return b
}

// writeFrame writes one frame and its newline in one write.
func (c *stdioConn) writeFrame(b []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.out.Write(append(b, '\n')); err != nil {
		c.logf("write: %v", err)
	}
}

// readLoop reads in line by line until its end, answering what is not a
// valid message here and passing the rest to Read.
func (c *stdioConn) readLoop(in io.Reader) {
	defer close(c.msgs)
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 && !c.handleLine(bytes.TrimSpace(line)) {
			return
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.logf("read: %v", err)
			}
			return
		}
	}
}

// handleLine takes one line: a message or a batch. It returns false when
// the connection is closed.
func (c *stdioConn) handleLine(line []byte) bool {
	if !json.Valid(line) {
		c.logf("unparseable message (%d bytes)", len(line))
		c.writeFrame(marshalAnswer(errorAnswer(nullID, codeParseError, "parse error", nil)))
		return true
	}
	if line[0] != '[' {
		return c.handleMessage(line, nil)
	}
	var members []json.RawMessage
	json.Unmarshal(line, &members) // valid JSON and an array: cannot fail
	c.mu.Lock()
	negotiated := c.negotiated
	c.mu.Unlock()
	switch {
	case len(members) == 0:
		c.writeFrame(marshalAnswer(errorAnswer(nullID, codeInvalidRequest, "invalid request: empty batch", nil)))
		return true
	case negotiated != "2025-03-26":
		// Batches exist in 2025-03-26 only: 2024-11-05 had none and
		// 2025-06-18 removed them.
		c.writeFrame(marshalAnswer(errorAnswer(nullID, codeInvalidRequest, "invalid request: batches are not supported in protocol version "+cmp.Or(negotiated, "(none negotiated)"), nil)))
		return true
	}
	batch := &batchFrame{reading: true}
	for _, m := range members {
		if !c.handleMessage(m, batch) {
			return false
		}
	}
	c.finishBatch(batch)
	return true
}

// handleMessage checks one message and passes it on, or answers it here
// (in batch, when it is a batch's member). It returns false when the
// connection is closed.
func (c *stdioConn) handleMessage(raw []byte, batch *batchFrame) bool {
	req, id, rerr := checkMessage(raw)
	if rerr != nil {
		c.early(batch, marshalAnswer(errorAnswer(id, rerr.Code, rerr.Message, rerr.Data)))
		return true
	}
	if req == nil {
		c.logf("ignored a response (%d bytes)", len(raw))
		return true
	}
	if !req.IsCall() {
		if req.Method == "notifications/cancelled" {
			c.mapCancelled(req)
		}
		return c.pass(req)
	}
	p := &pendingCall{id: id, method: req.Method, done: make(chan struct{})}
	c.mu.Lock()
	c.next++
	n := c.next
	if batch != nil {
		p.batch, p.slot = batch, len(batch.answers)
		batch.answers = append(batch.answers, nil)
		batch.left++
	}
	c.pending[n] = p
	c.mu.Unlock()
	req.ID = jsonrpc2Int(n)
	if !c.pass(req) {
		return false
	}
	if req.Method == "initialize" {
		// The batch rule depends on the version it negotiates: the next
		// line is taken once it is answered.
		select {
		case <-p.done:
		case <-c.closed:
			return false
		}
	}
	return true
}

// early answers a message here: as its own frame, or in its batch.
func (c *stdioConn) early(batch *batchFrame, b []byte) {
	if batch == nil {
		c.writeFrame(b)
		return
	}
	c.mu.Lock()
	batch.answers = append(batch.answers, b)
	c.mu.Unlock()
}

// finishBatch marks batch read whole; it goes out now when every member is
// answered (none, when all were notifications or responses), else with
// its last answer.
func (c *stdioConn) finishBatch(batch *batchFrame) {
	c.mu.Lock()
	batch.reading = false
	full := batch.left == 0 && len(batch.answers) > 0
	c.mu.Unlock()
	if full {
		c.writeFrame(joinBatch(batch.answers))
	}
}

func (c *stdioConn) pass(m jsonrpc.Message) bool {
	select {
	case c.msgs <- m:
		return true
	case <-c.closed:
		return false
	}
}

// mapCancelled points a notifications/cancelled at the SDK's id of the
// request it names (the client's id otherwise means nothing to the SDK).
func (c *stdioConn) mapCancelled(req *jsonrpc.Request) {
	var p map[string]json.RawMessage
	if json.Unmarshal(req.Params, &p) != nil || p["requestId"] == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for n, pc := range c.pending {
		if bytes.Equal(pc.id, p["requestId"]) {
			p["requestId"] = json.RawMessage(strconv.FormatInt(n, 10))
			req.Params, _ = json.Marshal(p)
			return
		}
	}
}

func jsonrpc2Int(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}

// checkMessage checks one message as MCP has them. It returns the request
// or notification to pass on; nil and nil for a response (this server
// sends no requests, so nothing awaits one); or the error to answer, with
// the id to answer it with (the message's where it is readable and one MCP
// allows, else null).
func checkMessage(raw []byte) (*jsonrpc.Request, json.RawMessage, *jsonrpc.Error) {
	invalid := &jsonrpc.Error{Code: codeInvalidRequest, Message: "invalid request"}
	if raw[0] != '{' {
		return nil, nullID, invalid
	}
	var m message
	if json.Unmarshal(raw, &m) != nil {
		// A member of the wrong type ("jsonrpc":2): the id, where it can
		// be read and is one MCP allows, is still echoed.
		var members struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(raw, &members)
		id, _ := validID(members.ID)
		return nil, id, invalid
	}
	id, idOK := validID(m.ID)
	if len(m.Method) == 0 && len(m.ID) > 0 && (len(m.Result) > 0 || len(m.Error) > 0) {
		return nil, nil, nil
	}
	var method string
	if m.JSONRPC != "2.0" || len(m.Method) == 0 || m.Method[0] != '"' || json.Unmarshal(m.Method, &method) != nil || !idOK {
		// Not a request, so not a notification either: it is answered,
		// with a null id when its id is absent or not one MCP allows.
		return nil, id, invalid
	}
	req := &jsonrpc.Request{Method: method, Params: m.Params}
	if string(req.Params) == "null" {
		req.Params = nil
	}
	if len(m.ID) == 0 {
		return req, nil, nil // a notification: never answered
	}
	if len(req.Params) > 0 && req.Params[0] != '{' {
		return nil, id, &jsonrpc.Error{Code: codeInvalidParams, Message: "invalid params: want an object"}
	}
	if rerr := checkRequest(method, m.Params); rerr != nil {
		return nil, id, rerr
	}
	req.ID = jsonrpc2Int(0) // replaced by the caller's count; marks a call
	return req, id, nil
}

// checkRequest is the shim: what the SDK (v1.8.0) does not refuse itself.
func checkRequest(method string, params json.RawMessage) *jsonrpc.Error {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(params, &p)
	if raw, named := p.Meta[metaProtocolVersion]; named {
		var version string
		if json.Unmarshal(raw, &version) != nil {
			return &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf("invalid _meta field %q", metaProtocolVersion)}
		}
		if !slices.Contains(mcp.SupportedProtocolVersions(), version) {
			// Older or newer alike: a request that names a revision this
			// server does not speak is refused, never served as legacy.
			data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: mcp.SupportedProtocolVersions(), Requested: version})
			return &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: "unsupported protocol version", Data: data}
		}
		if version >= modernProtocol {
			return nil // the SDK checks the rest of a modern request
		}
	}
	if method == "initialize" {
		if _, err := parseInitialize(params); err != nil {
			return &jsonrpc.Error{Code: codeInvalidParams, Message: "invalid params: " + err.Error()}
		}
	}
	return nil
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
