// Package riderwalk is the one walk over a session's rider transcripts,
// for transcript.Riders and the observatory: which files under a session
// directory are riders, and how deep they are looked for.
package riderwalk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// Dir is the directory under a session's directory that holds its riders'
// transcripts.
const Dir = "subagents"

// maxDirDepth is how many directory levels under Dir hold rider
// transcripts: Dir/agent-*.jsonl and Dir/workflows/<run>/agent-*.jsonl.
const maxDirDepth = 2

// ext is a transcript's extension (transcriptfile.Ext, on the floor above).
const ext = ".jsonl"

// metaExt ends a rider's meta file: agent-<id>.meta.json beside
// agent-<id>.jsonl.
const metaExt = ".meta.json"

// isTranscript reports whether name is a rider transcript's: agent-<id>.jsonl
// with a non-empty id.
func isTranscript(name string) bool {
	return strings.HasPrefix(name, "agent-") && strings.HasSuffix(name, ext) && len(name) > len("agent-")+len(ext)
}

// Rider is one rider transcript a walk found, as its directory's listing
// shows it, with its meta file when the same listing holds one: a reader
// opens them from these entries without a stat of its own before the open
// (the listing's type is that check) and without trying a meta file that
// is not there.
type Rider struct {
	Dir        string      // the directory whose listing holds both
	Transcript fs.DirEntry // agent-<id>.jsonl, a regular file when listed
	Meta       fs.DirEntry // agent-<id>.meta.json, of any type; nil when not listed
}

// Path is the rider transcript's path.
func (r Rider) Path() string { return filepath.Join(r.Dir, r.Transcript.Name()) }

// Walk calls found, in lexical order, for each regular file under
// sessionDir/Dir, at most maxDirDepth directory levels deep, whose name
// isTranscript. A session without a Dir has no riders and no error. An
// error reading Dir itself ends the walk and is returned; an error below
// it goes to bad and the walk goes on, or, when bad is nil, ends the walk
// and is returned.
func Walk(sessionDir string, found func(path string, d fs.DirEntry), bad func(error)) error {
	return WalkRiders(sessionDir, func(r Rider) { found(r.Path(), r.Transcript) }, bad)
}

// WalkRiders is [Walk] that gives each rider with its listing's entries:
// the walk that filepath.WalkDir would make (Dir itself is not followed
// when it is a symlink, nor is any directory below it; entries in lexical
// order, a directory's riders before its subdirectories' only when they
// sort first), one directory read each. found is called while the
// rider's directory is open: until it returns, the rider's entries are
// stat'ed (Info) and opened (fsx.OpenDirEntryReadAt, fsx.AppendDirEntry)
// relative to it, with one name resolved instead of the whole path.
func WalkRiders(sessionDir string, found func(Rider), bad func(error)) error {
	root := filepath.Join(sessionDir, Dir)
	d, err := fsx.OpenDirNoFollow(root)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR):
			// A symlink or a file in Dir's place: no riders. The lstat
			// tells them from a path whose directories are not there
			// (its error, as before).
			fi, lerr := os.Lstat(root)
			switch {
			case errors.Is(lerr, fs.ErrNotExist):
				return nil
			case lerr != nil:
				return lerr
			case !fi.IsDir():
				return nil
			}
		}
		return err
	}
	defer d.Close()
	return walkDir(d, 0, found, bad)
}

// walkDir lists d, depth levels under Dir, and walks it.
func walkDir(d *fsx.Dir, depth int, found func(Rider), bad func(error)) error {
	ents, err := d.ReadDir()
	if err != nil {
		if depth == 0 || bad == nil {
			return err
		}
		bad(err) // the entries read before the error are still walked
	}
	for i, e := range ents {
		name := e.Name()
		if e.IsDir() {
			if depth >= maxDirDepth {
				continue
			}
			sub, err := d.OpenDir(name)
			if err != nil {
				if bad == nil {
					return err
				}
				bad(err)
				continue
			}
			err = walkDir(sub, depth+1, found, bad)
			sub.Close()
			if err != nil {
				return err
			}
			continue
		}
		if !e.Type().IsRegular() || !isTranscript(name) {
			continue
		}
		r := Rider{Dir: d.Path(), Transcript: e}
		// The meta file sorts after its transcript ('m' > 'j'), in the
		// same listing.
		meta := strings.TrimSuffix(name, ext) + metaExt
		rest := ents[i+1:]
		if j := sort.Search(len(rest), func(k int) bool { return rest[k].Name() >= meta }); j < len(rest) && rest[j].Name() == meta {
			r.Meta = rest[j]
		}
		found(r)
	}
	return nil
}
