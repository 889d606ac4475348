// Package observatory builds the oo-claude/sessions/v0 document: the running
// Claude Code sessions of a station joined with their riders (sub-agents),
// their inbox and doorman state and their lineage, plus the inboxes of
// sessions that are not running and still hold waiting lines.
//
// It guarantees:
//
//   - The document keeps every field name of the reference reader
//     (claude-riders.py) and only adds fields (COMPATIBILITY.md, "The
//     sessions document oo-claude/sessions/v0" lists them); every
//     field is always present (null or empty when unknown), so consumers can
//     index without guards.
//   - Only sessions whose registry row is live (the pid runs with the row's
//     procStart) are listed as running; a stale row left by a killed session
//     is not.
//   - Nothing is written and nothing is locked, with one exception:
//     transcripts and inbox files are read while their owners append to
//     them. The exception is a headless start's result file (Document.Starts,
//     <state>/start/) still started whose supervisor is gone (pid and start
//     time): it is listed as lost, and written so under the session's lock
//     (one reader of several at once; never while its supervisor runs). Inbox lines are counted in
//     one sequential pass without holding the file in memory, and rider
//     transcripts are read from their end (see package transcript), so the
//     cost follows the number of sessions and riders, not transcript sizes.
//   - Inputs come in through [Options] (station, paths, clock, riding window,
//     host name); nothing is read from the environment.
//   - [Watch] streams the station's events (sessions starting and ending,
//     status, doorman, lines queued, delivered and seen, turns ended, riders
//     starting and finishing, the cost a session's transcript tells) from file events alone: each change re-reads
//     only the file that changed, from where the last look ended, and an
//     idle station wakes the watcher for nothing (process exits are pidfd
//     events where the kernel has them). Within one session events come
//     in the order their facts happened: a line's line-delivered before its
//     line-seen (the ack is written after the transcript shows the line, so
//     line-seen waits for it, at most two seconds), a turn's rider events
//     before its turn-ended (held for them at most 300 ms). Riders are watched in
//     <session>/subagents/ itself (not in nested directories under it).
//     Its memory is bounded: past WatchOptions.MaxQueued events waiting for
//     a reader it drops and counts them, then hands the reader one overflow
//     event and the station as it is (Initial events), so a reader knows
//     what it missed and where things stand.
package observatory
