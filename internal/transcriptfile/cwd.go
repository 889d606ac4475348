package transcriptfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// ErrNoCWD: no row of the transcript records a cwd.
var ErrNoCWD = errors.New("transcript: no recorded cwd")

// ErrNotRegular: the path is a symlink, a directory or another non-regular
// file (fsx's refusals, as one sentinel).
var ErrNotRegular = errors.New("transcript: not a regular file")

// OpenRegular opens a transcript (or a rider's meta file) with the checked
// open: no symlink followed, never blocking on a FIFO or device. A symlink
// or any file that is not regular is ErrNotRegular. The error is the bare
// cause; the caller says which path and operation.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := fsx.OpenRead(path)
	if err != nil {
		if errors.Is(err, fsx.ErrSymlink) || errors.Is(err, fsx.ErrNotRegular) {
			err = ErrNotRegular
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// OpenRegularAt is [OpenRegular] on a bare descriptor read at offsets
// ([fsx.OpenReadAt]): the same checks and refusals, with the open's own
// fstat as the FileInfo, in fewer system calls, for a reader of many small
// files (a session's riders).
func OpenRegularAt(path string) (*fsx.ReadAtFile, fs.FileInfo, error) {
	return regularAt(fsx.OpenReadAt(path))
}

// OpenEntryAt is [OpenRegularAt] for the entry e of the directory dir as
// a listing gave it ([fsx.OpenDirEntryReadAt]: the entry's type stands
// for the check before the open).
func OpenEntryAt(dir string, e fs.DirEntry) (*fsx.ReadAtFile, fs.FileInfo, error) {
	return regularAt(fsx.OpenDirEntryReadAt(dir, e))
}

// regularAt is OpenRegular's refusals, as one sentinel, on an open at
// offsets.
func regularAt(f *fsx.ReadAtFile, fi fs.FileInfo, err error) (*fsx.ReadAtFile, fs.FileInfo, error) {
	if err != nil {
		if errors.Is(err, fsx.ErrSymlink) || errors.Is(err, fsx.ErrNotRegular) {
			err = ErrNotRegular
		}
		return nil, nil, err
	}
	return f, fi, nil
}

// RecordedCWD returns the cwd recorded in the transcript at path (rows carry
// "cwd"), looked up in the first TailBytes: the first one whose encoding
// names the transcript's directory (see CWDMatches), else the first one;
// when the head has none, the last one in the last TailBytes. No cwd is
// ErrNoCWD.
func RecordedCWD(path string) (string, error) {
	f, fi, err := OpenRegular(path)
	if err != nil {
		return "", fmt.Errorf("transcript: open %s: %w", path, err)
	}
	defer f.Close()
	size := fi.Size()
	dir := filepath.Base(filepath.Dir(path))
	cwd, err := headCWD(io.NewSectionReader(f, 0, min(size, TailBytes)), dir)
	if err != nil {
		return "", fmt.Errorf("transcript: read %s: %w", path, err)
	}
	if cwd != "" {
		return cwd, nil
	}
	rd := NewReader(f, size, TailBytes)
	for {
		line, _, err := rd.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("transcript: read %s: %w", path, err)
		}
		if row, err := ParseRow(line); err == nil && row.CWD != "" {
			return row.CWD, nil
		}
	}
	return "", fmt.Errorf("transcript: read %s: %w", path, ErrNoCWD)
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
