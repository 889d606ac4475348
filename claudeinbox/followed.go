package claudeinbox

import (
	"os"
	"path/filepath"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/station"
)

// Followed is what the process table says about the inbox directory a
// live session's doorman follows ([FollowedInbox]).
type Followed struct {
	// DoormanPID is the child of the session's claude process that holds
	// the session's doorman lock (<dir>/<session id>.inbox.doorman.lock)
	// open; 0 when no child does (no doorman yet, one in standby, or one
	// that cannot follow).
	DoormanPID int
	// Dir is the directory of the lock it holds, as the kernel names it
	// (symlinks resolved); "" when DoormanPID is 0.
	Dir string
	// Elsewhere reports that Dir is not the inbox directory asked about:
	// a line written there is never read by this doorman.
	Elsewhere bool
}

// FollowedInbox finds the doorman of the live session sess through the
// process table p and says whether it follows inboxDir. The doorman is
// the session's MCP server, a child of the claude process (the registry
// row's pid); a following doorman holds its session's lock file open for
// as long as it follows, so the link of that open file names the
// directory it follows, whatever knobs, station file or HOME it was
// started with. The work is the children list of the claude process and
// the open-file links of each child (bounded by station.Proc); nothing is
// written and no process's environment is read. A directory is compared
// as a file (the same directory under another name, through a symlink,
// is not elsewhere).
func FollowedInbox(p station.Proc, sess station.Session, inboxDir string) Followed {
	if sess.PID <= 0 || !station.IsSessionID(sess.SessionID) {
		return Followed{}
	}
	base := filepath.Base(inboxv1.FilesFor(inboxDir, sess.SessionID).Lock)
	kids, err := p.Children(sess.PID)
	if err != nil {
		return Followed{}
	}
	for _, c := range kids {
		files, err := p.OpenFiles(c)
		if err != nil {
			continue
		}
		for _, f := range files {
			if !filepath.IsAbs(f) || filepath.Base(f) != base {
				continue // a pipe, a socket, another file, or a removed one (" (deleted)")
			}
			dir := filepath.Dir(f)
			return Followed{DoormanPID: c, Dir: dir, Elsewhere: !sameDir(dir, inboxDir)}
		}
	}
	return Followed{}
}

// sameDir reports whether a and b name the same directory: the same file
// when both can be stat'ed, else the same path once symlinks are resolved.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}
