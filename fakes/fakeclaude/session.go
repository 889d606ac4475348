package fakeclaude

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/fakes/fakedoor"
	"github.com/oo-family/oo-claude/fakes/internal/fakerow"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// session is what a fake claude with Script.Session holds while it runs:
// the registry row of its own pid, its door and the MCP servers it started.
type session struct {
	row     string // the registry row's path
	door    *fakedoor.Door
	servers []*exec.Cmd
	stdins  []io.WriteCloser
}

// startSession makes this process a steerable session sid, as the real
// CLI is one: the door (a fakedoor in a short temporary directory that
// writes the receiver's enqueue row of each line it queues to the
// session's transcript, <projects>/<encoded cwd>/<sid>.jsonl), the
// registry row <sessions>/<pid>.json naming it (the station's directories
// as the knobs in this environment name them), then each stdio server of
// mcpConfig (the --mcp-config value: JSON, or a file holding it) as a
// child with the session's variables (CLAUDECODE, CLAUDE_CODE_SESSION_ID,
// CLAUDE_CODE_MESSAGING_SOCKET) and its stdin held open, its output in
// <fakes dir>/mcp-<pid>.log. The doorman among them finds this process as
// its session's, as it finds the real CLI.
func startSession(sid, mcpConfig string) (*session, error) {
	cfg, err := station.ConfigFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	servers, err := mcpServers(mcpConfig)
	if err != nil {
		return nil, err
	}
	tp := filepath.Join(cfg.ProjectsDir, transcriptfile.EncodeProjectDir(cwd), sid+transcriptfile.Ext)
	d, err := fakedoor.Listen("", fakedoor.Options{SessionID: sid, Transcript: tp})
	if err != nil {
		return nil, err
	}
	s := &session{door: d}
	info, err := (station.Proc{}).Info(os.Getpid())
	if err != nil {
		s.stop()
		return nil, err
	}
	row := fakerow.Fill(station.Row{
		PID: os.Getpid(), SessionID: sid, CWD: cwd, ProcStart: info.StartTicks, MessagingSocketPath: d.Path(),
		Name: os.Getenv("CLAUDE_CODE_SESSION_NAME"),
	}, time.Now())
	if err := os.MkdirAll(cfg.SessionsDir, 0o700); err != nil {
		s.stop()
		return nil, err
	}
	if err := fakerow.Write(cfg.SessionsDir, row); err != nil {
		s.stop()
		return nil, err
	}
	s.row = fakerow.Path(cfg.SessionsDir, row.PID)
	env := append(os.Environ(), "CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID="+sid, "CLAUDE_CODE_MESSAGING_SOCKET="+d.Path())
	for _, srv := range servers {
		log, err := os.OpenFile(filepath.Join(filepath.Dir(os.Args[0]), fmt.Sprintf("mcp-%d.log", os.Getpid())), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			s.stop()
			return nil, err
		}
		cmd := exec.Command(srv.Command, srv.Args...)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, log, log
		in, err := cmd.StdinPipe()
		if err == nil {
			err = cmd.Start()
		}
		log.Close() // the child holds its own
		if err != nil {
			s.stop()
			return nil, fmt.Errorf("MCP server %s: %w", srv.Command, err)
		}
		s.servers, s.stdins = append(s.servers, cmd), append(s.stdins, in)
	}
	return s, nil
}

// stop ends the session as the real CLI's clean exit does: each MCP
// server's stdin is closed (its EOF) and the server waited for (killed
// after 10 s), then the row goes and the door closes.
func (s *session) stop() {
	for _, in := range s.stdins {
		in.Close()
	}
	for _, cmd := range s.servers {
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	if s.row != "" {
		os.Remove(s.row)
	}
	s.door.Close()
}

// mcpServer is a stdio server of an MCP config.
type mcpServer struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// mcpServers reads the stdio servers of an --mcp-config value: the JSON
// itself or a file that holds it ("" holds none).
func mcpServers(v string) ([]mcpServer, error) {
	if v == "" {
		return nil, nil
	}
	b := []byte(v)
	if !strings.HasPrefix(strings.TrimSpace(v), "{") {
		var err error
		if b, err = os.ReadFile(v); err != nil {
			return nil, err
		}
	}
	var c struct {
		MCPServers map[string]mcpServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("--mcp-config: %w", err)
	}
	var out []mcpServer
	for _, srv := range c.MCPServers {
		if srv.Type != "" && srv.Type != "stdio" {
			continue
		}
		if srv.Command == "" {
			return nil, errors.New("--mcp-config: a stdio server without a command")
		}
		out = append(out, srv)
	}
	return out, nil
}
