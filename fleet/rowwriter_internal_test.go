package fleet

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/oo-family/oo-claude/receipt"
)

// TestRowWriterRows: rows split across writes, several in one write and
// lines that are no row (a banner) come out as the rows they are.
func TestRowWriterRows(t *testing.T) {
	var got []string
	w := &rowWriter{onRow: func(r receipt.SendRow) { got = append(got, r.Class) }}
	out := "Welcome\n" + `{"kind":"send","class":"delivered-steer"}` + "\n" + `{"kind":"send","class":"timeout"}` + "\n" + `{"class":"dropped"}`
	for i := 0; i < len(out); i += 7 {
		w.Write([]byte(out[i:min(i+7, len(out))]))
	}
	w.Write([]byte("\n"))
	if strings.Join(got, ",") != "delivered-steer,timeout,dropped" {
		t.Errorf("rows %v", got)
	}
}

// TestRowWriterLinear: a long line written in small pieces is scanned
// once, not again at every write: 4 MiB in 4 KiB writes allocates about
// the line, where scanning what it held so far at each write copied it
// 1024 times (2 GiB; a 60 MB stdout took 38 s).
func TestRowWriterLinear(t *testing.T) {
	var rows int
	w := &rowWriter{onRow: func(receipt.SendRow) { rows++ }}
	chunk := bytes.Repeat([]byte("x"), 4<<10)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 1024 {
		w.Write(chunk)
	}
	w.Write([]byte("\n" + `{"kind":"send","class":"delivered-steer"}` + "\n"))
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("4 MiB in 4 KiB writes allocated %d MiB, want it linear in the line", n>>20)
	}
	if rows != 1 {
		t.Errorf("rows %d after the long line, want the row after it", rows)
	}
}
