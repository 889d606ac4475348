package receipt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/receipt"
	"github.com/oo-family/oo-claude/station"
)

// v0.1's "Receipts" section, verbatim: the keys of a send row.
const sendKeysV01 = "ts, ts_ms, kind, class, delivered, target, session_id, name, pid, running, status, from, line, sha256, bytes, inbox, line_offset, doorman, ack, peer_status, msg_id, waited_s, wait_s, min_interval_s, reason, note, hint, client_version"

// oo-claude's additions to the send row (send --seen): extra keys only,
// none of v0.1's renamed or dropped.
const sendKeysOurs = "seen, seen_s, transcript, transcript_offset, reply, reply_s, priority, confirm, queued_at, wait_end, interrupted, station"

// "Resume rows add …", verbatim.
const resumeKeysV01 = "cwd, transcript, model, max_turns, budget_usd, tools, argv, exit_code, subtype, is_error, num_turns, total_cost_usd, terminal_reason, result, result_session_id, duration_ms, held_by, stderr_tail"

func split(s string) []string { return strings.Split(s, ", ") }

func keysOf(t *testing.T, row any) (keys []string, obj map[string]json.RawMessage) {
	t.Helper()
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, obj
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func TestSendRowKeysAreV01s(t *testing.T) {
	sendKeys := append(split(sendKeysV01), split(sendKeysOurs)...)
	got, obj := keysOf(t, receipt.SendRow{})
	if diff := cmp.Diff(sorted(sendKeys), got); diff != "" {
		t.Errorf("send row keys: v0.1's and oo-claude's additions (-want +got):\n%s", diff)
	}
	// Unused keys are null, not absent and not zero values.
	for _, k := range []string{"session_id", "name", "pid", "running", "line_offset", "doorman", "ack", "msg_id", "reason", "client_version", "seen", "seen_s", "transcript", "transcript_offset", "reply", "reply_s", "priority", "confirm", "queued_at", "wait_end", "interrupted"} {
		if string(obj[k]) != "null" {
			t.Errorf("%s = %s in an empty row, want null", k, obj[k])
		}
	}
	// The write error appears only when there is one.
	got, _ = keysOf(t, receipt.SendRow{ReceiptWriteError: jsonrow.Ptr("disk full")})
	if diff := cmp.Diff(sorted(append(sendKeys, "receipt_write_error")), got); diff != "" {
		t.Errorf("send row keys with a write error (-want +got):\n%s", diff)
	}
}

func TestDoormanKeys(t *testing.T) {
	got, _ := keysOf(t, receipt.Doorman{})
	want := []string{"age", "fresh", "last_error", "not_fresh_because", "pending", "pid", "state"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("doorman keys (-want +got):\n%s", diff)
	}
}

func TestResumeRowKeys(t *testing.T) {
	got, _ := keysOf(t, receipt.ResumeRow{})
	// turns is oo-claude's extension: every turn of the process.
	want := sorted(append(append(split(sendKeysV01), split(resumeKeysV01)...), "turns"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resume row keys (-want +got):\n%s", diff)
	}
}

func TestStartRowKeys(t *testing.T) {
	got, _ := keysOf(t, receipt.StartRow{})
	want := sorted(split("ts, ts_ms, kind, class, session_id, name, pid, line, sha256, bytes, reason, note, hint, client_version, " +
		"state, unit, result_file, inbox, doorman, doorman_heartbeat, doorman_delivered, parent_session, systemd, " +
		"cwd, model, max_turns, budget_usd, tools, allowed_tools, timeout_s, argv, exit_code, subtype, is_error, num_turns, " +
		"total_cost_usd, terminal_reason, result, result_session_id, duration_ms, stderr_tail, turns"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("start row keys (-want +got):\n%s", diff)
	}
}

func TestAppendStampsAndWritesOneLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	at := time.Date(2026, 11, 30, 12, 0, 0, 123e6, time.UTC)
	w := &receipt.Writer{Path: filepath.Join(dir, "receipts.jsonl"), Now: func() time.Time { return at }}
	rows := []any{
		receipt.SendRow{Class: "queued-offline", Target: "x"},
		&receipt.ResumeRow{Class: "refused"},
		receipt.StartRow{Class: "completed", TS: "2026-01-01T00:00:00.000Z", TSMS: 1},
	}
	for _, r := range rows {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	type head struct {
		TS   string `json:"ts"`
		TSMS int64  `json:"ts_ms"`
		Kind string `json:"kind"`
	}
	var got []head
	for _, l := range lines {
		var h head
		if err := json.Unmarshal([]byte(l), &h); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, h)
	}
	want := []head{
		{"2026-11-30T12:00:00.123Z", at.UnixMilli(), "send"},
		{"2026-11-30T12:00:00.123Z", at.UnixMilli(), "resume"},
		{"2026-01-01T00:00:00.000Z", 1, "start"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	for path, mode := range map[string]os.FileMode{w.Path: 0o600, dir: 0o700 | os.ModeDir} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", filepath.Base(path), fi.Mode(), mode)
		}
	}
}

func TestAppendRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "receipts.jsonl")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	err := (&receipt.Writer{Path: path}).Append(receipt.SendRow{})
	if !errors.Is(err, fsx.ErrSymlink) {
		t.Fatalf("Append through a symlink: %v, want fsx.ErrSymlink", err)
	}
	var re *fs.PathError
	if !errors.As(err, &re) || re.Op != "receipt append" || re.Path != path {
		t.Errorf("error %#v is not an *fs.PathError with op receipt append", err)
	}
	if b, _ := os.ReadFile(victim); len(b) != 0 {
		t.Errorf("written through the symlink: %q", b)
	}
}

// The Writer is handed no token and the rows have no field for one: no
// field of any type in this package is a station.Token, and a token that a
// caller smuggles in through a map is redacted by the token's own marshaler.
func TestNoToken(t *testing.T) {
	tokenType := reflect.TypeOf(station.Token(""))
	for _, v := range []any{receipt.Writer{}, receipt.SendRow{}, receipt.ResumeRow{}, receipt.StartRow{}, receipt.Doorman{}} {
		typ := reflect.TypeOf(v)
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Type == tokenType || strings.Contains(strings.ToLower(f.Name), "token") {
				t.Errorf("%s.%s can hold a token", typ.Name(), f.Name)
			}
		}
	}
	const secret = "0123456789abcdef0123456789abcdef"
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	if err := (&receipt.Writer{Path: path}).Append(map[string]any{"oops": station.Token(secret)}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte(secret)) {
		t.Errorf("the token reached the receipts file: %s", b)
	}
}

func TestAppendUnmarshalable(t *testing.T) {
	err := (&receipt.Writer{Path: filepath.Join(t.TempDir(), "r")}).Append(map[string]any{"f": func() {}})
	var re *fs.PathError
	if !errors.As(err, &re) || re.Op != "receipt marshal" {
		t.Fatalf("Append(func): %v, want an *fs.PathError with op receipt marshal", err)
	}
}

// TestAppendHostile: a Writer with a hostile path (empty, NUL, under a
// regular file, a directory, a FIFO, /dev/null) or an unmarshalable row refuses with an
// error; it never panics or blocks.
func TestAppendHostile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A directory that cannot be made (its parent is a file) stands for a
	// missing one: a missing one is made (TestAppendMakesStateDir), and
	// "/nonexistent/…" was, as root, outside the test's directories.
	for _, p := range []string{"", "a\x00b", filepath.Join(file, "oo-claude", "x"), dir, fifo, "/dev/null"} {
		for _, row := range []any{make(chan int), nil, receipt.SendRow{}} {
			err := (&receipt.Writer{Path: p}).Append(row)
			if _, isChan := row.(chan int); (isChan || p != "/dev/null") && err == nil {
				t.Errorf("Append(%q, %T) = nil, want an error", p, row)
			}
		}
	}
}

// TestAppendMakesStateDir: on a fresh machine the state dir does not exist
// yet; the first receipt makes it and its missing parents 0700 (as XDG asks
// of a state dir) and the receipts file 0600.
func TestAppendMakesStateDir(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, ".local", "state", "oo-claude", "receipts.jsonl")
	if err := (&receipt.Writer{Path: path}).Append(receipt.SendRow{}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{
		filepath.Join(root, ".local"): 0o700 | os.ModeDir, filepath.Dir(path): 0o700 | os.ModeDir, path: 0o600,
	} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v; want mode %v", p, fi.Mode(), err, want)
		}
	}
}
