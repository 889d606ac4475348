// Package riderwalk is the one walk over a session's rider transcripts,
// for transcript.Riders and the observatory: which files under a session
// directory are riders, and how deep they are looked for.
package riderwalk

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// Dir is the directory under a session's directory that holds its riders'
// transcripts.
const Dir = "subagents"

// maxDirDepth is how many directory levels under Dir hold rider
// transcripts: Dir/agent-*.jsonl and Dir/workflows/<run>/agent-*.jsonl.
const maxDirDepth = 2

// ext is a transcript's extension (transcriptfile.Ext, on the floor above).
const ext = ".jsonl"

// isTranscript reports whether name is a rider transcript's: agent-<id>.jsonl
// with a non-empty id.
func isTranscript(name string) bool {
	return strings.HasPrefix(name, "agent-") && strings.HasSuffix(name, ext) && len(name) > len("agent-")+len(ext)
}

// Walk calls found, in lexical order, for each regular file under
// sessionDir/Dir, at most maxDirDepth directory levels deep, whose name
// isTranscript. A session without a Dir has no riders and no error. An
// error reading Dir itself ends the walk and is returned; an error below
// it goes to bad and the walk goes on, or, when bad is nil, ends the walk
// and is returned.
func Walk(sessionDir string, found func(path string, d fs.DirEntry), bad func(error)) error {
	root := filepath.Join(sessionDir, Dir)
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			if p != root && bad != nil {
				bad(err)
				return nil
			}
			return err
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(root, p); rel != "." && strings.Count(rel, string(filepath.Separator)) >= maxDirDepth {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && isTranscript(d.Name()) {
			found(p, d)
		}
		return nil
	})
}
