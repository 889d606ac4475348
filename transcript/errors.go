package transcript

import (
	"errors"
	"fmt"
)

// Sentinel errors callers branch on. They are returned wrapped, usually in
// an *Error; test for them with errors.Is.
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

// Error records an operation on a path that failed.
type Error struct {
	Op   string // "locate", "open", "read", "riders", ...
	Path string // the file or directory involved
	Err  error  // the cause; often one of the sentinels or an *fs.PathError
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "transcript: " + e.Op + ": " + fmt.Sprint(e.Err)
	}
	return "transcript: " + e.Op + " " + e.Path + ": " + fmt.Sprint(e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
