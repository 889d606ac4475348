package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/fakes/fakemodel"
	"github.com/oo-family/oo-claude/fakes/fakestation"
)

// sortedKeys returns the keys of a JSON object.
func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// fakeRowKeys returns the keys of a row that fakestation writes for a
// headless session with a derived name.
func fakeRowKeys(t *testing.T) []string {
	t.Helper()
	st := fakestation.New(t)
	row := st.AddSession(fakestation.Session{})
	b, err := os.ReadFile(filepath.Join(st.Paths.SessionsDir, strconv.Itoa(row.PID)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return sortedKeys(m)
}

// busyReplies keep a session alive for about two seconds in a Bash call.
func busyReplies() []fakemodel.Reply {
	return []fakemodel.Reply{fakemodel.Bash("sleep 2"), fakemodel.Text("done")}
}

// TestRegistryRow: the row `<cfg>/sessions/<pid>.json` of a running `-p`
// session, its key file and its door, as station reads them.
func TestRegistryRow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		env            []string
		wantName       *regexp.Regexp
		wantNameSource string
	}{
		{name: "derived name", wantName: regexp.MustCompile(`^work-[0-9a-f]{2}$`), wantNameSource: "derived"},
		// Measured on 2.1.332: a name from CLAUDE_CODE_SESSION_NAME is
		// registered with no nameSource at all (the facts file says "user").
		{name: "user name", env: []string{"CLAUDE_CODE_SESSION_NAME=e2e-named"}, wantName: regexp.MustCompile(`^e2e-named$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, fakemodel.Options{Replies: busyReplies()})
			s := w.start(pargs("stay busy", "--allowedTools", "Bash"), tt.env...)
			// Read the row while the tool runs, so the status is a
			// running session's.
			s.waitModel(30*time.Second, "the first time", nil)
			row := s.waitRow(30 * time.Second)

			if row.Pid != s.pid() {
				s.errorf("row pid = %d, want claude's pid %d", row.Pid, s.pid())
			}
			if want := procStart(t, s.pid()); row.ProcStart != want {
				s.errorf("row procStart = %q, want field 22 of /proc/%d/stat %q", row.ProcStart, s.pid(), want)
			}
			if row.Cwd != w.cwd {
				s.errorf("row cwd = %q, want %q", row.Cwd, w.cwd)
			}
			if !uuidRE.MatchString(row.SessionID) {
				s.errorf("row sessionId %q is not a UUID", row.SessionID)
			}
			checks := []struct{ field, got, want string }{
				{"version", row.Version, "2.1.332"},
				{"kind", row.Kind, "interactive"},
				{"entrypoint", row.Entrypoint, "sdk-cli"},
				{"nameSource", row.NameSource, tt.wantNameSource},
			}
			for _, c := range checks {
				if c.got != c.want {
					s.errorf("row %s = %q, want %q", c.field, c.got, c.want)
				}
			}
			if !tt.wantName.MatchString(row.Name) {
				s.errorf("row name = %q, want %v", row.Name, tt.wantName)
			}
			if row.PeerProtocol != 1 {
				s.errorf("row peerProtocol = %d, want 1", row.PeerProtocol)
			}
			switch row.Status {
			case "busy", "idle", "waiting":
			default:
				s.errorf("row status = %q, want busy, idle or waiting", row.Status)
			}
			types := map[string]string{
				"pid": "number", "sessionId": "string", "cwd": "string", "startedAt": "number",
				"procStart": "string", "version": "string", "peerProtocol": "number",
				"peerFeatures": "array", "kind": "string", "entrypoint": "string", "pidDomain": "string",
				"messagingSocketPath": "string", "name": "string",
				"status": "string", "updatedAt": "number",
			}
			for k, want := range types {
				if got := jsonType(row.raw[k]); got != want {
					s.errorf("row %q is %s (%v), want %s", k, got, row.raw[k], want)
				}
			}
			if wantType := map[bool]string{true: "string", false: "null"}[tt.wantNameSource != ""]; jsonType(row.raw["nameSource"]) != wantType {
				s.errorf("row nameSource is %s (%v), want %s", jsonType(row.raw["nameSource"]), row.raw["nameSource"], wantType)
			}
			if tt.wantNameSource == "derived" {
				// The fake station other projects' tests use writes the
				// same keys as the real CLI, so the fake cannot drift.
				if diff := cmp.Diff(sortedKeys(row.raw), fakeRowKeys(t)); diff != "" {
					s.errorf("registry row keys (-real +fakestation):\n%s", diff)
				}
			}
			now := time.Now().UnixMilli()
			if row.StartedAt < now-120_000 || row.StartedAt > now+5_000 {
				s.errorf("row startedAt = %d, want milliseconds near now %d", row.StartedAt, now)
			}

			// Modes: row 0644 in a 0700 dir.
			checkMode(t, row.path, 0o644)
			checkMode(t, filepath.Dir(row.path), fs.ModeDir|0o700)

			// The door: <XDG_RUNTIME_DIR>/cc-socks/<pid>.sock, a 0600 socket
			// in a 0700 directory.
			wantSock := filepath.Join(w.runtime, "cc-socks", strconv.Itoa(s.pid())+".sock")
			if row.MessagingSocketPath != wantSock {
				s.errorf("row messagingSocketPath = %q, want %q", row.MessagingSocketPath, wantSock)
			}
			checkMode(t, row.MessagingSocketPath, fs.ModeSocket|0o600)
			checkMode(t, filepath.Dir(row.MessagingSocketPath), fs.ModeDir|0o700)

			// The key file: <pid>.<sha256 hex of the socket path>.key, 0600.
			sum := sha256.Sum256([]byte(row.MessagingSocketPath))
			keyPath := filepath.Join(filepath.Dir(row.path), fmt.Sprintf("%d.%s.key", s.pid(), hex.EncodeToString(sum[:])))
			checkMode(t, keyPath, 0o600)
			b, err := os.ReadFile(keyPath)
			if err != nil {
				s.fatalf("read key file: %v", err)
			}
			var key struct {
				PeerToken *string `json:"peerToken"` // a secret: never printed
				ProcStart string  `json:"procStart"`
				PidDomain string  `json:"pidDomain"`
			}
			if err := json.Unmarshal(b, &key); err != nil {
				s.fatalf("key file is not JSON (%d bytes): %v", len(b), err)
			}
			if key.PeerToken == nil || *key.PeerToken == "" {
				s.errorf("key file has no peerToken string")
			}
			if key.ProcStart != row.ProcStart || key.PidDomain != row.PidDomain {
				s.errorf("key procStart, pidDomain = %q, %q, want the row's %q, %q", key.ProcStart, key.PidDomain, row.ProcStart, row.PidDomain)
			}
			s.mustSucceed(60 * time.Second)
		})
	}
}

// TestRegistryCleanup: a normal exit and SIGTERM remove the row, the key
// file and the socket; SIGKILL leaves all three behind (so liveness must
// check the pid and its procStart).
func TestRegistryCleanup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		signal     syscall.Signal // 0: let it finish
		wantRemain bool
	}{
		{name: "exit"},
		{name: "SIGTERM", signal: syscall.SIGTERM},
		{name: "SIGKILL", signal: syscall.SIGKILL, wantRemain: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, fakemodel.Options{Replies: busyReplies()})
			s := w.start(pargs("stay busy", "--allowedTools", "Bash"))
			s.waitModel(30*time.Second, "the first time", nil)
			row := s.waitRow(30 * time.Second)
			sum := sha256.Sum256([]byte(row.MessagingSocketPath))
			paths := []string{
				row.path,
				filepath.Join(filepath.Dir(row.path), fmt.Sprintf("%d.%s.key", row.Pid, hex.EncodeToString(sum[:]))),
				row.MessagingSocketPath,
			}
			for _, p := range paths {
				if _, err := os.Lstat(p); err != nil {
					s.fatalf("before the stop: %v", err)
				}
			}
			if tt.signal != 0 {
				// Signal claude alone, as a process manager would.
				if err := syscall.Kill(s.pid(), tt.signal); err != nil {
					t.Fatal(err)
				}
			}
			_ = s.wait(60 * time.Second)
			for _, p := range paths {
				_, err := os.Lstat(p)
				switch {
				case tt.wantRemain && err != nil:
					s.errorf("after %s, %s is gone (%v); the facts say it stays", tt.name, filepath.Base(p), err)
				case !tt.wantRemain && !errors.Is(err, fs.ErrNotExist):
					s.errorf("after %s, %s remains (err %v); the facts say it is removed", tt.name, filepath.Base(p), err)
				}
			}
		})
	}
}

// checkMode fails unless path (not followed) has exactly mode (type and
// permission bits).
func checkMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Errorf("stat %s: %v", path, err)
		return
	}
	if got := fi.Mode() & (fs.ModeType | fs.ModePerm); got != want {
		t.Errorf("mode of %s = %v, want %v", path, got, want)
	}
}
