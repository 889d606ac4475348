package receipt

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// Kind says which verb wrote a row.
type Kind string

// The kinds of rows.
const (
	KindSend   Kind = "send"
	KindResume Kind = "resume"
	KindStart  Kind = "start"
)

// Writer appends rows to one receipts file. It holds no secret: nothing it
// is given is a token, and the rows it knows have no field for one. The
// first row on a fresh machine makes the file 0600 and its directory (the
// state dir) with any missing parents 0700, as XDG asks of a state dir.
type Writer struct {
	// Path is the receipts file, normally station.Paths.ReceiptsFile():
	// an absolute path (Append writes nothing under a relative one).
	Path string
	// Now stamps rows whose ts is empty; nil means time.Now.
	Now func() time.Time
}

// errRelative is a receipts path that is not absolute (a zero Writer's):
// nothing is written to the working directory.
var errRelative = errors.New("not an absolute path")

// pathError is a receipt that could not be written or read: an
// *fs.PathError whose Op names the package ("receipt append", "receipt
// marshal", "receipt find").
func pathError(op, path string, err error) error {
	return &fs.PathError{Op: "receipt " + op, Path: path, Err: err}
}

// stamper is a row that fills its ts and ts_ms when they are unset.
type stamper interface {
	stamped(t time.Time) any
}

// Append writes row as one JSON line. A [SendRow], [ResumeRow] or
// [StartRow] (or a pointer to one) whose TS is empty is stamped with Now
// first; any other value is written as it marshals.
func (w *Writer) Append(row any) error {
	if s, ok := row.(stamper); ok {
		now := time.Now
		if w.Now != nil {
			now = w.Now
		}
		row = s.stamped(now())
	}
	var b []byte
	var err error
	if r, ok := row.(SendRow); ok {
		// A send row writes itself, compact: json.Marshal would only
		// check and copy it. Any other Marshaler's output is compacted
		// by json.Marshal, so a line stays one line.
		b, err = r.MarshalJSON()
	} else {
		b, err = json.Marshal(row)
	}
	if err != nil {
		return pathError("marshal", w.Path, err)
	}
	if !filepath.IsAbs(w.Path) {
		// A zero Writer's, or a zero station.Config's: the row would go
		// to the working directory, whatever it is.
		return pathError("append", w.Path, errRelative)
	}
	if _, err := fsx.AppendLine(w.Path, b); err != nil {
		return pathError("append", w.Path, err)
	}
	return nil
}
