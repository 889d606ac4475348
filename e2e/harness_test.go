package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakemodel"
)

// claudeEnv names the pinned Claude Code binary.
const claudeEnv = "OO_CLAUDE_E2E_CLAUDE"

// testModel is the model name the sessions ask for; the fake serves any.
const testModel = "claude-haiku-5-5"

// claudeBinary returns the binary under test or skips the test.
func claudeBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(claudeEnv)
	if bin == "" {
		t.Skip("set OO_CLAUDE_E2E_CLAUDE: run scripts/test.sh or export OO_CLAUDE_E2E_CLAUDE=$(scripts/install-claude-code.sh)")
	}
	return bin
}

// world is one test's private machine: a short temp root holding HOME,
// CLAUDE_CONFIG_DIR, XDG_RUNTIME_DIR (so the door's path stays far below the
// 103-byte limit), TMPDIR and a working directory, plus a fake model.
type world struct {
	t       *testing.T
	claude  string
	root    string
	home    string
	config  string
	runtime string
	tmp     string
	cwd     string
	model   *fakemodel.Server
	// extraEnv is added to every claude command's environment.
	extraEnv []string
	// doormanKnobs are added to the knobs the injected doorman runs with.
	doormanKnobs map[string]string
}

// newWorld builds a world; o configures its fake model (its Logf is t.Logf
// unless set). Everything is
// removed and stopped at the end of the test.
func newWorld(t *testing.T, o fakemodel.Options) *world {
	t.Helper()
	bin := claudeBinary(t)
	// t.TempDir's names carry the test name and are long; the door's
	// path must stay short, so the root is made directly under TMPDIR.
	root, err := os.MkdirTemp("", "e2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	root, err = filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{
		t: t, claude: bin, root: root,
		home:    filepath.Join(root, "h"),
		config:  filepath.Join(root, "c"),
		runtime: filepath.Join(root, "r"),
		tmp:     filepath.Join(root, "t"),
		cwd:     filepath.Join(root, "work"),
	}
	for _, d := range []string{w.home, w.config, w.runtime, w.tmp, w.cwd} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if o.Logf == nil {
		o.Logf = t.Logf
	}
	w.model = fakemodel.NewServer(o)
	t.Cleanup(w.model.Close)
	return w
}

// env is the complete environment of a claude command: nothing is
// inherited but PATH, so a suite run from inside a Claude Code session
// (CLAUDECODE, CLAUDE_CODE_SESSION_ID, …) or with real credentials cannot
// leak into the sessions under test.
func (w *world) env(extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + w.home,
		"USER=" + os.Getenv("USER"),
		"LANG=C.UTF-8",
		"TMPDIR=" + w.tmp,
		"XDG_RUNTIME_DIR=" + w.runtime,
		"CLAUDE_CONFIG_DIR=" + w.config,
		"ANTHROPIC_BASE_URL=" + w.model.URL,
		"ANTHROPIC_API_KEY=sk-ant-test",
		// Offline: no telemetry, error reports, update checks or other
		// calls besides the Messages API; and an error reply ends a turn
		// instead of being retried with backoff.
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
		// Anything that still tries the network through a proxy-aware
		// client lands on the fake model, which records it.
		"HTTPS_PROXY=" + w.model.URL,
		"HTTP_PROXY=" + w.model.URL,
		"NO_PROXY=127.0.0.1,localhost",
	}
	env = append(env, w.extraEnv...)
	return append(env, extra...)
}

// mcpProbe writes an MCP config that runs this test binary as the probe
// server named "probe", recording into the returned probe.
func (w *world) mcpProbe(name string, control bool) (configPath string, p *probe) {
	w.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		w.t.Fatal(err)
	}
	p = &probe{t: w.t, out: filepath.Join(w.root, name+".events")}
	env := map[string]string{probeModeEnv: "mcp", probeOutEnv: p.out}
	if control {
		p.ctl = filepath.Join(w.root, name+".ctl")
		env[probeCtlEnv] = p.ctl
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		name: map[string]any{"type": "stdio", "command": exe, "args": []string{}, "env": env},
	}}
	b, err := json.Marshal(cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	configPath = filepath.Join(w.root, name+".mcp.json")
	if err := os.WriteFile(configPath, b, 0o600); err != nil {
		w.t.Fatal(err)
	}
	return configPath, p
}

// session is one running claude command.
type session struct {
	w      *world
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
	err    error // the Wait error, set before done closes
}

// start runs claude with args and the world's environment (plus env) in
// the world's cwd. The process is killed at the end of the test if still
// running.
func (w *world) start(args []string, env ...string) *session {
	w.t.Helper()
	return w.startIn(w.cwd, args, env...)
}

func (w *world) startIn(dir string, args []string, env ...string) *session {
	w.t.Helper()
	cmd := exec.Command(w.claude, args...)
	cmd.Dir = dir
	cmd.Env = w.env(env...)
	s := &session{w: w, cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.stdout, s.stderr
	// Its own process group, so cleanup reaches the tools it runs too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.t.Fatalf("start claude: %v", err)
	}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	w.t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
	})
	return s
}

// pargs returns the usual headless arguments for prompt.
func pargs(prompt string, more ...string) []string {
	return append([]string{"-p", prompt, "--output-format", "json", "--model", testModel}, more...)
}

// pid returns the claude process id.
func (s *session) pid() int { return s.cmd.Process.Pid }

// wait waits up to timeout for claude to exit and returns its Wait error.
func (s *session) wait(timeout time.Duration) error {
	s.w.t.Helper()
	select {
	case <-s.done:
		return s.err
	case <-time.After(timeout):
		s.fatalf("claude did not exit within %v", timeout)
		return nil
	}
}

// exited reports whether claude has exited.
func (s *session) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// mustSucceed waits for a zero exit and returns the result JSON.
func (s *session) mustSucceed(timeout time.Duration) map[string]any {
	s.w.t.Helper()
	if err := s.wait(timeout); err != nil {
		s.fatalf("claude failed: %v", err)
	}
	return s.result()
}

// result parses the result JSON printed on stdout.
func (s *session) result() map[string]any {
	s.w.t.Helper()
	var res map[string]any
	out := bytes.TrimSpace(s.stdout.Bytes())
	if err := json.Unmarshal(out, &res); err != nil {
		s.fatalf("stdout is not one JSON object: %v\nstdout: %s", err, tail(string(out), 2000))
	}
	return res
}

// fatalf fails the test with the CLI's stderr tail and the model's request
// count attached.
func (s *session) fatalf(format string, args ...any) {
	s.w.t.Helper()
	s.w.t.Fatalf("%s\n%s", fmt.Sprintf(format, args...), s.diag())
}

// errorf is fatalf without stopping the test.
func (s *session) errorf(format string, args ...any) {
	s.w.t.Helper()
	s.w.t.Errorf("%s\n%s", fmt.Sprintf(format, args...), s.diag())
}

func (s *session) diag() string {
	exit := "running"
	if s.exited() {
		exit = fmt.Sprintf("exited: %v", s.err)
	}
	return fmt.Sprintf("claude pid %d (%s); fake model saw %d messages requests\nstderr tail:\n%s",
		s.pid(), exit, s.w.model.Len(), tail(s.stderr.String(), 2000))
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// syncBuffer is a bytes.Buffer safe for a writer and readers at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

func (b *syncBuffer) String() string { return string(b.Bytes()) }

// eventually polls cond every 20 ms until it returns true, an error, or
// ctx ends. Files written by another process give no event to wait on
// portably, so tests poll them, briefly and bounded.
func eventually(ctx context.Context, cond func() (bool, error)) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// registryRow is a session's row as this suite reads it: typed fields for
// what the project relies on, and the raw map for type checks.
type registryRow struct {
	Pid                 int      `json:"pid"`
	SessionID           string   `json:"sessionId"`
	Cwd                 string   `json:"cwd"`
	StartedAt           int64    `json:"startedAt"`
	ProcStart           string   `json:"procStart"`
	Version             string   `json:"version"`
	PeerProtocol        int      `json:"peerProtocol"`
	Kind                string   `json:"kind"`
	Entrypoint          string   `json:"entrypoint"`
	PidDomain           string   `json:"pidDomain"`
	MessagingSocketPath string   `json:"messagingSocketPath"`
	Name                string   `json:"name"`
	NameSource          string   `json:"nameSource"`
	Status              string   `json:"status"`
	UpdatedAt           int64    `json:"updatedAt"`
	PeerFeatures        []string `json:"peerFeatures"`

	raw  map[string]any
	path string
}

// rowPath is where claude pid's registry row lives.
func (w *world) rowPath(pid int) string {
	return filepath.Join(w.config, "sessions", strconv.Itoa(pid)+".json")
}

// waitRow waits until the session's registry row exists and parses.
func (s *session) waitRow(timeout time.Duration) registryRow {
	s.w.t.Helper()
	path := s.w.rowPath(s.pid())
	row, err := waitRegistryRow(path, timeout, s.exited)
	if err != nil {
		s.fatalf("registry row %s: %v", path, err)
	}
	return row
}

// waitRegistryRow waits until the registry row at path exists and parses,
// giving up when exited reports the process gone.
func waitRegistryRow(path string, timeout time.Duration, exited func() bool) (registryRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var row registryRow
	err := eventually(ctx, func() (bool, error) {
		if exited() {
			return false, errors.New("claude exited before its registry row was seen")
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		row = registryRow{path: path}
		if json.Unmarshal(b, &row) != nil || json.Unmarshal(b, &row.raw) != nil {
			return false, nil // caught mid-write: try again
		}
		return true, nil
	})
	return row, err
}

// waitModel waits for a messages request matching match. It gives up early
// when claude has exited without such a request, so a broken delivery fails
// in seconds rather than at the timeout.
func (s *session) waitModel(timeout time.Duration, what string, match func(*fakemodel.Request) bool) *fakemodel.Request {
	s.w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	r, err := s.w.model.WaitRequest(ctx, match)
	if err == nil {
		return r
	}
	if s.exited() {
		// The last requests may have been recorded as claude exited.
		reqs := s.w.model.Requests()
		for i := range reqs {
			if match == nil || match(&reqs[i]) {
				return &reqs[i]
			}
		}
		s.fatalf("claude exited before the model was asked %s", what)
	}
	s.fatalf("waiting for the model to be asked %s: %v", what, err)
	return nil
}

// transcriptPath is where the session's transcript lives for a cwd that
// was realpath'd already.
func (w *world) transcriptPath(cwd, sessionID string) string {
	return filepath.Join(w.config, "projects", encodeCwd(cwd), sessionID+".jsonl")
}

// readJSONL parses every line of a JSON lines file.
func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("open transcript: %v", err)
	}
	return decodeLines[map[string]any](t, path)
}

// procStart returns field 22 of /proc/<pid>/stat.
func procStart(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("read stat of %d: %v", pid, err)
	}
	// The command name (field 2) may hold spaces and parentheses: split
	// after its last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		t.Fatalf("unexpected /proc/%d/stat: %q", pid, s)
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		t.Fatalf("short /proc/%d/stat: %q", pid, s)
	}
	return fields[19]
}

// encodeCwd is the transcript directory name of a cwd, as the facts file
// states it: every UTF-16 code unit outside [a-zA-Z0-9] becomes '-'; a
// result longer than 200 keeps its first 200 + '-' + base36(abs(hash)).
func encodeCwd(cwd string) string {
	units := utf16Units(cwd)
	out := make([]byte, len(units))
	for i, u := range units {
		switch {
		case u >= 'a' && u <= 'z', u >= 'A' && u <= 'Z', u >= '0' && u <= '9':
			out[i] = byte(u)
		default:
			out[i] = '-'
		}
	}
	if len(out) <= 200 {
		return string(out)
	}
	var h int32
	for _, u := range units {
		h = (h << 5) - h + int32(u)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return string(out[:200]) + "-" + strconv.FormatInt(abs, 36)
}

func utf16Units(s string) []uint16 {
	var units []uint16
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			units = append(units, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
			continue
		}
		units = append(units, uint16(r))
	}
	return units
}

// probe reads what a probe MCP server recorded.
type probe struct {
	t   *testing.T
	out string // events file
	ctl string // control socket, if any
}

// events returns the events recorded so far.
func (p *probe) events() []probeEvent {
	p.t.Helper()
	return decodeLines[probeEvent](p.t, p.out)
}

// decodeLines decodes every non-blank, newline-ended line of path (a file
// that may not exist yet: nil) into a T; a line that does not decode fails
// the test. An unended last line is one still being written: not yet read.
func decodeLines[T any](t *testing.T, path string) []T {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	// A row is there once its newline is: the files read here are written
	// while they are read (a transcript by Claude Code, an ack by the
	// doorman), and a read can catch the last row half written.
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	var out []T
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("%s: line %q: %v", path, line, err)
		}
		out = append(out, v)
	}
	return out
}

// waitEvent waits until an event matching match is recorded.
func (p *probe) waitEvent(timeout time.Duration, match func(probeEvent) bool) (probeEvent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var found probeEvent
	err := eventually(ctx, func() (bool, error) {
		for _, ev := range p.events() {
			if match(ev) {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	return found, err
}

// send asks the probe to write lines to its session's door.
func (p *probe) send(auth bool, lines ...string) error {
	b, err := json.Marshal(probeSend{Auth: auth, Lines: lines})
	if err != nil {
		return err
	}
	c, err := dialUnix(p.ctl)
	if err != nil {
		return fmt.Errorf("dial probe control: %w", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(b); err != nil {
		return err
	}
	_ = c.CloseWrite()
	answer, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("probe control answer: %w", err)
	}
	if strings.TrimSpace(answer) != "ok" {
		return fmt.Errorf("probe: %s", strings.TrimSpace(answer))
	}
	return nil
}

// sampleCount is how many samples a measuring test takes: the count in the
// environment variable env, else def. A value that is not a count ≥ 1
// fails the test.
func sampleCount(t *testing.T, env string, def int) int {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a count ≥ 1", env, v)
	}
	return n
}

// TestDecodeLinesWaitsForTheNewline: a row caught half written (the CI
// failure of TestTopSteersARealSession and TestReplyLatency, reading the
// assistant row Claude Code was writing) is not read yet, not a failure.
func TestDecodeLinesWaitsForTheNewline(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rows.jsonl")
	for _, c := range []struct {
		text string
		want int
	}{
		{``, 0},
		{`{"a":1`, 0},
		{"{\"a\":1}\n{\"b\":", 1},
		{"{\"a\":1}\n\n{\"b\":2}\n", 2},
	} {
		if err := os.WriteFile(p, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := decodeLines[map[string]any](t, p); len(got) != c.want {
			t.Errorf("%q: %d rows, want %d", c.text, len(got), c.want)
		}
	}
}
