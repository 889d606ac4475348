package transcriptfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/oo-family/oo-claude/internal/fsx"
)

// DefaultRidingWindow is the riding window of oo-claude's riding rule
// (OO_CLAUDE_RIDING_WINDOW_S's default).
const DefaultRidingWindow = 600 * time.Second

// RiderMeta is agent-<id>.meta.json, the parent's Agent call.
type RiderMeta struct {
	AgentType   string `json:"agentType"`
	Description string `json:"description"`
	Model       string `json:"model"`
	ToolUseID   string `json:"toolUseId"`
	SpawnDepth  int    `json:"spawnDepth"`
	Finished    bool   `json:"finished"`
}

// ReadRiderMeta reads an agent-<id>.meta.json file (at most 1 MiB; a
// symlink is refused). Fields of an unexpected JSON type are left zero.
func ReadRiderMeta(path string) (RiderMeta, error) {
	b, err := fsx.AppendFile(nil, path, maxRiderMeta)
	return readRiderMeta(path, b, err)
}

// ReadRiderMetaEntry is [ReadRiderMeta] for the entry e of the directory
// dir as a listing gave it ([fsx.AppendDirEntry]: the entry's type stands
// for the check before the open).
func ReadRiderMetaEntry(dir string, e fs.DirEntry) (RiderMeta, error) {
	b, err := fsx.AppendDirEntry(nil, dir, e, maxRiderMeta)
	return readRiderMeta(filepath.Join(dir, e.Name()), b, err)
}

// readRiderMeta is ReadRiderMeta after its first read, b and err. Most
// meta files are a few hundred bytes: one read of what fstat counted, on
// a bare descriptor. One larger than the bound is read as it always was,
// its first MiB.
func readRiderMeta(path string, b []byte, err error) (RiderMeta, error) {
	if err == nil {
		return parseRiderMeta(path, b)
	}
	if !errors.Is(err, fsx.ErrTooLarge) {
		if errors.Is(err, fsx.ErrSymlink) || errors.Is(err, fsx.ErrNotRegular) {
			err = ErrNotRegular
		}
		return RiderMeta{}, fmt.Errorf("transcript: open %s: %w", path, err)
	}
	f, _, err := OpenRegular(path)
	if err != nil {
		return RiderMeta{}, fmt.Errorf("transcript: open %s: %w", path, err)
	}
	defer f.Close()
	b, err = io.ReadAll(io.LimitReader(f, maxRiderMeta))
	if err != nil {
		return RiderMeta{}, fmt.Errorf("transcript: read %s: %w", path, err)
	}
	return parseRiderMeta(path, b)
}

// maxRiderMeta is the most of a meta file ReadRiderMeta reads.
const maxRiderMeta = 1 << 20

// parseRiderMeta decodes a meta file's bytes b; fields of an unexpected
// JSON type are left zero.
func parseRiderMeta(path string, b []byte) (RiderMeta, error) {
	var m RiderMeta
	err := json.Unmarshal(b, &m)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		err = nil
	}
	if err != nil {
		return RiderMeta{}, fmt.Errorf("transcript: read %s: %w", path, err)
	}
	return m, nil
}
