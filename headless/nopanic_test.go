package headless_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/oo-family/oo-claude/headless"
)

// TestZeroValuesRefuseNotPanic: a zero Runner and zero or hostile requests
// get a refusal (class refused, a *RefusedError), never a panic; the
// result methods answer zero values.
func TestZeroValuesRefuseNotPanic(t *testing.T) {
	ctx := context.Background()
	r := &headless.Runner{}
	resumes := []headless.ResumeRequest{
		{},
		{SessionID: sid},
		{SessionID: sid, Line: "hi"}, // no claude binary configured
		{SessionID: "abc", Line: "hi"},
		{SessionID: sid, Line: "hi", Budget: math.NaN(), MaxTurns: -1},
	}
	for _, req := range resumes {
		res, err := r.Resume(ctx, req)
		var re *headless.RefusedError
		if res.Class != headless.Refused || !errors.As(err, &re) {
			t.Errorf("Resume(%+v): class %s, err %v; want refused", req, res.Class, err)
		}
		_ = res.Row("")
	}
	starts := []headless.StartRequest{
		{},
		{Prompt: "go"},
		{Prompt: "go", SessionID: "abc", Systemd: true},
		{Prompt: "go", Budget: math.Inf(1)},
		{Prompt: "go", Doorman: "x"},
	}
	for _, req := range starts {
		res, err := r.Start(ctx, req)
		var re *headless.RefusedError
		if res.Class != headless.Refused || !errors.As(err, &re) {
			t.Errorf("Start(%+v): class %s, err %v; want refused", req, res.Class, err)
		}
		_, _ = res.Row(""), res.Detached()
	}
	for _, path := range []string{"", "relative.json", filepath.Join(t.TempDir(), "missing", "x.json")} {
		if res, err := r.RunUnit(ctx, path); res.Class != headless.Refused || err == nil {
			t.Errorf("RunUnit(%q): class %s, err %v; want refused", path, res.Class, err)
		}
	}
	_, _, _ = headless.ResumeResult{}.Row(""), headless.StartResult{}.Row(""), headless.StartResult{}.Detached()
	if got := headless.Class("").ExitCode(); got != 4 {
		t.Errorf("an unknown class exits %d, want 4", got)
	}
	_ = (&headless.RefusedError{}).Error()
}

// TestRowsHashTheLine: a resume row and a start row carry the sha256 of
// the exact line (prompt) bytes, as a send row does.
func TestRowsHashTheLine(t *testing.T) {
	const line = "héllo\twörld"
	sum := sha256.Sum256([]byte(line))
	want := hex.EncodeToString(sum[:])
	rr := headless.ResumeResult{Line: line}.Row("")
	sr := headless.StartResult{Prompt: line}.Row("")
	for name, got := range map[string]*string{"resume": rr.SHA256, "start": sr.SHA256} {
		if got == nil || *got != want {
			t.Errorf("%s row sha256 %v, want %s", name, got, want)
		}
	}
}
