// Package transcript reads Claude Code session transcripts
// (<projects>/<encoded cwd>/<session id>.jsonl) read-only, lock-free and
// from the end.
//
// It guarantees:
//
//   - Locate finds a session's transcript by the project directory name
//     Claude Code gives its cwd (reproduced byte for byte; the rule is in
//     COMPATIBILITY.md, "Files"), and never
//     leaves the projects directory: a session id that is not a UUID is
//     refused before any path is built, and only regular files (never
//     symlinks) are returned.
//   - Exchanges and Riders read a transcript from its end in chunks
//     and stop as soon as they have what they need: the cost of reading the
//     last exchanges does not grow with the size of the transcript. Nothing is
//     locked or written; a row being appended (a last line without its "\n")
//     is left out, never half-parsed.
//   - Rows are parsed leniently: unknown row types and unknown fields are
//     ignored, a field of an unexpected JSON type is left at its zero value,
//     and a line that is not JSON is skipped.
//   - Exchanges marks every peer line (a line another process wrote to the
//     session's door) with its from and msg_id, so a send receipt can be
//     matched to the model having seen it; sidechains (sub-agent rows) and
//     system-injected meta rows never appear as prompts.
//   - Follow hands over, in order, each complete row appended to a
//     transcript after an offset, reading only the new bytes, woken by file
//     events (the transcript may not exist yet) with a coarse safety poll;
//     a torn last row is held until complete, and truncation or replacement
//     is reported (ErrTruncated, ErrReplaced), never skipped. It is the one
//     primitive every wait on a transcript uses.
//   - WaitSeen proves that a session took a peer line: it follows the
//     transcript from a given offset for a row whose peer origin carries
//     the line's msg_id.
//   - ReadReply and WaitReply read a peer line's reply by its msg_id: the
//     main-chain assistant text after the row that shows the line went to
//     the model, to the turn's final answer or the next prompt, never the
//     text written before the line, never a sidechain's or a tool result.
//   - Riders applies oo-claude's riding rule to a session's sub-agent
//     transcripts: a rider is riding while its transcript changed within the
//     window and its last message is not a final answer.
package transcript
