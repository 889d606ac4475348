package doorman_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oo-family/oo-claude/doorman"
)

// TestMCPOfficialClient: the official Go SDK's client, pinned to each
// revision in turn, connects (server/discover for 2026-07-28, initialize
// for the four older ones), lists the tool, calls it, gets an error for an
// argument the inputSchema forbids, and closes.
func TestMCPOfficialClient(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			toServer, fromClient := io.Pipe()
			toClient, fromServer := io.Pipe()
			srv := &doorman.Server{In: toServer, Out: fromServer, Version: "9.9.9",
				Report: func() doorman.Report { return doorman.Report{State: "following"} }}
			done := make(chan error, 1)
			go func() {
				done <- srv.Serve(ctx)
				fromServer.Close()
			}()
			c := mcp.NewClient(&mcp.Implementation{Name: "sdk-test", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				fromClient.Close()
				<-done
				t.Fatalf("connect: %v", err)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated %q, want %q", got, version)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != doorman.ToolName {
				t.Errorf("tools/list: %+v, %v", tools, err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: doorman.ToolName, Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Errorf("tools/call: %+v, %v", res, err)
			} else if m, _ := res.StructuredContent.(map[string]any); m["state"] != "following" {
				t.Errorf("tools/call structuredContent %v", res.StructuredContent)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: doorman.ToolName, Arguments: map[string]any{"verbose": true}})
			if err == nil && !res.IsError {
				t.Errorf("tools/call with a forbidden argument: %+v; want an error", res)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
}

// TestTransportGuarantees: the doorman's transport in front of the
// official SDK's server (v1.8.0) holds what the SDK's own IOTransport
// breaks, each input run against both: every request read right before
// EOF answered (20 runs), a malformed line answered and the session going
// on, ids checked. The bare SDK's failures are logged (the figures in
// doc.go); the test fails only on the doorman's.
func TestTransportGuarantees(t *testing.T) {
	const (
		initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n"
		list       = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
		ping       = `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n"
	)
	type noArgs struct{}
	// bare feeds in to the SDK's server on its IOTransport and returns what
	// it wrote. With answers > 0 it waits (up to 10 s) for that many lines
	// or the server's end before it closes the input; with 0 at once.
	bare := func(in string, answers int) string {
		s := mcp.NewServer(&mcp.Implementation{Name: doorman.ServerName, Version: "9.9.9"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: doorman.ToolName}, func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
		pr, pw := io.Pipe()
		buf := &syncBuffer{}
		done := make(chan error, 1)
		go func() {
			done <- s.Run(context.Background(), &mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{buf}})
		}()
		io.WriteString(pw, in)
		for deadline := time.Now().Add(60 * time.Second); answers > 0 && time.Now().Before(deadline) && strings.Count(buf.String(), "\n") < answers; {
			select {
			case <-done:
				pw.Close()
				return buf.String()
			case <-time.After(5 * time.Millisecond):
			}
		}
		pw.Close()
		<-done
		return buf.String()
	}
	// ours runs in through the doorman's server until EOF.
	ours := func(t *testing.T, in string) string {
		var out syncBuffer
		s := &doorman.Server{In: strings.NewReader(in), Out: &out, Version: "9.9.9"}
		if err := s.Serve(context.Background()); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	t.Run("every request read before EOF is answered", func(t *testing.T) {
		lost := 0
		for range 20 {
			if strings.Count(bare(initialize+list+ping, 0), "\n") < 3 {
				lost++
			}
			if out := ours(t, initialize+list+ping); strings.Count(out, "\n") != 3 {
				t.Fatalf("answers lost before EOF: %q", out)
			}
		}
		t.Logf("the bare SDK lost answers in %d of 20 runs; the doorman in none", lost)
	})
	for _, bad := range []string{"{bad", "[]", "42", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"jsonrpc":"2.0","id":6,"method":5}`, `{"jsonrpc":2,"id":6,"method":"ping"}`, "[1]", "\x00"} {
		t.Run("a malformed line is answered and the session goes on: "+bad, func(t *testing.T) {
			if out := bare(initialize+bad+"\n"+ping, 2); strings.Contains(out, `"id":3`) {
				t.Logf("the bare SDK answered the ping after %q", bad)
			}
			out := ours(t, initialize+bad+"\n"+ping)
			if !strings.Contains(out, `{"jsonrpc":"2.0","id":3,"result":{}}`) || strings.Count(out, "\n") != 3 || !strings.Contains(out, `"error":{"code":-32`) {
				t.Errorf("after %q: %q", bad, out)
			}
		})
	}
	t.Run("ids are checked and echoed as sent", func(t *testing.T) {
		for _, tc := range []struct{ in, want string }{
			{`{"jsonrpc":"2.0","id":7.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`},
			{"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`},
			{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`},
			{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, `{"jsonrpc":"2.0","id":9007199254740993,"result":{}}`},
			{`{"jsonrpc":"2.0","id":"\u00e9","method":"ping"}`, `{"jsonrpc":"2.0","id":"\u00e9","result":{}}`},
		} {
			if out := ours(t, initialize+tc.in+"\n"); !strings.Contains(out, tc.want+"\n") {
				t.Errorf("%s: %q, want %s", tc.in, out, tc.want)
			}
		}
		out := bare(initialize+`{"jsonrpc":"2.0","id":7.5,"method":"ping"}`+"\n", 2)
		t.Logf("the bare SDK answers id 7.5 with: %q", strings.TrimPrefix(out[strings.Index(out, "\n")+1:], ""))
	})
	t.Run("a notification cancels the request it names by the client's id", func(t *testing.T) {
		out := ours(t, initialize+`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`+"\n"+ping)
		if strings.Count(out, "\n") != 2 || !strings.Contains(out, `"id":3,"result":{}`) {
			t.Errorf("%q", out)
		}
	})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
