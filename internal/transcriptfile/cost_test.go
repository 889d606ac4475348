package transcriptfile

import (
	"strings"
	"testing"
)

// LookBackCost stops at the last cost-state row that carries its figure,
// counting each request after it once (its rows repeat the usage), and
// says when its bound, not the file's start, ended the look back.
func TestLookBackCost(t *testing.T) {
	const (
		state   = `{"type":"cost-state","totalCostUSD":0.5}`
		noFig   = `{"type":"cost-state"}`
		req1    = `{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":10,"output_tokens":2}}}`
		req2a   = `{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":100,"output_tokens":5}}}`
		req2b   = `{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":100,"output_tokens":5}}}`
		rider   = `{"type":"assistant","isSidechain":true,"message":{"id":"r1","usage":{"input_tokens":1000}}}`
		padding = `{"type":"user","message":{"content":"` // + x… + `"}}`
	)
	tests := []struct {
		name      string
		lines     []string
		bound     int64
		wantUSD   float64 // -1: no state
		wantTok   int64
		wantLast  string
		wantBound bool
	}{
		{"state then requests", []string{req1, state, req2a, req2b, rider, noFig}, 1 << 20, 0.5, 105, "m2", false},
		{"no state", []string{req1, req2a}, 1 << 20, -1, 117, "m2", false},
		{"bound before the state", []string{state, padding + strings.Repeat("x", 4096) + `"}}`, req1}, 1024, -1, 12, "m1", true},
		{"empty", nil, 1 << 20, -1, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := ""
			for _, l := range tt.lines {
				text += l + "\n"
			}
			b := LookBackCost(strings.NewReader(text), int64(len(text)), tt.bound)
			usd := -1.0
			if b.State != nil {
				usd = *b.State.TotalCostUSD
			}
			if usd != tt.wantUSD || b.Tally.Tokens != tt.wantTok || b.LastMsg != tt.wantLast || b.Bounded != tt.wantBound {
				t.Errorf("state %v, tokens %d, last %q, bounded %v; want %v, %d, %q, %v",
					usd, b.Tally.Tokens, b.LastMsg, b.Bounded, tt.wantUSD, tt.wantTok, tt.wantLast, tt.wantBound)
			}
		})
	}
}
