package transcript

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/internal/transcriptfile"
	"github.com/oo-family/oo-claude/station"
)

// Locate returns the transcript of session sessionID under projectsDir
// (Claude Code's <config dir>/projects). With a cwd it first tries
// <projectsDir>/<encoded cwd>/<sessionID>.jsonl; otherwise, or
// when that file does not exist, it looks for <sessionID>.jsonl in every
// project directory: one match is the answer, none is ErrNotFound, several
// are ErrAmbiguous. Only regular files count (a symlink is never returned):
// when no regular file matches but a symlink, FIFO, socket, device or
// directory sits at a candidate path, the error is ErrNotRegular naming that
// path (it does not match ErrNotFound: something is there, and it must be
// removed before Claude Code can write the transcript).
// A sessionID that is not a UUID is ErrBadSessionID.
func Locate(projectsDir, sessionID, cwd string) (string, error) {
	if !station.IsSessionID(sessionID) {
		return "", pathError("locate", projectsDir, ErrBadSessionID)
	}
	name := sessionID + transcriptfile.Ext
	c, err := transcriptfile.Find(projectsDir, sessionID, cwd)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = errors.Join(ErrNotFound, err)
		}
		return "", pathError("locate", projectsDir, err)
	}
	found := c.Found
	switch {
	case len(found) == 0 && c.Hostile != "":
		return "", pathError("locate", c.Hostile, ErrNotRegular)
	case len(found) == 0:
		return "", pathError("locate", filepath.Join(projectsDir, "*", name), ErrNotFound)
	case len(found) == 1:
		return found[0], nil
	}
	sort.Strings(found)
	return "", pathError("locate", filepath.Join(projectsDir, "*", name), ErrAmbiguous)
}

// openTranscript opens a transcript with the checked open (no symlink
// followed, never blocking on a FIFO or device) and returns it with its size
// at open time.
func openTranscript(path string) (*os.File, int64, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// openRegularAt is openRegular on a bare descriptor read at offsets
// (transcriptfile.OpenRegularAt): the same checks and errors, fewer system
// calls.
func openRegularAt(path string) (*fsx.ReadAtFile, fs.FileInfo, error) {
	f, fi, err := transcriptfile.OpenRegularAt(path)
	return regularAt(path, f, fi, err)
}

// regularAt is an open at offsets of path with this package's errors.
func regularAt(path string, f *fsx.ReadAtFile, fi fs.FileInfo, err error) (*fsx.ReadAtFile, fs.FileInfo, error) {
	if err != nil {
		if errors.Is(err, transcriptfile.ErrNotRegular) {
			err = ErrNotRegular
		}
		return nil, nil, pathError("open", path, err)
	}
	return f, fi, nil
}

// openRegular is openTranscript that returns the file's FileInfo. A symlink
// or any file that is not regular is ErrNotRegular.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	f, fi, err := transcriptfile.OpenRegular(path)
	if err != nil {
		if errors.Is(err, transcriptfile.ErrNotRegular) {
			err = ErrNotRegular
		}
		return nil, nil, pathError("open", path, err)
	}
	return f, fi, nil
}
