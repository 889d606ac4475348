package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/oo-family/oo-claude/internal/fsx"
	"github.com/oo-family/oo-claude/station"
)

// Ext is the extension of a transcript file.
const Ext = ".jsonl"

// IsSessionID reports whether s has the shape of a UUID
// (8-4-4-4-12 hexadecimal digits), the only shape Locate accepts.
func IsSessionID(s string) bool { return station.IsSessionID(s) }

// Locate returns the transcript of session sessionID under projectsDir
// (Claude Code's <config dir>/projects). With a cwd it first tries
// <projectsDir>/<EncodeProjectDir(cwd)>/<sessionID>.jsonl; otherwise, or
// when that file does not exist, it looks for <sessionID>.jsonl in every
// project directory: one match is the answer, none is ErrNotFound, several
// are ErrAmbiguous. Only regular files count (a symlink is never returned):
// when no regular file matches but a symlink, FIFO, socket, device or
// directory sits at a candidate path, the error is ErrNotRegular naming that
// path (it does not match ErrNotFound: something is there, and it must be
// removed before Claude Code can write the transcript).
// A sessionID that is not a UUID is ErrBadSessionID.
func Locate(projectsDir, sessionID, cwd string) (string, error) {
	if !IsSessionID(sessionID) {
		return "", &Error{Op: "locate", Path: projectsDir, Err: ErrBadSessionID}
	}
	name := sessionID + Ext
	hostile := "" // the first candidate that exists and is not regular
	regular := func(p string) bool {
		fi, err := os.Lstat(p)
		if err == nil && !fi.Mode().IsRegular() && hostile == "" {
			hostile = p
		}
		return err == nil && fi.Mode().IsRegular()
	}
	if cwd != "" {
		p := filepath.Join(projectsDir, EncodeProjectDir(cwd), name)
		if regular(p) {
			return p, nil
		}
	}
	ents, err := os.ReadDir(projectsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = errors.Join(ErrNotFound, err)
		}
		return "", &Error{Op: "locate", Path: projectsDir, Err: err}
	}
	var found []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(projectsDir, e.Name(), name)
		if regular(p) {
			found = append(found, p)
		}
	}
	switch {
	case len(found) == 0 && hostile != "":
		return "", &Error{Op: "locate", Path: hostile, Err: ErrNotRegular}
	case len(found) == 0:
		return "", &Error{Op: "locate", Path: filepath.Join(projectsDir, "*", name), Err: ErrNotFound}
	case len(found) == 1:
		return found[0], nil
	}
	sort.Strings(found)
	return "", &Error{Op: "locate", Path: filepath.Join(projectsDir, "*", name), Err: ErrAmbiguous}
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

// openRegular is openTranscript that returns the file's FileInfo. A symlink
// or any file that is not regular is ErrNotRegular.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := fsx.OpenRead(path)
	if err != nil {
		if errors.Is(err, fsx.ErrSymlink) || errors.Is(err, fsx.ErrNotRegular) {
			err = ErrNotRegular
		}
		return nil, nil, &Error{Op: "open", Path: path, Err: err}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &Error{Op: "open", Path: path, Err: err}
	}
	return f, fi, nil
}

// RecordedCWD returns the cwd recorded in the transcript at path (rows carry
// "cwd"), looked up in the first 4 MiB: the first one whose encoding names
// the transcript's directory (see CWDMatches), else the first one; when the
// head has none, the last one in the last 4 MiB. No cwd is ErrNoCWD.
func RecordedCWD(path string) (string, error) {
	f, size, err := openTranscript(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	dir := filepath.Base(filepath.Dir(path))
	cwd, err := headCWD(io.NewSectionReader(f, 0, min(size, RiderTailBytes)), dir)
	if err != nil {
		return "", &Error{Op: "read", Path: path, Err: err}
	}
	if cwd != "" {
		return cwd, nil
	}
	rd := NewReader(f, size, RiderTailBytes)
	for {
		line, _, err := rd.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", &Error{Op: "read", Path: path, Err: err}
		}
		if row, err := ParseRow(line); err == nil && row.CWD != "" {
			return row.CWD, nil
		}
	}
	return "", &Error{Op: "read", Path: path, Err: ErrNoCWD}
}

var markCWD = []byte(`"cwd"`)

// headCWD scans r line by line for the first cwd that encodes to dir, else
// the first cwd.
func headCWD(r io.Reader, dir string) (string, error) {
	br := bufio.NewReaderSize(r, DefaultChunkSize)
	first := ""
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' && bytes.Contains(line, markCWD) {
			if row, perr := ParseRow(line); perr == nil && row.CWD != "" {
				if CWDMatches(dir, row.CWD) {
					return row.CWD, nil
				}
				if first == "" {
					first = row.CWD
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return first, nil
		}
		if err != nil {
			return "", err
		}
	}
}
