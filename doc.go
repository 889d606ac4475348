// Package ooclaude is the map of oo-claude: a library, with a thin command,
// that lets any process on a Linux machine reach the Claude Code sessions
// running there. This package holds no code; import the packages below.
//
// Senders never write to a session's messaging socket (the door) themselves:
// they append a line to the session's inbox file, and a small process the
// session itself spawned (its MCP stdio server, the doorman) carries the
// line through the door and acks it once the receiver's transcript shows
// it queued.
//
// The packages, by floor (each imports only packages on lower floors, or
// on its own floor in the documented order within it; the test
// internal/repocheck.TestFloors holds the graph to it):
//
//	floor 4  cli/oo-claude    the oo-claude command: flags, calling the
//	                          library, printing, verdicts to exit codes
//	         cli/oo-claude-doorman  the doorman program, which
//	                          `oo-claude doorman` execs (so the command
//	                          does not link the MCP SDK)
//	         cli/oo-claude-top  the live view's program, which
//	                          `oo-claude top` execs (so the command does
//	                          not link the Charm stack)
//	floor 3  fleet            verbs on other stations over OpenSSH, merged
//	                          documents and event streams (above observatory
//	                          and headless)
//	         doorman          the receiver: identity, the follow loop, the
//	                          MCP stdio server and its claude_inbox_status tool
//	         headless         resume and start a session without a terminal
//	         observatory      the oo-claude/sessions/v0 document and Watch
//	         doctor           readiness checks, each a typed finding
//	floor 2  claudeinbox      the sender: Send a line to a session's inbox,
//	                          its Verdict and Class
//	         door             Dial with the peer check, one frame's write
//	         transcript       locate, read and follow transcripts; riders
//	         lineage          the append-only ledger of who started whom
//	floor 1  station          paths from the knobs, registry rows, process
//	                          facts, liveness, resolving a target
//	         receipt          receipts.jsonl rows; never a token
//	         inboxv1          the inbox contract v1's types and constants:
//	                          files, ack, heartbeat, doorman states, the
//	                          inbox state, the one Reason vocabulary
//	         internal/...     the contract's I/O (internal/inbox: each
//	                          file's one reader and writer), the transcript
//	                          file layer and the claude process runner
//	floor 0  internal/...     plumbing: checked opens, appends, atomic files,
//	                          locks, process exits as events
//
// Beside the floors: fakes/... (test doubles other projects' tests import:
// a station, a door, a claude binary, a model server, a session, a doorman),
// examples/... (runnable recipes) and e2e (tests against the real Claude
// Code binary).
//
// The files, JSON fields, verdict classes, exit codes and environment knobs
// are the v0.1 contract, kept and only extended; COMPATIBILITY.md in the
// repository lists them and where Claude Code 2.1.332 differs from what
// v0.1 measured. The measured costs are in BENCHMARKS.md.
package ooclaude
