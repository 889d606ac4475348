package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/receipt"
)

// ResumeResult is a remote resume's outcome: its receipt row (the one the
// station appended) and its exit code (the class's, as the local resume's).
type ResumeResult struct {
	Row    receipt.ResumeRow
	Exit   int
	Stderr string
}

// Resume runs one headless turn into a session on the station that is not
// running (`oo-claude resume --json … -- SESSION -`, the line on stdin).
// The request is the local call's; Self is the station's own binary and
// is not passed, and paths (CWD) are the station's.
func (h Host) Resume(ctx context.Context, req headless.ResumeRequest) (ResumeResult, error) {
	args := []string{"resume", "--json"}
	args = strFlag(args, "--model", req.Model)
	args = strFlag(args, "--tools", req.Tools)
	args = strFlag(args, "--cwd", req.CWD)
	args = numFlags(args, req.MaxTurns, req.Budget, req.Timeout)
	args = append(args, "--", req.SessionID)
	var stdin io.Reader
	if req.Line != "" {
		args = append(args, "-")
		stdin = strings.NewReader(req.Line + "\n")
	}
	res, err := h.Run(ctx, args, stdin)
	out := ResumeResult{Exit: res.Exit, Stderr: lastLines(res.Stderr)}
	if err != nil {
		return out, err
	}
	if json.Unmarshal(lastLine(res.Stdout), &out.Row) != nil || out.Row.Class == "" {
		return out, fmt.Errorf("%s: oo-claude resume exit %d: %w: %s", h.Dest, res.Exit, ErrBadOutput, out.Stderr)
	}
	return out, nil
}

// StartResult is a remote start's outcome: the result file as the station
// wrote it, or (a detached start) what the station returned at once, and
// the exit code (the class's, as the local start's).
type StartResult struct {
	File     *headless.StartFile
	Detached *headless.Detached
	Exit     int
	Stderr   string
}

// Start starts a headless session on the station (`oo-claude start --json
// … -- -`, the prompt on stdin). The request is the local call's; Self is
// the station's own binary and is not passed; CWD and Out are the
// station's paths (an empty CWD is the station's login directory); the
// lineage parent is found on the station, where no calling session of
// this process is.
func (h Host) Start(ctx context.Context, req headless.StartRequest) (StartResult, error) {
	args := []string{"start", "--json"}
	args = strFlag(args, "--cwd", req.CWD)
	args = strFlag(args, "--model", req.Model)
	args = strFlag(args, "--tools", req.Tools)
	args = strFlag(args, "--allowed-tools", req.AllowedTools)
	args = strFlag(args, "--session-id", req.SessionID)
	args = strFlag(args, "--name", req.Name)
	args = strFlag(args, "--out", req.Out)
	args = numFlags(args, req.MaxTurns, req.Budget, req.Timeout)
	if req.Systemd {
		args = append(args, "--systemd")
	}
	switch req.Doorman {
	case headless.DoormanNone:
		args = append(args, "--no-doorman")
	case headless.DoormanUserScope:
		args = append(args, "--user-mcp")
	}
	if req.NoLineage {
		args = append(args, "--no-lineage")
	}
	args = append(args, "--", "-")
	res, err := h.Run(ctx, args, strings.NewReader(req.Prompt+"\n"))
	out := StartResult{Exit: res.Exit, Stderr: lastLines(res.Stderr)}
	if err != nil {
		return out, err
	}
	line := lastLine(res.Stdout)
	var keys map[string]json.RawMessage
	if json.Unmarshal(line, &keys) != nil {
		return out, fmt.Errorf("%s: oo-claude start exit %d: %w: %s", h.Dest, res.Exit, ErrBadOutput, out.Stderr)
	}
	if _, ok := keys["resultFile"]; ok {
		var d headless.Detached
		if json.Unmarshal(line, &d) == nil && d.State != "" {
			out.Detached = &d
			return out, nil
		}
	}
	var f headless.StartFile
	if json.Unmarshal(line, &f) != nil || f.State == "" {
		return out, fmt.Errorf("%s: oo-claude start exit %d: %w: %s", h.Dest, res.Exit, ErrBadOutput, out.Stderr)
	}
	out.File = &f
	return out, nil
}

// Lineage returns the station's current links, the parent of every child
// (`oo-claude lineage show --json`).
func (h Host) Lineage(ctx context.Context) ([]lineage.Row, error) {
	res, err := h.Run(ctx, []string{"lineage", "show", "--json"}, nil)
	if err != nil {
		return nil, err
	}
	if res.Exit != 0 {
		return nil, fmt.Errorf("%s: oo-claude lineage show exit %d: %s", h.Dest, res.Exit, lastLines(res.Stderr))
	}
	rows := []lineage.Row{}
	if json.Unmarshal(lastLine(res.Stdout), &rows) != nil {
		return nil, fmt.Errorf("%s: %w: %.200q", h.Dest, ErrBadOutput, res.Stdout)
	}
	return rows, nil
}

// Receipt returns the station's receipt row that names msgID, as the
// station wrote it (`oo-claude receipt MSG_ID --json`): after a drop
// during a send's wait, the verdict the caller did not see. A station
// that has none is an error matching [receipt.ErrNotFound].
func (h Host) Receipt(ctx context.Context, msgID string) (json.RawMessage, error) {
	res, err := h.Run(ctx, []string{"receipt", "--json", "--", msgID}, nil)
	if err != nil {
		return nil, err
	}
	line := lastLine(res.Stdout)
	if res.Exit != 0 {
		if len(line) == 0 && strings.Contains(string(res.Stderr), "no receipt") {
			return nil, fmt.Errorf("%s: %w: %s", h.Dest, receipt.ErrNotFound, lastLines(res.Stderr))
		}
		return nil, fmt.Errorf("%s: oo-claude receipt exit %d: %s", h.Dest, res.Exit, lastLines(res.Stderr))
	}
	if !json.Valid(line) || len(line) == 0 || line[0] != '{' {
		return nil, fmt.Errorf("%s: %w: %.200q", h.Dest, ErrBadOutput, res.Stdout)
	}
	return json.RawMessage(line), nil
}

func strFlag(args []string, flag, v string) []string {
	if v == "" {
		return args
	}
	return append(args, flag, v)
}

// numFlags are the headless verbs' --max-turns, --budget and --timeout,
// when set.
func numFlags(args []string, turns int, budget float64, timeout time.Duration) []string {
	if turns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(turns))
	}
	if budget > 0 {
		args = append(args, "--budget", strconv.FormatFloat(budget, 'f', -1, 64))
	}
	if timeout > 0 {
		args = append(args, "--timeout", strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64))
	}
	return args
}

// lastLine is the last non-empty line of a verb's stdout.
func lastLine(b []byte) []byte {
	s := strings.TrimRight(string(b), "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return []byte(s)
}
