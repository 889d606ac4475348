// Package doorman is the receiver of a Claude Code session's inbox: the
// process the session itself spawns (its MCP stdio server) that follows the
// session's inbox file and carries each line through the session's own
// messaging socket ("the door"), then acks it.
//
// It guarantees:
//
//   - Identity before any write. The doorman finds the owner (the nearest
//     ancestor with a live registry row or a claude executable), the session
//     id (the owner's row, else CLAUDE_CODE_SESSION_ID; an explicit session
//     must equal the row's and is never trusted without one), the socket
//     (the row's, else CLAUDE_CODE_MESSAGING_SOCKET only when the owner
//     itself serves it) and, in MCP mode, that the owner is the direct
//     parent. Each failure is a [inboxv1.State] (StateNotDescendant, StateNoDoor,
//     ...). A doorman that never established its identity writes nothing
//     at all into the inbox directory: it reports its state in its log,
//     through the MCP tool claude_inbox_status and in [Doorman.Status].
//   - Every delivery checks with SO_PEERCRED that the listener is the owner;
//     on a mismatch nothing is written and the line stays pending.
//   - One deliverer per inbox (flock on <inbox>.doorman.lock); a second
//     doorman waits in standby and takes over when the first stops. Only
//     the lock holder writes the heartbeat, acks and offset.
//   - An ack rests on the receiver's own record. Before each door write
//     the doorman marks the end of the session's transcript and records
//     the attempt (<inbox>.doorman.attempt, read once, then known: the
//     lock holder is its only writer; not fsynced: it outlives a killed
//     doorman, and a machine crash ends the receiver too); after it, it
//     follows the transcript (transcript.Follow) for the queue-operation
//     enqueue row whose content is the delivered text, up to
//     Config.DoorConfirm. Seen:
//     the ack says confirm "transcript" and queued_at. Not seen: no ack, the
//     line stays pending (last_error receiver-did-not-queue) and is written
//     again only after the bound and the receiver's windows have passed
//     since the last write and a fresh look for a late row of any earlier
//     write, at most three times; once the windows have passed after
//     the last write, it is acked refused. A write whose fate is unknown (a
//     doorman killed before the write returned or in its wait, a write
//     that failed part way) is waited out as an unconfirmed one at its
//     time, but only a write that returned unconfirmed counts toward the
//     limit; a write that cannot be recorded is not made
//     (attempt-unwritable). A line refused after the limit that the
//     receiver held and approves later still reaches the session: a known
//     gap (the ack's past rows are never rewritten). Where no transcript
//     can be located it settles and acks confirm "settle".
//   - Nothing doubled, nothing lost: deliver, append the ack (one O_APPEND
//     write), then replace the offset atomically. A truncated, rewritten or
//     replaced inbox starts a new generation (the acks' and the attempt's
//     gen, recorded before the offset moves): it is followed from 0 and
//     only its own acks, attempt and offset count for its lines. A restart
//     verifies the offset against the last ack of the generation (an offset
//     beyond the file, not ending an acked line, or of a file modified
//     since without growing past it starts a new generation), skips lines
//     already acked for the same inode, generation and offset, and acks a
//     recorded write of the generation whose enqueue row came instead of
//     writing the line again. An ack that cannot be written
//     is retried as an ack; a token the door cannot carry leaves the line
//     pending (bad-token). The pacer is seeded from the recent acks, and the
//     ack file is read in bounded memory. An undeliverable line
//     (invalid UTF-8, over 16 KiB, NUL, empty, longer than the 1 MiB read
//     chunk) is acked refused exactly once and never blocks later lines.
//   - The file is followed by file events (inotify on the inbox file's
//     inode, not its directory, so the doorman's own writes beside it
//     wake nothing) plus a slow safety poll (Config.DoormanPoll). The
//     identity is worked out again on change, not on a timer: the owner's
//     registry files are watched, the exits of the owner and of every
//     process between it and the doorman are events (pidfd), and before
//     each line two lstats tell
//     whether the row or key file changed; the listener is still checked
//     on every dial. The heartbeat is written when what it says changes
//     and once a Config.DoormanHeartbeat (5 s), without fsync; when the
//     poll's interval is the heartbeat's, the poll rides on the heartbeat's
//     wake-up: an idle doorman wakes once an interval. (Without those
//     events, on another procfs root or without pidfds, the identity is
//     re-checked every 2 s and before each line.) Truncation (or a change that does not
//     grow the file) restarts from 0; a replaced file is drained, then
//     followed from 0; each is a new generation.
//   - Pacing: lines are held back to stay inside the receiver's ingress
//     guard (its duplicate window and per-sender token bucket, as
//     COMPATIBILITY.md gives them under "Where 2.1.332 differs from what
//     v0.1 measured"; the model is the one fakes/fakedoor's guard drops
//     by). A held line's ack carries paced_ms and the heartbeat carries
//     pacing. The receiver's queue limit cannot be observed from outside
//     and is not modelled.
//   - A failed delivery (a refused dial, a failed write, a refusal within the
//     settle) leaves the line pending with the failure in last_error and
//     is retried after 1, 2, 4, 8 and then every 10 s; with Once, [Doorman.Run]
//     returns a [*DeliveryError] instead.
//   - Trust by ownership: before it follows, the inbox must be the user's
//     alone (its directory the user's and not writable by group or others;
//     the inbox, ack, offset, lock and attempt files the user's regular
//     files, not writable by others). Otherwise nothing is
//     delivered: the heartbeat says [inboxv1.StateUntrusted] with the
//     reason and the fix in last_error; an MCP doorman checks again every
//     2 s, the foreground one returns an [*IdentityError].
//   - Stop (context cancelled, stdin EOF in MCP mode): the heartbeat says
//     stopped and the lock is released before [Doorman.Run] returns.
//
// The MCP server ([Server]) is the official Go SDK's
// (github.com/modelcontextprotocol/go-sdk v1.8.0: mcp.NewServer,
// mcp.AddTool), serving the revisions 2026-07-28 (server/discover, then
// requests that carry the revision in their _meta: what Claude Code uses
// when the probe succeeds), 2025-11-25, 2025-06-18, 2025-03-26 (with
// JSON-RPC batches) and 2024-11-05 (through initialize). It advertises
// only what it serves (tools, without listChanged; any other method is
// -32601), puts the caching hints 2026-07-28 requires in server/discover
// and list results (ttlMs 0, cacheScope "private"), and validates tool
// arguments against the tool's inputSchema (a violation is a tool result
// with isError, which the model reads).
//
// In front of the SDK stands the doorman's own transport (the SDK's
// Transport and Connection interfaces), because the SDK's stdio transport
// breaks three of the doorman's guarantees (TestTransportGuarantees runs
// each input against both):
//   - requests read right before stdin's EOF go unanswered (initialize,
//     tools/list and ping written in one go, then EOF: answers missing in
//     19 and 20 of 20 runs); the transport reports EOF to the SDK only once
//     every request it passed on is answered;
//   - one malformed line ends the whole session unanswered ("{bad", "[]",
//     "42", an object id, "method":5); the transport answers it -32700 or
//     -32600 itself and goes on;
//   - ids are not checked (7.5 is answered as 7, a big integer rounded, an
//     invalid UTF-8 string with U+FFFD in its place, a null id dropped);
//     the transport refuses every id but a string of valid UTF-8 or an
//     integer (-32600, with the id where it is readable and allowed, else
//     null), hands the SDK its own small integer ids and answers with the
//     client's id byte for byte.
//
// It also holds the smallest shim for what SDK v1.8.0 gets wrong: a request
// whose _meta names a revision the server does not speak, older (the
// spec's 1900-01-01) or newer, is refused -32022 with the supported and
// requested versions (the SDK serves an older one as legacy), and a
// malformed initialize (no protocolVersion, capabilities or clientInfo) is
// -32602 (the SDK takes it). Answers may come in any order (JSON-RPC
// matches them by id); an initialize is answered before the next line is
// read, so a batch is judged by the version it negotiated. stdout carries
// JSON-RPC only, one whole frame per write; logs go to the Log writer
// (stderr).
//
// The start-up to the first answer, the memory, the CPU of a session and
// the binary size, the SDK's server against the hand-written one it
// replaced, are in BENCHMARKS.md; the files the doorman writes (heartbeat,
// acks, offset) are the v0.1 contract's (COMPATIBILITY.md, "Inbox
// contract v1").
//
// A program is its own doorman with one call at the top of its main,
// [ServeIfInvoked]: started by a session as "<program> doorman --mcp" (what
// headless injects for its Self, what `claude mcp add` registers), it
// serves as `oo-claude doorman --mcp` does and exits; otherwise it returns.
//
// Nothing here reads the process environment, the clock or /proc on its own:
// every input comes through [Host] and [Options], except in
// [ServeIfInvoked] and [ThisProcess], which are main's.
package doorman
