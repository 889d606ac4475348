// Package headless runs Claude Code headless for oo-claude: [Runner.Resume]
// gives a session that is not running one more run, delivering the lines
// that waited in its inbox, [Runner.Start] starts a new session (in the
// foreground, or detached as a systemd user unit) that the family can steer
// through its injected doorman while it works; [Runner.StartSteerable]
// (and StartRequest.Detach, under a supervisor of its own) hands a start
// back as soon as a line sent to it would be delivered.
//
// It guarantees:
//
//   - One driver per session: Resume and Start refuse a session that a
//     live registry row names, whose doorman heartbeat is fresh, that a
//     running claude process names on its command line (every form the
//     real CLI's parser reads: --resume, --session-id, -r, and -r in a
//     group of short flags; a claude process is one whose executable is
//     Config.ClaudeBin, or whose script it is, or that is called claude: a
//     wrapper such as timeout, bash -c or strace around a start or resume
//     holds nothing), or whose
//     lock
//     (<state>/locks/resume-<sid>.lock) another resume or start holds; the
//     lock is held from the check to the end of the run. A registry or
//     process table that cannot be read is a refusal, never a go-ahead.
//   - Resume injects the doorman as Start does, so the lines waiting in the
//     inbox are delivered into the resumed process; its line, when given,
//     goes on stdin (stream-json), never into argv, and stdin stays open
//     until that turn has its result and nothing is pending. Without a line
//     and with nothing waiting it is refused: no line is ever made up.
//   - Every turn is kept: claude runs with --output-format stream-json
//     --verbose and each result event becomes a [receipt.Turn] (what started
//     it, with a peer line's msg_id); the top-level keys stay the final
//     turn's. An error result's own text is in the reason and the note.
//   - claude dies with its supervisor (a parent-death SIGKILL), and a start's
//     result file names claude's pid, the supervisor's pid and the deadline
//     while it runs.
//   - The claude binary is the configured absolute path (OO_CLAUDE_BIN),
//     never looked up in PATH, and its argv is the one in COMPATIBILITY.md,
//     "The claude command lines"; a line or prompt that could be read as a
//     flag (starting with "-") is refused, and so is a budget that is not a
//     finite number above 0.
//   - The child's environment is ours minus every CLAUDE* variable except
//     18 provider/auth names (CLAUDE_CONFIG_DIR, the provider switches and
//     the four credentials); a descriptor named by
//     CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR or
//     CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR is passed on (renumbered). So no
//     door, messaging token or session identity of the caller reaches a
//     child. A systemd unit gets only a fixed list of plain names by name
//     (the login basics, the OO_CLAUDE_* knobs, the keep-list without its
//     credentials).
//   - A turn that outlives its timeout is stopped with its whole process
//     group (SIGTERM, then SIGKILL after a grace period), grandchildren
//     included.
//   - Start creates the session's inbox before claude starts (and removes it
//     again, while still empty, when the start fails), and its result file
//     (written atomically, 0600) moves from started to completed, failed or
//     timeout, naming its supervisor (pid and start time) from the first
//     write; a started file whose supervisor is gone is lost, as
//     [Runner.ReadStartFile] and the observatory report it and the first
//     reader that can take the session's lock writes it; a detached start
//     names its unit in the result file from the start, returns only once
//     the unit has claimed its prompt (one rename: a unit started twice
//     runs claude once), and bounds systemd-run. The lineage link is
//     registered once claude runs.
//   - A start that returns when steerable returns only once its session's
//     doorman heartbeat is fresh by the sender's rule (last_seen within
//     15 s, following, the session's, its pid alive): a line sent then is
//     delivered, not queued. A run that ends first says so
//     ([ErrNotSteerable]) with its outcome; a start without a doorman is
//     refused ([ReasonBadDoorman]).
//   - Refusals carry a [inboxv1.Reason] (the Reason constants), which
//     errors.Is matches on the error.
//   - Results are parsed leniently (a field of an unexpected type loses
//     only itself); receipts carry argv with the line replaced by "<line>",
//     never a token.
package headless
