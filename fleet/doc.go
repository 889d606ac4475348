// Package fleet runs oo-claude verbs on other stations through OpenSSH and
// returns the same typed results as the local calls: a send's receipt row,
// the oo-claude/sessions/v0 document, watch events, a resume's receipt
// row, a start's result file, the lineage links, a past receipt; and it
// merges the documents and event streams of many stations into one, whose
// sessions are addressed as STATION/SESSION ([SplitTarget]).
//
// There is no network protocol of its own: a [Host] runs
// `ssh DEST <remote oo-claude> VERB … --json` and parses what the remote
// verb prints. It guarantees: no remote shell interprets a caller's text
// (every argument is single-quoted for the remote sh; a send's line, a
// resume's line and a start's prompt travel on stdin, never in the
// command line); ssh's own failure (exit 255: unreachable, refused,
// authentication) is an *[SSHError] matching [ErrSSH], never mistaken for
// a verdict class; a remote verb's exit code comes back unchanged; the ssh
// children end with the context that runs them and die with this process
// (SIGKILL included; a shared connection's master is one of them, never a
// background process), and a remote watch ends when its connection goes
// (it polls its stdout for a hang-up).
package fleet
