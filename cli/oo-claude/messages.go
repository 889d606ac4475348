package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/lineage"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// The messages here say what happened and what to do next, in one line
// each; the library's errors carry the chain, the CLI prints the gist.

// targetMessage explains a target that did not resolve, or returns "" for
// an error that is not a *station.TargetError.
func targetMessage(err error) string {
	var te *station.TargetError
	if !errors.As(err, &te) {
		return ""
	}
	switch {
	case errors.Is(err, station.ErrUnknownTarget):
		return fmt.Sprintf("unknown target %q: no running session has this id, pid or name (oo-claude sessions lists them; a session that is not running is addressed by its full id)", te.Target)
	case errors.Is(err, station.ErrAmbiguousTarget):
		return te.Error() + " (use the full session id)"
	}
	return te.Error()
}

// noTranscriptMessage is the one line for a session whose transcript is
// not under projectsDir.
func noTranscriptMessage(sessionID, projectsDir string) string {
	return fmt.Sprintf("no transcript for session %s under %s: check the id (oo-claude sessions lists the running ones), or point OO_CLAUDE_PROJECTS_DIR (or CLAUDE_CONFIG_DIR) at the config dir the session ran with",
		sessionID, projectsDir)
}

// notRegularTranscriptMessage is the one line for a session whose
// transcript path holds something that is not a regular file; "" when err
// is not that.
func notRegularTranscriptMessage(err error, sessionID string) string {
	var te *fs.PathError
	if !errors.Is(err, transcript.ErrNotRegular) || !errors.As(err, &te) || sessionID == "" {
		return ""
	}
	return fmt.Sprintf("the transcript of session %s, %s, is not a regular file (a FIFO, socket, device, directory or symlink): remove it; Claude Code writes the transcript itself",
		sessionID, te.Path)
}

// readMessage is read's one line for a failed ReadSession.
func readMessage(err error, sessionID, projectsDir string) error {
	if m := targetMessage(err); m != "" {
		return errors.New(m)
	}
	if m := notRegularTranscriptMessage(err, sessionID); m != "" {
		return errors.New(m)
	}
	if errors.Is(err, transcript.ErrNotFound) && sessionID != "" {
		return errors.New(noTranscriptMessage(sessionID, projectsDir))
	}
	return errors.New(oneLine(err))
}

// refusedMessage is the one line for a resume or start that was refused
// before anything ran: "resume refused (no-transcript): …".
func refusedMessage(err error, sessionID, projectsDir string) string {
	var re *headless.RefusedError
	if !errors.As(err, &re) {
		return "refused: " + oneLine(err)
	}
	if m := notRegularTranscriptMessage(err, sessionID); m != "" && errors.Is(err, headless.ErrNoTranscript) {
		return fmt.Sprintf("%s refused (%s): %s", re.Op, re.Reason, m)
	}
	if errors.Is(err, headless.ErrNoTranscript) && sessionID != "" {
		return fmt.Sprintf("%s refused (%s): %s", re.Op, re.Reason, noTranscriptMessage(sessionID, projectsDir))
	}
	switch {
	case errors.Is(err, headless.ErrCWDMismatch):
		return oneLine(re) + " (give --cwd the session's project directory, or leave it out for the one the transcript recorded)"
	case re.Reason == "bad-out":
		return oneLine(re) + " (--out names the result file)"
	}
	return oneLine(re)
}

// heldMessage is the one line for a resume held by the session: the
// library's reason, and, when the session runs, the verb that reaches it.
func heldMessage(res headless.ResumeResult) string {
	msg := fmt.Sprintf("held-by-session (%s): %s", res.HeldBy, res.Reason)
	if res.HeldBy != headless.HeldByLock {
		msg += "; use oo-claude send"
	}
	return msg
}

// sendNote is the note of a send verdict as the CLI prints it: the
// library's note (which speaks of the request's fields and the verdict)
// with the flag or verb that helps next.
func sendNote(v claudeinbox.Verdict) string {
	n := v.Note
	switch {
	case n == "":
	case v.Reason == inboxv1.ReasonUnknownTarget:
		n += " (oo-claude sessions lists them; a session that is not running is addressed by its full id)"
	case v.Reason == inboxv1.ReasonUnknownSession:
		n = strings.Replace(n, "with Request.ExpectStart", "with --expect-start (oo-claude start --session-id)", 1) + "; oo-claude sessions lists the sessions"
	case v.Reason == inboxv1.ReasonInboxDirMismatch:
		n += "; run the send where OO_CLAUDE_INBOX_DIR is the doorman's (or restart the session with this one)"
	case v.Reason == inboxv1.ReasonBadFrom:
		if rest, ok := strings.CutPrefix(n, "From "); ok {
			n = "--from " + rest
		}
	case v.WaitEnd == inboxv1.ReasonSessionEnded:
		n += fmt.Sprintf("; oo-claude read %s shows what it wrote before it ended", v.SessionID)
	case v.Seen != nil && !*v.Seen && v.ReplyWait > 0:
		n += fmt.Sprintf("; oo-claude read %s shows the answer once the model gives it", v.SessionID)
	case v.Seen != nil && !*v.Seen:
		n += fmt.Sprintf("; oo-claude read %s shows the line once the model takes it", v.SessionID)
	case v.ReplyWait > 0 && v.Reply == nil && v.Seen != nil:
		n += fmt.Sprintf("; oo-claude read %s shows the answer once it is written", v.SessionID)
	}
	return n
}

// lineageMessage is the one line for a refused lineage register.
func lineageMessage(err error) string {
	msg := "lineage register refused: " + oneLine(err)
	if errors.Is(err, lineage.ErrNoChild) {
		msg += ": give --child <uuid> (or --child-host <local_id>), or run it inside the child session (from its Bash tool, so the session is an ancestor or CLAUDE_CODE_SESSION_ID names it)"
	}
	return msg
}

// oneLine joins the lines of an error (errors.Join puts each cause on its
// own line) with "; ".
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
