// Package doorman is the receiver of a Claude Code session's inbox: the
// process the session itself spawns (its MCP stdio server) that follows the
// session's inbox file and carries each line through the session's own
// messaging socket ("the door"), then acks it.
//
// It guarantees:
//
//   - Identity before any write. [Host.Identify] finds the owner (the nearest
//     ancestor with a live registry row or a claude executable), the session
//     id (the owner's row, else CLAUDE_CODE_SESSION_ID; an explicit session
//     must equal the row's and is never trusted without one), the socket
//     (the row's, else CLAUDE_CODE_MESSAGING_SOCKET only when the owner
//     itself serves it) and, in MCP mode, that the owner is the direct
//     parent. Each failure is a typed [claudeinbox.State]. A doorman that
//     never established its identity writes nothing at all into the inbox
//     directory: it reports its state on stderr, through the MCP tool
//     claude_inbox_status and in the foreground's --json output.
//   - Every delivery checks with SO_PEERCRED that the listener is the owner;
//     on a mismatch nothing is written and the line stays pending.
//   - One deliverer per inbox (flock on <inbox>.doorman.lock); a second
//     doorman waits in standby and takes over when the first stops. Only
//     the lock holder writes the heartbeat, acks and offset.
//   - At least once, with a window of one line: deliver, append the ack (one
//     O_APPEND write), then replace the offset atomically. A restart skips
//     lines already acked for the same inode and offset, so it re-delivers at
//     most the one line whose ack was not yet written. An undeliverable line
//     (invalid UTF-8, over 16 KiB, NUL, empty, longer than the 1 MiB read
//     chunk) is acked refused exactly once and never blocks later lines.
//   - The file is followed by file events (fsnotify on the directory) plus a
//     slow safety poll (Config.DoormanPoll); an idle doorman wakes for its
//     heartbeat and that poll only. Truncation restarts from 0; a replaced
//     file is drained, then followed from 0.
//   - Pacing: lines are held back to stay inside the receiver's ingress
//     guard (an identical body from the same sender within 30 s is dropped
//     silently; a token bucket of 30 refilled at 0.5/s per sender). A held
//     line's ack carries paced_ms and the heartbeat carries pacing. The
//     receiver's 50-message queue cannot be observed from outside and is
//     not modelled.
//   - Stop (context cancelled, stdin EOF in MCP mode): the heartbeat says
//     stopped and the lock is released before [Doorman.Run] returns.
//
// The MCP server ([Server]) is hand-written rather than built on an SDK: it
// has five methods (initialize, ping, tools/list, tools/call and the
// notifications it ignores) whose exact frames are pinned by golden tests,
// and it keeps the doorman free of dependencies that could write to stdout.
// stdout carries JSON-RPC only, through one mutex-guarded encoder; logs go to
// the Log writer (stderr).
//
// Nothing here reads the process environment, the clock or /proc on its own:
// every input comes through [Host] and [Options].
package doorman
