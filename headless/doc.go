// Package headless runs Claude Code headless for oo-claude: [Runner.Resume]
// gives a session that is not running one more turn, [Runner.Start] starts a
// new session (in the foreground, or detached as a systemd user unit) that
// the family can steer through its injected doorman while it works.
//
// It guarantees:
//
//   - One driver per session: Resume refuses (held-by-session) a session
//     that a live registry row names, whose doorman heartbeat is fresh, that
//     a running process names on its command line (--resume, -r,
//     --session-id), or whose resume lock (<state>/locks/resume-<sid>.lock)
//     another resume holds; the lock is held from the check to the end of
//     the turn.
//   - The claude binary is the configured absolute path (OO_CLAUDE_BIN),
//     never looked up in PATH, and its argv is exactly v0.1's; a line or
//     prompt that could be read as a flag (starting with "-") is refused.
//   - The child's environment is ours minus every CLAUDE* variable except
//     the 18 provider/auth names of [KeepEnv]; a descriptor named by
//     CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR or
//     CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR is passed on (renumbered). So no
//     door, messaging token or session identity of the caller reaches a
//     child. A systemd unit gets only the plain names of [UnitEnvNames].
//   - A turn that outlives its timeout is stopped with its whole process
//     group (SIGTERM, then SIGKILL after a grace period), grandchildren
//     included.
//   - Start creates the session's inbox before claude starts, and its result
//     file (written atomically, 0600) moves from started to completed,
//     failed or timeout; a detached start names its unit in the result file
//     from the start.
//   - Results are parsed leniently ([ParseResult]); receipts carry argv with
//     the line replaced by "<line>", never a token.
package headless
