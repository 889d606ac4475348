package e2e

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The probe is this test binary re-executed as an MCP stdio server (see
// TestMain). It records what Claude Code does to an MCP child as JSON lines
// in the file named by probeOutEnv, and, when probeCtlEnv names a Unix
// socket path, listens there for lines to carry through the session's door,
// so a test can write to the door as a descendant of the session.

const (
	probeModeEnv = "OO_E2E_PROBE_MODE" // "mcp" runs the probe
	probeOutEnv  = "OO_E2E_PROBE_OUT"  // file the events are appended to
	probeCtlEnv  = "OO_E2E_PROBE_CTL"  // optional control socket path
	// probeLifetime bounds a probe's life, so a probe that Claude Code
	// forgets can never outlive the suite for long.
	probeLifetime = 90 * time.Second
)

// probeEnvNames are the environment variables whose values the probe
// records. CLAUDE_CODE_MESSAGING_TOKEN is a secret and is never recorded:
// only its length and whether it is hex.
var probeEnvNames = []string{
	"CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_MESSAGING_SOCKET",
	"CLAUDE_PROJECT_DIR", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_CHILD_NOTES_DIR",
	"CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS", "AI_AGENT",
}

// probeEvent is one line of the probe's record.
type probeEvent struct {
	T  int64  `json:"t"` // unix nanoseconds
	Ev string `json:"ev"`

	// start
	Pid        int               `json:"pid,omitempty"`
	Ppid       int               `json:"ppid,omitempty"`
	Cwd        string            `json:"cwd,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	EnvNames   []string          `json:"envNames,omitempty"`
	TokenSet   bool              `json:"tokenSet,omitempty"`
	TokenLen   int               `json:"tokenLen,omitempty"`
	TokenHex   bool              `json:"tokenHex,omitempty"`
	DoorSocket bool              `json:"doorSocket,omitempty"` // the socket existed at start
	DoorDialed bool              `json:"doorDialed,omitempty"` // and accepted a connection

	// method
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`

	// signal
	Signal string `json:"signal,omitempty"`

	// sent, error
	Detail string `json:"detail,omitempty"`
}

// probeRecorder appends events to the record file, one write per line.
type probeRecorder struct {
	mu sync.Mutex
	f  *os.File
}

func (r *probeRecorder) record(ev probeEvent) {
	ev.T = time.Now().UnixNano()
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.f.Write(append(b, '\n'))
}

// runProbe is the probe's main. It returns the exit code.
func runProbe() int {
	f, err := os.OpenFile(os.Getenv(probeOutEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		return 2
	}
	rec := &probeRecorder{f: f}

	// Ignore SIGINT and SIGTERM, recording them, so that the whole stop
	// sequence can be seen; after the first one, beat every 10 ms so the
	// last beat dates the SIGKILL.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	rec.record(startEvent())

	eof := make(chan struct{})
	go serveMCP(rec, os.Stdin, os.Stdout, eof)
	if ctl := os.Getenv(probeCtlEnv); ctl != "" {
		go serveControl(rec, ctl)
	}

	deadline := time.After(probeLifetime)
	var beat <-chan time.Time
	var afterEOF <-chan time.Time
	for {
		select {
		case s := <-sigs:
			rec.record(probeEvent{Ev: "signal", Signal: sigName(s)})
			if beat == nil {
				t := time.NewTicker(10 * time.Millisecond)
				beat = t.C
			}
		case <-beat:
			rec.record(probeEvent{Ev: "beat"})
		case <-eof:
			eof = nil
			// A well-behaved MCP server exits on EOF; the probe lingers
			// a little to see whether signals follow.
			afterEOF = time.After(3 * time.Second)
		case <-afterEOF:
			rec.record(probeEvent{Ev: "exit", Detail: "stdin closed"})
			return 0
		case <-deadline:
			rec.record(probeEvent{Ev: "exit", Detail: "lifetime over"})
			return 0
		}
	}
}

func sigName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

func startEvent() probeEvent {
	ev := probeEvent{Ev: "start", Pid: os.Getpid(), Ppid: os.Getppid(), Env: map[string]string{}}
	ev.Cwd, _ = os.Getwd()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		ev.EnvNames = append(ev.EnvNames, name)
	}
	for _, name := range probeEnvNames {
		if v, ok := os.LookupEnv(name); ok {
			ev.Env[name] = v
		}
	}
	if tok, ok := os.LookupEnv("CLAUDE_CODE_MESSAGING_TOKEN"); ok {
		ev.TokenSet, ev.TokenLen = true, len(tok)
		_, err := hex.DecodeString(tok)
		ev.TokenHex = err == nil && tok != ""
	}
	if sock := os.Getenv("CLAUDE_CODE_MESSAGING_SOCKET"); sock != "" {
		if fi, err := os.Lstat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			ev.DoorSocket = true
		}
		if c, err := net.DialTimeout("unix", sock, time.Second); err == nil {
			ev.DoorDialed = true
			c.Close()
		}
	}
	return ev
}

// rpcMessage is a JSON-RPC 2.0 message.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// serveMCP answers MCP requests on in/out: -32601 to server/discover (and
// anything unknown), a minimal initialize, an empty tools/list. It records
// every method and closes eof when in ends.
func serveMCP(rec *probeRecorder, in io.Reader, out io.Writer, eof chan<- struct{}) {
	defer close(eof)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var m rpcMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			rec.record(probeEvent{Ev: "error", Detail: "unparseable line"})
			continue
		}
		ev := probeEvent{Ev: "method", Method: m.Method}
		if m.Method == "server/discover" || m.Method == "initialize" {
			ev.Params = m.Params
		}
		rec.record(ev)
		if len(m.ID) == 0 || m.Method == "" {
			continue // a notification or a response
		}
		reply := rpcMessage{JSONRPC: "2.0", ID: m.ID}
		switch m.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(m.Params, &p)
			reply.Result = map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "oo-e2e-probe", "version": "0.0.1"},
			}
		case "tools/list":
			reply.Result = map[string]any{"tools": []any{}}
		case "ping":
			reply.Result = map[string]any{}
		default:
			reply.Error = &rpcError{Code: -32601, Message: "Method not found"}
		}
		if err := enc.Encode(reply); err != nil {
			rec.record(probeEvent{Ev: "error", Detail: "write: " + err.Error()})
			return
		}
	}
	rec.record(probeEvent{Ev: "stdin-eof"})
}

// probeSend is a control request: lines to write to the door, one
// connection, optionally after an auth frame with the probe's token.
type probeSend struct {
	Auth  bool     `json:"auth"`
	Lines []string `json:"lines"`
}

// serveControl listens on path; each connection carries one probeSend
// (ended by half-close) and gets "ok\n" or "error: …\n" back.
func serveControl(rec *probeRecorder, path string) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		rec.record(probeEvent{Ev: "error", Detail: "control listen: " + err.Error()})
		return
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		var req probeSend
		err = json.NewDecoder(c).Decode(&req)
		if err == nil {
			err = writeDoor(req)
		}
		if err != nil {
			rec.record(probeEvent{Ev: "error", Detail: "send: " + err.Error()})
			fmt.Fprintf(c, "error: %v\n", err)
		} else {
			rec.record(probeEvent{Ev: "sent", Detail: fmt.Sprintf("%d lines", len(req.Lines))})
			fmt.Fprintln(c, "ok")
		}
		c.Close()
	}
}

// writeDoor writes the lines to the session's door in one write.
func writeDoor(req probeSend) error {
	sock := os.Getenv("CLAUDE_CODE_MESSAGING_SOCKET")
	if sock == "" {
		return errors.New("CLAUDE_CODE_MESSAGING_SOCKET is not set")
	}
	var buf strings.Builder
	if req.Auth {
		auth, _ := json.Marshal(map[string]string{"type": "auth", "token": os.Getenv("CLAUDE_CODE_MESSAGING_TOKEN")})
		buf.Write(auth)
		buf.WriteByte('\n')
	}
	for _, l := range req.Lines {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	return writeUnixLines(sock, buf.String())
}

// writeUnixLines dials path, writes data in one write, half-closes and
// waits briefly for the server to close (the door never answers).
func writeUnixLines(path, data string) error {
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := io.WriteString(c, data); err != nil {
		return err
	}
	if uc, ok := c.(*net.UnixConn); ok {
		_ = uc.CloseWrite()
	}
	_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, _ = io.Copy(io.Discard, c)
	return nil
}
