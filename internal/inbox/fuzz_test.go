package inbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/hostile"
	"github.com/oo-family/oo-claude/internal/inbox"
)

// lineSeeds are the fuzz seeds of a line: hostile.Lines.
var lineSeeds = hostile.Lines(inboxv1.MaxLineBytes)

func FuzzCheckLine(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		err := inbox.CheckLine(line)
		if err != nil {
			var le *inboxv1.LineError
			if !errors.As(err, &le) || le.Bytes != len(line) {
				t.Fatalf("error %v is not a *LineError for %d bytes", err, len(line))
			}
			return
		}
		switch {
		case len(bytes.TrimSpace(line)) == 0:
			t.Fatal("accepted an empty line")
		case bytes.ContainsAny(line, "\n\r\x00"):
			t.Fatal("accepted a newline, carriage return or NUL")
		case len(line) > inboxv1.MaxLineBytes:
			t.Fatal("accepted a line over 16 KiB")
		case !utf8.Valid(line):
			t.Fatal("accepted invalid UTF-8")
		}
	})
}

// Decode never panics, and what it hands the door always passes the line
// rules, with a sender name that passes the sender rule, and decodes to
// itself.
func FuzzDecode(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := inbox.Decode(raw)
		if err != nil {
			return
		}
		if err := inbox.CheckLine([]byte(m.Text)); err != nil {
			t.Fatalf("Decode(%q).Text = %q fails CheckLine: %v", raw, m.Text, err)
		}
		if err := inbox.CheckFrom(m.From); err != nil {
			t.Fatalf("Decode(%q).From = %q fails CheckFrom: %v", raw, m.From, err)
		}
		// What the door is handed decodes to itself: a redelivered text is
		// not wrapped or tagged a second time.
		again, err := inbox.Decode([]byte(m.Text))
		if err != nil || again.Text != m.Text {
			t.Fatalf("Decode(Decode(%q).Text) = %q, %v; want %q", raw, again.Text, err, m.Text)
		}
	})
}

func FuzzSenderTag(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add(s, "mama")
	}
	f.Fuzz(func(t *testing.T, line, from string) {
		got, ok := inbox.SenderTag(line)
		if ok {
			if got == "" || strings.ContainsAny(got, "[]") || utf8.RuneCountInString(got) > 80 {
				t.Fatalf("SenderTag(%q) = %q", line, got)
			}
			if inbox.Tagged(line, "other") != line {
				t.Fatalf("Tagged re-tagged a tagged line %q", line)
			}
			return
		}
		if inbox.CheckFrom(from) != nil || strings.Contains(from, inboxv1.Antenna) {
			return
		}
		tagged := inbox.Tagged(line, from)
		if got, ok := inbox.SenderTag(tagged); !ok || got != from {
			t.Fatalf("SenderTag(Tagged(%q, %q)) = %q, %v", line, from, got, ok)
		}
	})
}

var ackSeeds = []string{
	"",
	`{"ts":"2026-11-30T12:00:00Z","sha256":"ab","session_id":"s","peer_status":"busy","class":"delivered-steer","msg_id":"m","line_offset":0}` + "\n",
	`{"sha256":"x","line_offset":-1,"inode":1}` + "\n" + `{"sha256":""}` + "\n" + `{"sha256":"torn`,
	"2026-10-30T20:00:00Z read: [a 📡] hi\n{\"sha256\":1}\n[]\nnull\n\"s\"\n",
	"{\"sha256\":\"a\"}\r\n\n\n{\"sha256\":\"b\",\"line_offset\":9223372036854775807}\n",
}

// ScanAcks never panics and never loses an ack: every ack it hands over has
// a sha256 and ends at a newline after the one before, and a whole ack line
// appended after any bytes is read back as it was written.
func FuzzScanAcks(f *testing.F) {
	for _, s := range ackSeeds {
		f.Add([]byte(s), int64(0))
	}
	off := int64(7)
	last := inboxv1.Ack{TS: "t", SHA256: inbox.SHA256([]byte("x")), SessionID: "s", Class: inboxv1.AckRefused, LineOffset: &off, Reason: "nul"}
	lastLine, err := json.Marshal(last)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, start int64) {
		start &= 1<<40 - 1 // any offset a file can have
		var acks []inboxv1.Ack
		prev := start
		err := inbox.ScanAcks(bytes.NewReader(data), start, func(a inboxv1.Ack, end int64) bool {
			if a.SHA256 == "" {
				t.Fatalf("ack without sha256: %+v", a)
			}
			if end <= prev || end > start+int64(len(data)) || data[end-start-1] != '\n' {
				t.Fatalf("end %d after %d does not end a line of %q (start %d)", end, prev, data, start)
			}
			prev = end
			acks = append(acks, a)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		// Stopping after the first ack hands over exactly one.
		n := 0
		inbox.ScanAcks(bytes.NewReader(data), start, func(inboxv1.Ack, int64) bool { n++; return false })
		if want := min(len(acks), 1); n != want {
			t.Fatalf("fn returned false but was called %d times, want %d", n, want)
		}
		// A torn last line counts once the newline comes; whatever the
		// bytes, the ack after them is read.
		count := func(b []byte) (all []inboxv1.Ack) {
			inbox.ScanAcks(bytes.NewReader(b), start, func(a inboxv1.Ack, _ int64) bool {
				all = append(all, a)
				return true
			})
			return all
		}
		whole := append(append([]byte{}, data...), '\n')
		before := count(whole)
		got := count(append(append(whole, lastLine...), '\n'))
		if len(got) != len(before)+1 {
			t.Fatalf("%d acks after appending one to %d", len(got), len(before))
		}
		if diff := cmp.Diff(last, got[len(got)-1]); diff != "" {
			t.Fatalf("appended ack (-want +got):\n%s", diff)
		}
	})
}

// ReadHeartbeat never panics on whatever the file holds: it returns a
// heartbeat or a *fs.PathError, what it returns survives a write and read
// back unchanged, and CheckFreshness only calls a heartbeat fresh that is
// at most 15 s old and following.
func FuzzReadHeartbeat(f *testing.F) {
	for _, s := range []string{
		`{"pid":42,"session_id":"s","since":"2026-11-30T12:00:00Z","last_seen":"2026-11-30T12:00:10Z","delivered":1,"offset":9,"state":"following","pending_bytes":0}`,
		`{"pid":-1,"last_seen":"2026-11-30 12:00:10Z","state":"stopped"}`,
		`{"last_seen":"9999-12-31T23:59:59Z"}`, `{"pid":1e99}`, "null", "[]", "", "\xff{",
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 11, 30, 12, 0, 12, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "hb.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		h, err := inbox.ReadHeartbeat(path)
		if err != nil {
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Path != path {
				t.Fatalf("error %v is not a *fs.PathError for the file", err)
			}
			if _, fr := inbox.HeartbeatFreshness(path, now, "", nil); fr.Fresh || fr.Reason != inboxv1.ReasonHeartbeatUnreadable {
				t.Fatalf("unreadable heartbeat judged %+v", fr)
			}
			return
		}
		fr := inbox.CheckFreshness(h, now, "", func(int) bool { return true })
		if fr.Fresh && (fr.Age > inboxv1.FreshFor || fr.Age < -inboxv1.FreshFor || h.State != "" && h.State != inboxv1.StateFollowing) {
			t.Fatalf("judged fresh: %+v for %+v", fr, h)
		}
		if !fr.Fresh && fr.Reason == "" {
			t.Fatalf("not fresh without a reason: %+v", fr)
		}
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		back, err := inbox.ReadHeartbeat(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(h, back); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

// Whatever the key's throttle ledger entry holds, a decision never panics
// or fails:
// it admits the line (and runs the write once) or refuses it with a retry
// inside the interval, and right after an admission the same key is
// refused for the whole interval.
func FuzzThrottleLedger(f *testing.F) {
	for _, s := range []string{
		"", "17", "-1", " 42\n", "1796114052223\n", "9223372036854775807", "null", "{}", `{"v":1,"last":null}`, `{"v":1,"last":{"s":null}}`, `{"last":{"s":{"a":1}}}`,
		`{"last":{"s":{"a":9223372036854775807}}}`, `{"last":{"s":{"a":-9223372036854775808}}}`, `{"last":{"s":{"a":1.5}}}`, "\xff",
	} {
		f.Add([]byte(s), "s", "a")
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Add([]byte(`{"v":1,"last":{"s":{"a":`+strconv.FormatInt(now.Add(-10*time.Second).UnixMilli(), 10)+`}}}`), "s", "a")
	f.Add([]byte(strconv.FormatInt(now.Add(-10*time.Second).UnixMilli(), 10)+"\n"), "s", "a")
	f.Add([]byte(strconv.FormatInt(now.Add(10*time.Second).UnixMilli(), 10)), "s", "a")
	const interval = 30 * time.Second
	f.Fuzz(func(t *testing.T, data []byte, sid, from string) {
		th := inbox.ThrottleFor(t.TempDir(), interval, func() time.Time { return now })
		key := th.KeyFile(sid, from)
		if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, data, 0o600); err != nil {
			t.Fatal(err)
		}
		writes := 0
		write := func() error { writes++; return nil }
		adm, err := th.Do(context.Background(), sid, from, write)
		if err != nil {
			t.Fatal(err)
		}
		if adm.Admitted != (writes == 1) || writes > 1 {
			t.Fatalf("admitted %v with %d writes", adm.Admitted, writes)
		}
		if !adm.Admitted && (adm.RetryAfter <= 0 || adm.RetryAfter > interval) {
			t.Fatalf("refused with retry after %v", adm.RetryAfter)
		}
		if !adm.Admitted {
			return
		}
		again, err := th.Do(context.Background(), sid, from, write)
		if err != nil {
			t.Fatal(err)
		}
		if again.Admitted || again.RetryAfter != interval || writes != 1 {
			t.Fatalf("right after an admission: %+v with %d writes", again, writes)
		}
	})
}

// Found by FuzzThrottleLedger: a session id or sender that is not UTF-8 was
// stored in the JSON ledger as U+FFFD, so it was never found again and
// every line was admitted. (The ledger now hashes the raw bytes.)
func TestThrottleKeysNotUTF8(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct{ name, sid, from string }{
		{"session id", "\xff", "a"},
		{"sender", "s", "b\xfe\xffc"},
		{"sender with U+FFFD", "s", "\ufffd\xff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := inbox.ThrottleFor(t.TempDir(), time.Minute, func() time.Time { return now })
			var got []bool
			for range 2 {
				adm, err := th.Do(context.Background(), tt.sid, tt.from, func() error { return nil })
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, adm.Admitted)
			}
			if diff := cmp.Diff([]bool{true, false}, got); diff != "" {
				t.Errorf("admitted (-want +got):\n%s", diff)
			}
		})
	}
}
