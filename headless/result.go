package headless

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/oo-family/oo-claude/internal/jsonrow"
	"github.com/oo-family/oo-claude/receipt"
)

// ClaudeResult is the result object claude -p --output-format json prints.
// Fields of an unexpected JSON type are left at their zero value.
type ClaudeResult struct {
	Type           string          `json:"type"`
	Subtype        string          `json:"subtype"`
	IsError        bool            `json:"is_error"`
	Result         *string         `json:"result"`
	SessionID      string          `json:"session_id"`
	NumTurns       int             `json:"num_turns"`
	TotalCostUSD   float64         `json:"total_cost_usd"`
	DurationMS     int64           `json:"duration_ms"`
	StopReason     string          `json:"stop_reason"`
	TerminalReason string          `json:"terminal_reason"`
	Errors         json.RawMessage `json:"errors,omitempty"`
	Origin         json.RawMessage `json:"origin,omitempty"`
	// ResultIndex is the turn's index in the process (stream-json and
	// json both print it); nil when absent.
	ResultIndex *int `json:"result_index,omitempty"`
}

// parseResult finds the result object in claude's stdout: the whole output
// when it is one JSON object, else the last line that is a JSON object with
// "type": "result" (or, failing that, with a session_id). ok is false when
// there is none.
func parseResult(stdout []byte) (r ClaudeResult, ok bool) {
	if r, ok := parseObject(bytes.TrimSpace(stdout)); ok {
		return r, true
	}
	lines := bytes.Split(stdout, []byte("\n"))
	var fallback *ClaudeResult
	for i := len(lines) - 1; i >= 0; i-- {
		r, ok := parseObject(bytes.TrimSpace(lines[i]))
		if !ok {
			continue
		}
		if r.Type == "result" {
			return r, true
		}
		if fallback == nil {
			fallback = &r
		}
	}
	if fallback != nil {
		return *fallback, true
	}
	return ClaudeResult{}, false
}

// parseObject decodes one object field by field, so one field of an
// unexpected type does not lose the others.
func parseObject(b []byte) (ClaudeResult, bool) {
	if len(b) == 0 || b[0] != '{' {
		return ClaudeResult{}, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return ClaudeResult{}, false
	}
	var r ClaudeResult
	get := func(k string, dst any) { _ = json.Unmarshal(m[k], dst) }
	get("type", &r.Type)
	get("subtype", &r.Subtype)
	get("is_error", &r.IsError)
	get("result", &r.Result)
	get("session_id", &r.SessionID)
	get("num_turns", &r.NumTurns)
	get("total_cost_usd", &r.TotalCostUSD)
	get("duration_ms", &r.DurationMS)
	get("stop_reason", &r.StopReason)
	get("terminal_reason", &r.TerminalReason)
	get("result_index", &r.ResultIndex)
	if v, ok := m["errors"]; ok && string(v) != "null" {
		r.Errors = v
	}
	if v, ok := m["origin"]; ok && string(v) != "null" {
		r.Origin = v
	}
	if r.Type != "result" && r.SessionID == "" {
		return ClaudeResult{}, false
	}
	return r, true
}

// parseTurns reads every result event of claude's --output-format
// stream-json output, in order: one [receipt.Turn] per turn. A turn's cost is
// the growth of total_cost_usd since the turn before, the first turn's
// since base: what the session had cost before the process began (0 for a
// new session; a resumed session's total_cost_usd counts its earlier
// processes too, measured). A turn whose result carries a peer origin was
// started by that line. Lines that are not result objects are skipped; nil
// when there is none.
func parseTurns(stdout []byte, base float64) []receipt.Turn {
	var turns []receipt.Turn
	prev := 0.0
	if base > 0 && !math.IsInf(base, 1) { // NaN is not > 0
		prev = base
	}
	for len(stdout) > 0 {
		var line []byte
		line, stdout, _ = bytes.Cut(stdout, []byte("\n"))
		cr, ok := parseObject(bytes.TrimSpace(line))
		if !ok || cr.Type != "result" {
			continue
		}
		t := receipt.Turn{
			Index: len(turns), StartedBy: receipt.TurnByPrompt,
			Subtype: cr.Subtype, IsError: cr.IsError, Result: cr.Result, NumTurns: cr.NumTurns,
			CostUSD: max(cr.TotalCostUSD-prev, 0), TotalCostUSD: cr.TotalCostUSD, DurationMS: cr.DurationMS,
		}
		if cr.ResultIndex != nil && *cr.ResultIndex >= 0 {
			t.Index = *cr.ResultIndex
		}
		prev = max(prev, cr.TotalCostUSD)
		if cr.TerminalReason != "" {
			t.TerminalReason = jsonrow.Ptr(cr.TerminalReason)
		}
		var o struct {
			Kind  string `json:"kind"`
			From  string `json:"from"`
			MsgID string `json:"msg_id"`
		}
		if len(cr.Origin) > 0 && json.Unmarshal(cr.Origin, &o) == nil && o.Kind == "peer" {
			t.StartedBy = receipt.TurnByPeer
			if o.MsgID != "" {
				t.MsgID = jsonrow.Ptr(o.MsgID)
			}
			if o.From != "" {
				t.From = jsonrow.Ptr(o.From)
			}
		}
		turns = append(turns, t)
	}
	return turns
}

// tailLines returns the last n lines of b (at most max bytes, valid UTF-8),
// for the stderr tail a result keeps.
func tailLines(b []byte, n, max int) string {
	s := strings.TrimRight(string(b), "\n")
	if len(s) > max {
		s = s[len(s)-max:]
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.ToValidUTF8(strings.Join(lines, "\n"), "\uFFFD")
}

// report is what one claude run reported, as the receipts and the result
// file keep it: the exit code (nil when claude did not exit on its own),
// the stderr tail, the wall time, and the result's fields when stdout held
// one (its own duration_ms wins over the wall time).
func report(exitCode *int, stderrTail string, wall time.Duration, cr ClaudeResult, parsed bool, turns []receipt.Turn) receipt.Run {
	if turns == nil {
		turns = []receipt.Turn{}
	}
	r := receipt.Run{ExitCode: exitCode, StderrTail: jsonrow.Ptr(stderrTail), DurationMS: jsonrow.Ptr(wall.Milliseconds()), Turns: turns}
	if !parsed {
		return r
	}
	r.Subtype, r.IsError, r.NumTurns = jsonrow.Ptr(cr.Subtype), jsonrow.Ptr(cr.IsError), jsonrow.Ptr(cr.NumTurns)
	r.TotalCostUSD, r.Result, r.ResultSessionID = jsonrow.Ptr(cr.TotalCostUSD), cr.Result, jsonrow.Ptr(cr.SessionID)
	if cr.TerminalReason != "" {
		r.TerminalReason = jsonrow.Ptr(cr.TerminalReason)
	}
	if cr.DurationMS > 0 {
		r.DurationMS = jsonrow.Ptr(cr.DurationMS)
	}
	return r
}
