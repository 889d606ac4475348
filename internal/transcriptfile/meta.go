package transcriptfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
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
	f, _, err := OpenRegular(path)
	if err != nil {
		return RiderMeta{}, fmt.Errorf("transcript: open %s: %w", path, err)
	}
	defer f.Close()
	var m RiderMeta
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err == nil {
		err = json.Unmarshal(b, &m)
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			err = nil
		}
	}
	if err != nil {
		return RiderMeta{}, fmt.Errorf("transcript: read %s: %w", path, err)
	}
	return m, nil
}
