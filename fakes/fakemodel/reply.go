package fakemodel

import (
	"net/http"
	"time"
)

// Reply is what the fake model answers to one request.
type Reply struct {
	// Text is the assistant's text block. With a ToolUse it comes before
	// the tool_use block; empty means no text block (unless there is no
	// ToolUse either, then one empty text block is sent). For an error
	// reply it is the error message.
	Text string
	// ToolUse, when set, adds a tool_use block: the client runs the tool and
	// sends the result in its next request.
	ToolUse *ToolUse
	// Delay holds the reply back before its first byte. Close or the client
	// hanging up cuts it short.
	Delay time.Duration
	// Status, when 400 or more, answers with that HTTP status and an
	// Anthropic-style error body ({"type":"error","error":{"type":…,
	// "message": Text}}). Claude Code retries failed requests with backoff;
	// with CLAUDE_CODE_MAX_RETRIES=0 a 529 ends the turn at once (result
	// is_error, terminal_reason "api_error"), but a 400 is still retried
	// once (as Claude Code 2.1.332 does), taking the next reply.
	Status int
	// StopReason overrides the stop_reason: by default "tool_use" with a
	// ToolUse, else "end_turn". "max_tokens" and "refusal" are other real
	// values.
	StopReason string
}

// ToolUse is a tool call the fake model makes.
type ToolUse struct {
	// Name is the tool's name as offered in the request ("Bash", "Read",
	// "mcp__<server>__<tool>", …).
	Name string
	// Input is marshalled to JSON as the tool's input; nil sends {}.
	Input any
	// ID is the tool_use id; empty gets a unique "toolu_fake_…" id.
	ID string
}

// IsZero reports whether r is the zero Reply, which a handler returns to
// pass a request on to the queue.
func (r Reply) IsZero() bool {
	return r.Text == "" && r.ToolUse == nil && r.Delay == 0 && r.Status == 0 && r.StopReason == ""
}

// Text returns a Reply with one text block and stop_reason "end_turn".
func Text(s string) Reply { return Reply{Text: s} }

// Tool returns a Reply that calls the named tool with input.
func Tool(name string, input any) Reply {
	return Reply{ToolUse: &ToolUse{Name: name, Input: input}}
}

// Bash returns a Reply that calls Claude Code's Bash tool with command.
// The CLI runs it only when allowed (--allowedTools Bash, or the
// bypassPermissions mode). Claude Code refuses a standalone long sleep
// ("sleep 45"); short sleeps ("sleep 2") and "sleep 2; echo x" run.
func Bash(command string) Reply {
	return Tool("Bash", map[string]any{"command": command})
}

// Error returns an error Reply with the HTTP status and message.
func Error(status int, message string) Reply {
	return Reply{Status: status, Text: message}
}

// errorType maps an HTTP status to the Anthropic error type name.
func errorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}
