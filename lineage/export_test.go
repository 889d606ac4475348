package lineage

import (
	"bytes"
	"sort"
)

// ParseRows parses ledger content with the ledger's line parser, skipping
// the lines that are not rows.
func ParseRows(b []byte) []Row {
	var out []Row
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte("\n"))
		if r, ok := parseRow(line); ok {
			out = append(out, r)
		}
	}
	return out
}

// Current is the model of Ledger.Links over rows: the newest row per
// child, in ledger order.
func Current(rows []Row) []Row {
	last := map[string]int{}
	for i, r := range rows {
		last[r.ChildSession] = i
	}
	idx := make([]int, 0, len(last))
	for _, i := range last {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]Row, len(idx))
	for k, i := range idx {
		out[k] = rows[i]
	}
	return out
}
