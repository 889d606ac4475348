// Package fakemodel is a fake Anthropic Messages API server for tests that
// drive a real Claude Code CLI (or any Messages API client) offline.
//
// Like [net/http/httptest.Server] it is a real HTTP server on 127.0.0.1 with
// a kernel-chosen port. Point the client at it with
//
//	ANTHROPIC_BASE_URL=<srv.URL> ANTHROPIC_API_KEY=sk-ant-test
//
// and script what "the model" answers, one [Reply] per request.
//
// # What it serves
//
//   - POST /v1/messages (any query, e.g. ?beta=true): the scripted [Reply],
//     as server-sent events when the request says "stream": true (the CLI
//     always does: message_start, content_block_start, content_block_delta
//     with text_delta or input_json_delta, content_block_stop, message_delta
//     with stop_reason and usage, message_stop), else as one JSON message.
//     A Reply with a Status of 400 or more is sent as an Anthropic-style
//     error body instead.
//   - POST /v1/messages/count_tokens: {"input_tokens": N}, N estimated from
//     the body size.
//   - GET and HEAD of any path (Claude Code probes /api/hello at start when
//     non-essential traffic is allowed): 200 with {}.
//   - Any other request: 200 with {}. Every HTTP request, of any kind, is
//     listed by [Server.Calls], so a test can see what else a client calls.
//
// # Which reply a request gets
//
// Every POST /v1/messages is parsed into a [Request] and recorded. Then:
//
//  1. A side request — one the side filter matches, by default
//     [IsSideRequest]: a request that offers the model no tools — gets the
//     side reply ([Options.SideReply], default Text("ok")). Claude Code sends
//     such requests besides the conversation (titles, summaries, classifier
//     checks); routing them away keeps them from eating the script. Side
//     requests are recorded with Side set.
//  2. Otherwise the handler ([Options.Handler]) is asked; a non-zero Reply is
//     sent.
//  3. Otherwise the next queued reply ([Options.Replies], [Server.Enqueue]) is
//     taken off the queue.
//  4. Otherwise the default reply ([Options.DefaultReply], default
//     Text("ok")) is sent, so an unscripted conversation ends with
//     end_turn instead of hanging.
//
// A Reply carrying a [ToolUse] makes the client run that tool (with
// stop_reason "tool_use"); Claude Code then sends the next request with the
// tool_result, which takes the next reply. [Bash] and [Text] build the
// common replies.
//
// # Observing what the model was shown
//
// [Server.Requests] returns every recorded request; [Server.WaitRequest]
// blocks until a recorded request (past or future) matches a predicate, woken
// by each new request rather than by polling. [Request.Contains] searches all
// text the model was shown: system prompt blocks, messages of every role
// (Claude Code sends role "system" messages too), tool_use inputs and
// tool_result contents.
//
// Close stops the server and waits for in-flight handlers; a Reply's Delay
// is cut short by Close or by the client hanging up.
package fakemodel
