package inbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// Listing is an inbox directory as one listing (os.ReadDir) found it: a
// reader of many sessions' inboxes ([Listing.ReadState], [Listing.Scan])
// opens each file from its entry, whose type stands for the check before
// the open (fsx.OpenDirEntryReadAt), and never tries a file the listing
// does not hold (an absent ack file, offset or heartbeat costs nothing).
// A file created after the listing is not seen; one removed since is
// absent. A nil *Listing checks each path itself, as ReadState does.
type Listing struct {
	dir    string
	sorted []fs.DirEntry // as os.ReadDir returned them, by name
	ents   map[string]fs.DirEntry
}

// List lists the inbox directory dir. A missing dir is an empty listing.
func List(dir string) (*Listing, error) {
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	l := &Listing{dir: dir, sorted: ents, ents: make(map[string]fs.DirEntry, len(ents))}
	for _, e := range ents {
		l.ents[e.Name()] = e
	}
	return l, nil
}

// entry is the listing's entry for path, a file of its directory; a path
// elsewhere, or a nil listing, has none and reports false for listed.
func (l *Listing) entry(path string) (e fs.DirEntry, listed bool) {
	if l == nil || filepath.Dir(path) != filepath.Clean(l.dir) {
		return nil, false
	}
	return l.ents[filepath.Base(path)], true
}

// notListed is the error of an open of a file the listing does not hold:
// what the open itself would have said.
func notListed(path string) error {
	return &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
}

// openAt opens path for reading at offsets (fsx.OpenReadAt), from the
// listing when it holds path's directory.
func (l *Listing) openAt(path string) (*fsx.ReadAtFile, fs.FileInfo, error) {
	e, listed := l.entry(path)
	switch {
	case !listed:
		return fsx.OpenReadAt(path)
	case e == nil:
		return nil, nil, notListed(path)
	}
	return fsx.OpenDirEntryReadAt(l.dir, e)
}

// appendFile is fsx.AppendFile of path, from the listing when it holds
// path's directory.
func (l *Listing) appendFile(buf []byte, path string, max int) ([]byte, error) {
	e, listed := l.entry(path)
	switch {
	case !listed:
		return fsx.AppendFile(buf, path, max)
	case e == nil:
		return buf, notListed(path)
	}
	return fsx.AppendDirEntry(buf, l.dir, e, max)
}
