package receipt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// MaxFindBytes bounds how far [Find] reads back from the end of a
// receipts file.
const MaxFindBytes = 64 << 20

// ErrNotFound is [Find]'s answer when no row within its bound names the
// msg_id.
var ErrNotFound = errors.New("no receipt with this msg_id")

// Find returns the newest row of the receipts file at path whose msg_id
// is msgID, as it was written (one JSON object, without its newline). It
// reads from the end, at most [MaxFindBytes], so a long-lived station's
// file costs a bounded read; a missing file, or no such row within the
// bound, is [ErrNotFound]. A row that does not parse is skipped.
func Find(path, msgID string) (json.RawMessage, error) {
	if msgID == "" {
		return nil, fmt.Errorf("receipt find: %w (empty msg_id)", ErrNotFound)
	}
	f, err := fsx.OpenRead(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("receipt find %s: %w", path, ErrNotFound)
		}
		return nil, pathError("find", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, pathError("find", path, err)
	}
	const chunk = 64 << 10
	end := fi.Size()
	floor := max(end-MaxFindBytes, 0)
	var carry []byte // the start of a line whose beginning is further back
	buf := make([]byte, chunk)
	needle := []byte(msgID)
	for end > floor {
		start := max(end-chunk, floor)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, pathError("find", path, err)
		}
		block := append(append([]byte(nil), buf[:n]...), carry...)
		end = start
		// Every complete line of block, newest first; the first part
		// stays for the next round unless it starts the file (or the
		// bound).
		for {
			i := bytes.LastIndexByte(block, '\n')
			if i < 0 {
				break
			}
			if row := match(block[i+1:], needle, msgID); row != nil {
				return row, nil
			}
			block = block[:i]
		}
		carry = block
	}
	if row := match(carry, needle, msgID); row != nil && floor == 0 {
		return row, nil
	}
	return nil, fmt.Errorf("receipt find %s: %w", path, ErrNotFound)
}

// match returns line when it is a row whose msg_id is msgID.
func match(line, needle []byte, msgID string) json.RawMessage {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || !bytes.Contains(line, needle) {
		return nil
	}
	var r struct {
		MsgID *string `json:"msg_id"`
	}
	if json.Unmarshal(line, &r) != nil || r.MsgID == nil || *r.MsgID != msgID {
		return nil
	}
	return append(json.RawMessage(nil), line...)
}
