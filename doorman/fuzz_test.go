package doorman_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/doorman"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// FuzzServer: whatever arrives, stdout carries only JSON-RPC frames, valid
// UTF-8, one per line, in any order: for each non-blank line exactly one frame
// (none for a notification or a response), with the line's id (null when it
// has none, does not parse, or is not a string or an integer), holding
// either a result or an error. A batch gets one array frame of its
// members' answers once 2025-03-26 is negotiated, else one error.
func FuzzServer(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	f.Add(`{"jsonrpc":"2.0","id":[1],"method":"tools/call","params":{"name":7}}`)
	f.Add(`[{"jsonrpc":"2.0"}]`)
	f.Add(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n\n" + `{"jsonrpc":"2.0","id":"<&>","method":"ping"}`)
	f.Add(`{"jsonrpc":"2.0","id":null,"method":"ping"}` + "\r\n" + `{"id":1.0,"id":2,"jsonrpc":"2.0","method":"tools/list"}`)
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n" +
		`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"x"},7,{"jsonrpc":"2.0","id":3,"result":1}]` + "\n[]")
	f.Add("{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{}}")
	f.Add(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"claude_inbox_status","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	f.Fuzz(func(t *testing.T, msg string) {
		var out strings.Builder
		s := &doorman.Server{In: strings.NewReader(msg + "\n"), Out: &out, Report: func() doorman.Report { return doorman.Report{} }}
		if err := s.Serve(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(out.String()) {
			t.Fatalf("stdout is not valid UTF-8: %q", out.String())
		}
		// The frames the answers must be, in order: an id (a JSON text
		// with "null" for null), or a batch of them.
		var want []any
		batches := false // 2025-03-26 negotiated
		for _, l := range strings.Split(msg, "\n") {
			l := strings.TrimSpace(l)
			if l == "" {
				continue
			}
			if !json.Valid([]byte(l)) {
				want = append(want, "null")
				continue
			}
			var batch []json.RawMessage
			if json.Unmarshal([]byte(l), &batch) != nil {
				if id, ok := fuzzAnswerID(json.RawMessage(l), &batches); ok {
					want = append(want, id)
				}
				continue
			}
			if len(batch) == 0 || !batches {
				want = append(want, "null")
				continue
			}
			var ids []string
			for _, m := range batch {
				if id, ok := fuzzAnswerID(m, &batches); ok {
					ids = append(ids, id)
				}
			}
			if len(ids) > 0 {
				want = append(want, ids)
			}
		}
		type frame struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		check := func(l string, v frame) string {
			if v.JSONRPC != "2.0" || len(v.ID) == 0 {
				t.Fatalf("not a frame: %q", l)
			}
			if (v.Result == nil) == (v.Error == nil) {
				t.Fatalf("frame with neither or both of result and error: %q", l)
			}
			return canonID(v.ID)
		}
		var got []any
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			if strings.HasPrefix(l, "[") {
				var vs []frame
				if err := json.Unmarshal([]byte(l), &vs); err != nil || len(vs) == 0 {
					t.Fatalf("not a batch frame: %q", l)
				}
				var ids []string
				for _, v := range vs {
					ids = append(ids, check(l, v))
				}
				got = append(got, ids)
				continue
			}
			var v frame
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("not a frame: %q", l)
			}
			got = append(got, check(l, v))
		}
		// Answers may come in any order (JSON-RPC matches them by id).
		byText := func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) }
		slices.SortFunc(want, byText)
		slices.SortFunc(got, byText)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("answer ids for %q (-want +got):\n%s", msg, diff)
		}
	})
}

// fuzzAnswerID is FuzzServer's model of one message: the id its answer
// carries, or ok false when it gets none. An initialize it answers sets
// batches to whether it negotiates 2025-03-26.
func fuzzAnswerID(raw json.RawMessage, batches *bool) (id string, ok bool) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if !strings.HasPrefix(string(raw), "{") {
		return "null", true
	}
	if json.Unmarshal(raw, &m) != nil {
		// A member of the wrong type: the id is echoed where readable.
		var idOnly struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(raw, &idOnly)
		if fuzzIDOK(idOnly.ID) && idOnly.ID != nil {
			return canonID(idOnly.ID), true
		}
		return "null", true
	}
	if m.Method == nil && m.ID != nil && (m.Result != nil || m.Error != nil) {
		return "", false // a response
	}
	idOK := fuzzIDOK(m.ID)
	var method string
	if m.JSONRPC != "2.0" || !strings.HasPrefix(string(m.Method), `"`) || json.Unmarshal(m.Method, &method) != nil || !idOK {
		if idOK && m.ID != nil {
			return canonID(m.ID), true
		}
		return "null", true
	}
	if m.ID == nil {
		return "", false
	}
	if method == "initialize" {
		var p struct {
			ProtocolVersion *string                    `json:"protocolVersion"`
			Capabilities    map[string]json.RawMessage `json:"capabilities"`
			ClientInfo      *struct {
				Name    *string `json:"name"`
				Version *string `json:"version"`
			} `json:"clientInfo"`
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		wellFormed := strings.HasPrefix(string(m.Params), "{") && json.Unmarshal(m.Params, &p) == nil &&
			p.ProtocolVersion != nil && p.Capabilities != nil && p.ClientInfo != nil && p.ClientInfo.Name != nil && p.ClientInfo.Version != nil
		named, modern := p.Meta["io.modelcontextprotocol/protocolVersion"]
		var v string
		legacy := !modern || json.Unmarshal(named, &v) == nil && slices.Contains([]string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}, v)
		if wellFormed && legacy {
			*batches = *p.ProtocolVersion == "2025-03-26"
		}
	}
	return canonID(m.ID), true
}

// fuzzIDOK is whether id is absent or one MCP allows: a string of valid
// UTF-8 or an integer.
func fuzzIDOK(id json.RawMessage) bool {
	if id == nil {
		return true
	}
	if id[0] == '"' {
		var str string
		return utf8.Valid(id) && json.Unmarshal(id, &str) == nil
	}
	var n int64
	_, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && json.Unmarshal(id, &n) == nil && !strings.HasPrefix(string(id), "+")
}

// canonID is an id as a comparable string: its JSON value re-encoded.
func canonID(id json.RawMessage) string {
	d := json.NewDecoder(bytes.NewReader(id))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return "undecodable " + string(id)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// FuzzFollower: whatever bytes the inbox holds, one doorman run acks every
// complete line exactly once, at its offset with its sha256, delivering the
// lines that decode (as Decode has them, in order) and refusing the rest;
// the torn tail waits, and a second run delivers nothing again.
func FuzzFollower(f *testing.F) {
	for _, s := range []string{
		"[a 📡] one\n[a 📡] one\n", "\n\n \n", "no tag\nbad \xff\nnul \x00\ntorn",
		`{"v":1,"from":"zai","line":"PONG"}` + "\n" + `{"line":""}` + "\n\r\n",
		"[a 📡] x\r\n" + strings.Repeat("y", inboxv1.MaxLineBytes+1) + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w := newWorld(t)
		sid := w.owned("busy")
		files := inboxv1.FilesFor(w.fs.Paths.InboxDir, sid)
		if err := os.WriteFile(files.Inbox, data, 0o600); err != nil {
			t.Fatal(err)
		}
		stub := &stubDoor{peer: w.me, transcript: w.transcript}
		run := func() {
			var log bytes.Buffer
			dm := doorman.New(doorman.WithoutPacing(doorman.Options{Host: w.host(stub), Config: w.config(), Mode: doorman.ModeMCP, Once: true,
				Log: &log, Version: "test"}))
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
			m, err := inbox.Decode(line)
			want = append(want, verdict{end, inbox.SHA256(line), err == nil})
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
			delivered := a.Class == inboxv1.AckDeliveredSteer
			if !delivered && (a.Class != inboxv1.AckRefused || a.Reason == "") {
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
