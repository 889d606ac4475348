package transcriptfile

import (
	"bytes"
	"errors"
	"io"
)

// CostStateMark is in every cost-state row's text: a line without it is
// not parsed for the session's cost.
const CostStateMark = `"cost-state"`

// CostBack is what the end of a transcript tells of its session's cost,
// read back from its end by [LookBackCost].
type CostBack struct {
	// State is the last cost-state row with its totalCostUSD; nil when
	// none was found within the bound. Claude Code writes one at each
	// process's exit, cumulative over every process of the session.
	State *Row
	// Tally counts the session's own requests after State (every one read
	// when State is nil).
	Tally TokenTally
	// LastMsg is the message id of the newest request read; "" when none.
	LastMsg string
	// Bounded reports that the look back stopped at its bound or at a read
	// error before finding State: what it tells is a lower bound.
	Bounded bool
}

// LookBackCost reads r back from size, at most bound bytes (a torn last
// line dropped), to its last cost-state row that carries totalCostUSD,
// counting the session's requests after it on the way.
func LookBackCost(r io.ReaderAt, size, bound int64) CostBack {
	var b CostBack
	rd := NewReader(r, size, bound)
	newest := true
	for {
		line, _, err := rd.Prev()
		if err != nil {
			// A read error tells as much as the bound: not all of it.
			b.Bounded = rd.Bounded() || !errors.Is(err, io.EOF)
			return b
		}
		if !bytes.Contains(line, []byte(CostStateMark)) && !bytes.Contains(line, []byte(`"assistant"`)) {
			continue
		}
		row, err := ParseRow(line)
		if err != nil {
			continue
		}
		if row.Type == RowCostState && row.TotalCostUSD != nil {
			b.State = &row
			return b
		}
		if b.Tally.Add(&row) && newest {
			newest, b.LastMsg = false, row.Message.ID
		}
	}
}
