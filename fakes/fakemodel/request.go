package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Request is one recorded POST /v1/messages request, parsed. A nil
// *Request shows the model nothing: its texts are empty, Contains and
// MessagesContain false.
type Request struct {
	// Seq numbers the recorded requests from 1 in arrival order; a test
	// that wants only requests after some point filters on it.
	Seq int
	// Time is when the request arrived, from the server's clock.
	Time time.Time
	// Path is the URL path ("/v1/messages"), Query the raw query ("beta=true").
	Path, Query string
	// Header is a copy of the request headers (it carries the client's API
	// key: do not print it).
	Header http.Header

	// Model, Stream and MaxTokens are the request fields of those names.
	Model     string
	Stream    bool
	MaxTokens int
	// System is the system prompt; a plain-string system prompt becomes one
	// text block.
	System []Block
	// Messages is the conversation in order. Roles are "user", "assistant"
	// and, from Claude Code, also "system".
	Messages []Message
	// Tools are the tools offered to the model.
	Tools []ToolDef
	// Raw is the request body as received.
	Raw []byte
	// Side reports whether the side filter routed the request away from the
	// scripted conversation.
	Side bool
	// ParseErr is set when the body was not a valid Messages request; such
	// a request is answered with a 400 error.
	ParseErr error
}

// Message is one message of a request's conversation.
type Message struct {
	Role string `json:"role"`
	// Content is the message content; a plain-string content becomes one
	// text block.
	Content Blocks `json:"content"`
}

// Blocks is a list of content blocks. It unmarshals from either a JSON
// string (one text block) or an array of blocks.
type Blocks []Block

// UnmarshalJSON accepts a string or an array of blocks.
func (b *Blocks) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*b = Blocks{{Type: "text", Text: s}}
		return nil
	}
	if bytes.Equal(data, []byte("null")) {
		*b = nil
		return nil
	}
	var list []Block
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	*b = list
	return nil
}

// Block is one content block. Only the fields of its Type are set.
type Block struct {
	// Type is "text", "tool_use", "tool_result", "image", "thinking", ….
	Type string `json:"type"`
	// Text is the text of a text block.
	Text string `json:"text,omitempty"`
	// ID, Name and Input describe a tool_use block.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content and IsError describe a tool_result block.
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   Blocks `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

// ToolDef is one tool offered to the model.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// wireRequest is the subset of a Messages request body that is parsed.
type wireRequest struct {
	Model     string    `json:"model"`
	Stream    bool      `json:"stream"`
	MaxTokens int       `json:"max_tokens"`
	System    Blocks    `json:"system"`
	Messages  []Message `json:"messages"`
	Tools     []ToolDef `json:"tools"`
}

// ParseError is set as [Request.ParseErr] when a body is not a Messages
// request.
type ParseError struct {
	Err error
}

func (e *ParseError) Error() string { return "fakemodel: parse request body: " + fmt.Sprint(e.Err) }

// Unwrap returns the JSON error.
func (e *ParseError) Unwrap() error { return e.Err }

// parseBody fills the parsed fields of r from r.Raw.
func (r *Request) parseBody() {
	var w wireRequest
	if err := json.Unmarshal(r.Raw, &w); err != nil {
		r.ParseErr = &ParseError{Err: err}
		return
	}
	r.Model, r.Stream, r.MaxTokens = w.Model, w.Stream, w.MaxTokens
	r.System, r.Messages, r.Tools = w.System, w.Messages, w.Tools
}

// Text returns every piece of text the model was shown, one piece per line:
// the system prompt, then each message's text blocks, tool_use inputs (as
// JSON) and tool_result contents, in order.
func (r *Request) Text() string {
	var sb strings.Builder
	for _, b := range r.System {
		writeBlockText(&sb, b)
	}
	for _, m := range r.Messages {
		for _, b := range m.Content {
			writeBlockText(&sb, b)
		}
	}
	return sb.String()
}

func writeBlockText(sb *strings.Builder, b Block) {
	if b.Text != "" {
		sb.WriteString(b.Text)
		sb.WriteByte('\n')
	}
	if len(b.Input) > 0 {
		sb.Write(b.Input)
		sb.WriteByte('\n')
	}
	for _, c := range b.Content {
		writeBlockText(sb, c)
	}
}

// Contains reports whether text occurs in anything the model was shown (see
// [Request.Text]): system prompt, messages of every role, tool inputs and
// tool results.
func (r *Request) Contains(text string) bool {
	return strings.Contains(r.Text(), text)
}

// MessagesContain reports whether text occurs in the messages alone, leaving
// out the system prompt.
func (r *Request) MessagesContain(text string) bool {
	var sb strings.Builder
	for _, m := range r.Messages {
		for _, b := range m.Content {
			writeBlockText(&sb, b)
		}
	}
	return strings.Contains(sb.String(), text)
}

// ToolResults returns the tool_result blocks of all messages, in order.
func (r *Request) ToolResults() []Block {
	var out []Block
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out
}

// ToolNames returns the names of the offered tools, in order.
func (r *Request) ToolNames() []string {
	out := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// String summarises the request for test logs: sequence, model, counts.
// It never includes the headers (they carry the API key).
func (r *Request) String() string {
	side := ""
	if r.Side {
		side = " side"
	}
	return fmt.Sprintf("request #%d%s model=%s messages=%d tools=%d bytes=%d",
		r.Seq, side, r.Model, len(r.Messages), len(r.Tools), len(r.Raw))
}

// IsSideRequest is the default side filter: a request that offers the model
// no tools is a side request. Claude Code 2.1.332's main conversation offers
// a dozen built-in tools in a default -p session; its side requests (titles,
// summaries, classifiers) offer none. A test that runs with --tools "" or
// wants another split sets its own filter with [Options.SideFilter]. A nil
// request is not one.
func IsSideRequest(r *Request) bool { return r != nil && len(r.Tools) == 0 }

// Call is one HTTP request of any kind that reached the server.
type Call struct {
	Time   time.Time
	Method string
	// Path and Query are the request URI's.
	Path, Query string
}
