package transcript

import (
	"errors"
	"io/fs"
	"strings"
)

// Sentinel errors callers branch on. They are returned wrapped, usually in
// an *fs.PathError whose Op begins "transcript "; test for them with
// errors.Is.
var (
	// ErrNotFound: no transcript for the session id.
	ErrNotFound = errors.New("transcript: not found")
	// ErrAmbiguous: more than one project directory holds a transcript
	// for the session id and no cwd decided between them.
	ErrAmbiguous = errors.New("transcript: ambiguous session id")
	// ErrBadSessionID: the session id is not a UUID (so it is never
	// used to build a path).
	ErrBadSessionID = errors.New("transcript: session id is not a UUID")
	// ErrNotRegular: the path is a symlink, a directory or another
	// non-regular file.
	ErrNotRegular = errors.New("transcript: not a regular file")
)

// opPrefix begins the Op of every *fs.PathError the package returns.
const opPrefix = "transcript "

// pathError records an operation on a path that failed: an *fs.PathError
// whose Op names the package and the operation ("transcript locate",
// "transcript open", "transcript read", "transcript riders", ...), Path
// the file or directory involved, Err the cause (often one of the
// sentinels, or the os error).
func pathError(op, path string, err error) error {
	return &fs.PathError{Op: opPrefix + op, Path: path, Err: err}
}

// ours reports whether err is already a path error of this package.
func ours(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.HasPrefix(pe.Op, opPrefix)
}
