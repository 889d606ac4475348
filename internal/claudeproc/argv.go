package claudeproc

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/station"
)

// StartArgs are the values of a start's argv.
type StartArgs struct {
	SessionID string
	Model     string
	MaxTurns  int
	Tools     string // --tools; "" allows none
	// AllowedTools is --allowedTools; nil leaves the flag out.
	AllowedTools *string
	// MCPConfig, when not "", is passed as --mcp-config; StrictMCP adds
	// --strict-mcp-config (with MCPConfig: that server alone; without: no
	// MCP server at all).
	MCPConfig string
	StrictMCP bool
	Budget    float64 // USD
	Prompt    string
}

// StartArgv returns the argv of a start, without argv[0], as
// COMPATIBILITY.md gives it ("The claude command lines"): v0.1's, with
// --output-format stream-json --verbose so every turn's result is read.
func StartArgv(s StartArgs) []string {
	a := []string{"-p", "--session-id", s.SessionID, "--output-format", "stream-json", "--verbose", "--model", s.Model,
		"--max-turns", strconv.Itoa(s.MaxTurns), "--permission-mode", "dontAsk", "--tools", s.Tools}
	if s.AllowedTools != nil {
		a = append(a, "--allowedTools", *s.AllowedTools)
	}
	if s.MCPConfig != "" {
		a = append(a, "--mcp-config", s.MCPConfig)
	}
	if s.StrictMCP {
		a = append(a, "--strict-mcp-config")
	}
	return append(a, "--max-budget-usd", formatUSD(s.Budget), s.Prompt)
}

// ResumeArgs are the values of a resume's argv.
type ResumeArgs struct {
	SessionID string
	Model     string
	MaxTurns  int
	Tools     string // --tools; "" allows none
	MCPConfig string // the injected doorman's config
	Budget    float64
}

// ResumeArgv returns the argv of a resume, without argv[0], as
// COMPATIBILITY.md gives it ("The claude command lines"): v0.1's flags,
// with the doorman injected as start injects it (--mcp-config, then
// --strict-mcp-config) so the lines waiting in the inbox reach the resumed
// process, and stream-json in and out so every turn's result is read and
// the line (when given) goes on stdin as the first user message.
func ResumeArgv(r ResumeArgs) []string {
	return []string{"-p", "--resume", r.SessionID, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--model", r.Model, "--max-turns", strconv.Itoa(r.MaxTurns), "--tools", r.Tools,
		"--permission-mode", "dontAsk", "--mcp-config", r.MCPConfig, "--strict-mcp-config",
		"--max-budget-usd", formatUSD(r.Budget)}
}

// formatUSD is a budget as --max-budget-usd takes it.
func formatUSD(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// UserMessage is the stream-json input line that carries line as a user
// message, as claude -p --input-format stream-json reads it.
func UserMessage(line string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]string{"role": "user", "content": line}})
	return append(b, '\n')
}

// MCPServerName is the name the doorman is registered (and injected) under.
const MCPServerName = "claude-inbox"

// DoormanConfig returns the MCP config start and resume inject: the doorman
// alone, run as "<self> doorman --mcp".
func DoormanConfig(self string) string {
	type server struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	b, _ := json.Marshal(struct {
		MCPServers map[string]server `json:"mcpServers"`
	}{map[string]server{MCPServerName: {Type: "stdio", Command: self, Args: []string{"doorman", "--mcp"}}}})
	return string(b)
}

// UnitName is oo-claude-<first 8 characters of the session id> (the whole
// id when it is shorter).
func UnitName(sid string) string {
	if len(sid) > 8 {
		sid = sid[:8]
	}
	return "oo-claude-" + sid
}

// PromptFile is where a detached start keeps its prompt: next to the result
// file, <result file without .json>.prompt.
func PromptFile(resultFile string) string {
	return strings.TrimSuffix(resultFile, ".json") + ".prompt"
}

// SystemdArgv returns systemd-run's argv (without argv[0]) for a detached
// start: the unit runs "<self> start --foreground-unit <result file>".
func SystemdArgv(sid string, timeout time.Duration, envFlags []string, self, resultFile string) []string {
	a := []string{"--user", "--unit", UnitName(sid), "--same-dir", "--collect", "--no-block",
		"--property=RuntimeMaxSec=" + strconv.Itoa(runtimeMaxSec(timeout))}
	a = append(a, envFlags...)
	return append(append(a, "--", self), SupervisorArgs(resultFile)...)
}

// SupervisorArgs is the argv (without argv[0], the oo-claude binary) of a
// detached start's supervisor, a unit's command or a process of its own:
// "start --foreground-unit <result file>".
func SupervisorArgs(resultFile string) []string {
	return []string{"start", "--foreground-unit", resultFile}
}

// runtimeMaxSec is the unit's hard limit: the start timeout plus 30 s, so
// the unit's own timeout stops claude and writes the result file first.
func runtimeMaxSec(timeout time.Duration) int {
	return int(math.Ceil(timeout.Seconds())) + 30
}

// ResumeLockPath is <state>/locks/resume-<sid>.lock: the one-driver lock
// that resume and start --session-id both take for the session.
func ResumeLockPath(p station.Paths, sid string) string {
	return filepath.Join(p.StateDir, "locks", "resume-"+sid+".lock")
}
