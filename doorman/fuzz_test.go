package doorman_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/doorman"
)

// FuzzServer: whatever arrives, stdout carries only JSON-RPC frames, one
// per line, in order: exactly one answer per non-blank line that is not a
// notification, with the line's id (null when it has none or does not
// parse), holding either a result or an error; none for a notification.
func FuzzServer(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	f.Add(`{"jsonrpc":"2.0","id":[1],"method":"tools/call","params":{"name":7}}`)
	f.Add(`[{"jsonrpc":"2.0"}]`)
	f.Add(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n\n" + `{"jsonrpc":"2.0","id":"<&>","method":"ping"}`)
	f.Add(`{"jsonrpc":"2.0","id":null,"method":"ping"}` + "\r\n" + `{"id":1.0,"id":2,"jsonrpc":"2.0","method":"tools/list"}`)
	f.Fuzz(func(t *testing.T, msg string) {
		var out strings.Builder
		s := &doorman.Server{In: strings.NewReader(msg + "\n"), Out: &out, Report: func() doorman.Report { return doorman.Report{} }}
		if err := s.Serve(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The ids the answers must carry, in order.
		var want []any
		for _, l := range strings.Split(msg, "\n") {
			if len(bytes.TrimSpace([]byte(l))) == 0 {
				continue
			}
			var req struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Method  *string         `json:"method"`
				Params  json.RawMessage `json:"params"`
			}
			if json.Unmarshal([]byte(l), &req) != nil {
				want = append(want, nil)
				continue
			}
			if len(req.ID) == 0 {
				if req.JSONRPC == "2.0" && req.Method != nil {
					continue // a notification
				}
				want = append(want, nil)
				continue
			}
			var id any
			if err := json.Unmarshal(req.ID, &id); err != nil {
				t.Fatal(err)
			}
			want = append(want, id)
		}
		var got []any
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			var v struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      any             `json:"id"`
				Result  json.RawMessage `json:"result"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(l), &v); err != nil || v.JSONRPC != "2.0" {
				t.Fatalf("not a frame: %q", l)
			}
			if (v.Result == nil) == (v.Error == nil) {
				t.Fatalf("frame with neither or both of result and error: %q", l)
			}
			got = append(got, v.ID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("answer ids for %q (-want +got):\n%s", msg, diff)
		}
	})
}

// FuzzFollower: whatever bytes the inbox holds, one doorman run acks every
// complete line exactly once, at its offset with its sha256, delivering the
// lines that decode (as Decode has them, in order) and refusing the rest;
// the torn tail waits, and a second run delivers nothing again.
func FuzzFollower(f *testing.F) {
	for _, s := range []string{
		"[a 📡] one\n[a 📡] one\n", "\n\n \n", "no tag\nbad \xff\nnul \x00\ntorn",
		`{"v":1,"from":"zai","line":"PONG"}` + "\n" + `{"line":""}` + "\n\r\n",
		"[a 📡] x\r\n" + strings.Repeat("y", claudeinbox.MaxLineBytes+1) + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newWorld(t)
		sid := w.owned("busy")
		files := claudeinbox.FilesFor(w.fs.Paths.InboxDir, sid)
		if err := os.WriteFile(files.Inbox, data, 0o600); err != nil {
			t.Fatal(err)
		}
		stub := &stubDoor{peer: w.me, transcript: w.transcript}
		run := func() {
			var log bytes.Buffer
			dm := doorman.New(doorman.Options{Host: w.host(stub), Config: w.config(), Mode: doorman.ModeMCP, Once: true,
				Log: &log, Version: "test", Guard: doorman.Guard{Off: true}})
			if err := dm.Run(context.Background()); err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
		}
		run()

		type verdict struct {
			Offset    int64
			SHA256    string
			Delivered bool
		}
		var want, got []verdict
		var texts []string
		end := int64(0)
		for rest := data; ; {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				break
			}
			line := rest[:i]
			m, err := claudeinbox.Decode(line)
			want = append(want, verdict{end, claudeinbox.SHA256(line), err == nil})
			if err == nil {
				texts = append(texts, m.Text)
			}
			end += int64(i) + 1
			rest = rest[i+1:]
		}
		for _, a := range readAcks(t, files.Ack) {
			if a.LineOffset == nil {
				t.Fatalf("ack without line_offset: %+v", a)
			}
			delivered := a.Class == claudeinbox.AckDeliveredSteer
			if !delivered && (a.Class != claudeinbox.AckRefused || a.Reason == "") {
				t.Fatalf("ack neither delivered-steer nor refused with a reason: %+v", a)
			}
			got = append(got, verdict{*a.LineOffset, a.SHA256, delivered})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("acks for %q (-want +got):\n%s", data, diff)
		}
		var sent []string
		for _, m := range stub.delivered {
			sent = append(sent, m.Text)
		}
		if diff := cmp.Diff(texts, sent); diff != "" {
			t.Fatalf("delivered (-want +got):\n%s", diff)
		}
		off := "0" // no line handled: no offset file
		if b, err := os.ReadFile(files.Offset); err == nil {
			off = strings.TrimSpace(string(b))
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if off != strconv.FormatInt(end, 10) {
			t.Fatalf("offset %s, want %d", off, end)
		}

		run()
		if n := len(readAcks(t, files.Ack)); n != len(want) || len(stub.delivered) != len(texts) {
			t.Fatalf("a second run: %d acks and %d deliveries, want %d and %d", n, len(stub.delivered), len(want), len(texts))
		}
	})
}
