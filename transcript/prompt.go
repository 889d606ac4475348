package transcript

import "github.com/oo-family/oo-claude/internal/transcriptfile"

// PromptKind says who started a turn.
type PromptKind string

// Prompt kinds.
const (
	// PromptUser: the user (or the program driving claude -p) typed it;
	// in the interactive TUI its row has origin kind "human".
	PromptUser PromptKind = "user"
	// PromptPeer: a peer's line that started a turn of its own (a line
	// still queued when the previous turn ended, or sent as "later").
	PromptPeer PromptKind = "peer"
	// PromptSystem: Claude Code itself started the turn, e.g. with a
	// task notification when a background agent finished.
	PromptSystem PromptKind = "system"
)

// promptKind classifies a row as the start of a turn. It returns false for
// every row that does not start one: non-user rows, sidechain rows, user
// rows that only carry tool results, system-injected meta rows (isMeta
// without a peer origin) and compaction summaries.
func promptKind(r *transcriptfile.Row) (PromptKind, bool) {
	if r.Type != transcriptfile.RowUser || r.IsSidechain || r.IsCompactSummary || r.Message == nil {
		return "", false
	}
	peer := r.Origin != nil && r.Origin.Kind == transcriptfile.OriginKindPeer || r.TurnOrigin == transcriptfile.OriginKindPeer
	if r.IsMeta && !peer {
		return "", false
	}
	prompt := false
	for _, b := range r.Message.Blocks() {
		if b.Type != "tool_result" {
			prompt = true
			break
		}
	}
	if !prompt {
		return "", false
	}
	switch {
	case peer:
		return PromptPeer, true
	case r.Origin != nil && r.Origin.Kind != "" && r.Origin.Kind != transcriptfile.OriginKindHuman:
		return PromptSystem, true
	}
	return PromptUser, true
}
