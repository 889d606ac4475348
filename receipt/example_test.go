package receipt_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/oo-family/oo-claude/receipt"
)

func ExampleWriter_Append() {
	dir, _ := os.MkdirTemp("", "receipts")
	defer os.RemoveAll(dir)
	w := &receipt.Writer{
		Path: filepath.Join(dir, "receipts.jsonl"),
		Now:  func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
	}
	// Keys that may be null are pointers.
	running, hint := false, "oo-claude resume 017c3f59-43cc-4dc8-bfb6-5e9a5625a864"
	row := receipt.SendRow{
		Class:   "queued-offline",
		Target:  "017c3f59-43cc-4dc8-bfb6-5e9a5625a864",
		Running: &running,
		Hint:    &hint,
	}
	if err := w.Append(row); err != nil {
		// Never hide the verdict: report the failure in the printed row.
		msg := err.Error()
		row.ReceiptWriteError = &msg
	}
	b, _ := os.ReadFile(w.Path)
	fmt.Print(string(b[:93]))
	// Output: {"ts":"2026-11-30T12:00:00.000Z","ts_ms":1796040000000,"kind":"send","class":"queued-offline"
}
