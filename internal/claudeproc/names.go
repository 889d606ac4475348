package claudeproc

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/oo-family/oo-claude/station"
)

// ProcessNaming returns the pid of a running claude process (other than
// skip) whose command line names sid as the session it resumes or creates
// (see [NamesSession]), or 0. An error means the process table could not be
// listed.
//
// Only a claude process holds a session (see [IsClaude]): a wrapper whose
// command line carries a start's or resume's arguments (timeout 30
// oo-claude start … --session-id X, bash -c '…', strace, and nohup, env or
// nice before they exec) names the session without running it.
func ProcessNaming(p station.Proc, bin, sid string, skip int) (int, error) {
	pids, err := p.Pids()
	if err != nil {
		return 0, err
	}
	binInfo, binErr := os.Stat(bin)
	for _, pid := range pids {
		if pid == skip {
			continue
		}
		args, err := p.Cmdline(pid)
		if err != nil || !NamesSession(args, sid) {
			continue
		}
		if info, err := p.Info(pid); err != nil || info.Zombie() {
			continue
		}
		if binErr == nil && !isClaude(p, pid, args, binInfo) {
			continue
		}
		return pid, nil
	}
	return 0, nil
}

// isClaude reports whether process pid (its command line args) is a
// claude process: its executable is the claude binary bin, or an
// interpreter runs that file as its script (args[1], absolute, is that
// file: a claude that is a node or shell script), or it is called claude
// (args[0]'s base name is "claude" or bin's: another install of claude, or
// the binary a wrapper script named by bin execs). A wrapper (timeout,
// bash, env, nohup, nice, strace) is called by its own name. A process
// whose executable cannot be read (another user's, a permission refused)
// counts as claude: who holds a session is never guessed in its favour;
// neither is it when bin itself cannot be read (ProcessNaming then takes
// every process for claude).
func isClaude(p station.Proc, pid int, args []string, bin fs.FileInfo) bool {
	exe, err := p.ExeInfo(pid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false // gone meanwhile (or a kernel thread)
	case err != nil:
		return true
	case os.SameFile(exe, bin):
		return true
	}
	if len(args) > 0 {
		if name := filepath.Base(args[0]); name == "claude" || name == bin.Name() {
			return true
		}
	}
	if len(args) > 1 && filepath.IsAbs(args[1]) {
		if fi, err := os.Stat(args[1]); err == nil && os.SameFile(fi, bin) {
			return true
		}
	}
	return false
}

// NamesSession reports whether a command line names sid as the session it
// resumes or creates, in every form the real CLI's argument parser
// (commander) accepts: --resume SID, --resume=SID, --session-id SID,
// --session-id=SID, -r SID, -rSID, -r=SID, and -r inside a group of short
// flags (-pr SID, -prSID). In a group, the boolean flags (c, h, p, v) may
// come first; a flag that takes a value (d, n, w, r) takes the rest of the
// group. Nothing after "--" is a flag. The id is compared without case.
func NamesSession(args []string, sid string) bool {
	is := func(v string) bool { return strings.EqualFold(strings.TrimPrefix(v, "="), sid) }
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		switch {
		case a == "--":
			return false
		case a == "--resume" || a == "--session-id":
			if is(next) {
				return true
			}
		case strings.HasPrefix(a, "--resume=") || strings.HasPrefix(a, "--session-id="):
			if _, v, _ := strings.Cut(a, "="); is(v) {
				return true
			}
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			if v, ok := shortResume(a[1:]); ok && (is(v) || (v == "" && is(next))) {
				return true
			}
		}
	}
	return false
}

// shortResume reads a group of short flags: the value of -r (the rest of
// the group, "" when -r ends it) and whether -r is in the group.
func shortResume(group string) (string, bool) {
	for i := 0; i < len(group); i++ {
		switch group[i] {
		case 'c', 'h', 'p', 'v':
			continue
		case 'r':
			return group[i+1:], true
		default: // d, n, w take the rest as their value; anything else ends the group
			return "", false
		}
	}
	return "", false
}
