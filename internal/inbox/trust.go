package inbox

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/oo-family/oo-claude/inboxv1"
	"github.com/oo-family/oo-claude/internal/fsx"
)

// ErrUntrusted reports an inbox directory or file that another user could
// have written: owned by another uid, or a directory writable by group or
// others, or a file writable by others. A sender refuses to append to it
// ([ReasonUntrusted]) and a doorman delivers nothing from it
// ([StateUntrusted]). The error text names the problem and the fix.
var ErrUntrusted = fsx.ErrUntrusted

// CheckTrust reports whether the inbox of files may be trusted by user uid
// (pass os.Geteuid()): its directory owned by uid and not writable by group
// or others, and each of its files whose content is believed (the inbox, the
// ack, the offset, the lock and the attempt) a regular file owned by uid and not writable
// by others. What does not exist yet is trusted (oo-claude creates it
// 0700/0600). The error matches [ErrUntrusted], or fsx's sentinels for a
// symlink or a file that is not regular; its text names the fix.
func CheckTrust(files inboxv1.Files, uid int) error {
	dir := filepath.Dir(files.Inbox)
	if err := fsx.CheckDirTrust(dir, uid); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, p := range []string{files.Inbox, files.Ack, files.Offset, files.Lock, files.Attempt} {
		if err := fsx.CheckFileAt(p, uid); err != nil {
			return err
		}
	}
	return nil
}
