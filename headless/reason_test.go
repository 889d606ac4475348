package headless_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/inboxv1"
)

// Every refusal's error matches its reason with errors.Is (and no other
// reason), and the receipt and result file keep the v0.1 strings.
func TestRefusalReasonsMatchErrorsIs(t *testing.T) {
	cwd := t.TempDir()
	tests := []struct {
		name   string
		resume *headless.ResumeRequest
		start  *headless.StartRequest
		want   inboxv1.Reason
		text   string
	}{
		{"resume bad id", &headless.ResumeRequest{SessionID: "x", Line: "hi"}, nil, headless.ReasonBadSessionID, "bad-session-id"},
		{"resume bad line", &headless.ResumeRequest{SessionID: sid, Line: "-p"}, nil, headless.ReasonBadLine, "bad-line"},
		{"resume bad model", &headless.ResumeRequest{SessionID: sid, Line: "hi", Model: "-x"}, nil, headless.ReasonBadModel, "bad-model"},
		{"resume bad self", &headless.ResumeRequest{SessionID: sid, Line: "hi", Self: "rel"}, nil, headless.ReasonBadBinary, "bad-binary"},
		{"resume no transcript", &headless.ResumeRequest{SessionID: sid, Line: "hi", Self: self}, nil, headless.ReasonNoTranscript, "no-transcript"},
		{"start bad tools", nil, &headless.StartRequest{Prompt: "go", CWD: cwd, Self: self, Tools: "-x"}, headless.ReasonBadTools, "bad-tools"},
		{"start bad limits", nil, &headless.StartRequest{Prompt: "go", CWD: cwd, Self: self, MaxTurns: -1}, headless.ReasonBadLimits, "bad-limits"},
		{"start bad doorman", nil, &headless.StartRequest{Prompt: "go", CWD: cwd, Self: self, Doorman: "x"}, headless.ReasonBadDoorman, "bad-doorman"},
		{"start bad cwd", nil, &headless.StartRequest{Prompt: "go", CWD: "/nonexistent/dir", Self: self}, headless.ReasonNoUsableCWD, "no-usable-cwd"},
		{"start bad out", nil, &headless.StartRequest{Prompt: "go", CWD: cwd, Self: self, Out: "rel.json"}, headless.ReasonBadOut, "bad-out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, _ := newRunner(t)
			var err error
			var row any
			if tt.resume != nil {
				var res headless.ResumeResult
				res, err = r.Resume(context.Background(), *tt.resume)
				row = res.Row("")
			} else {
				var res headless.StartResult
				res, err = r.Start(context.Background(), *tt.start)
				row = res.Row("")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("errors.Is(%v, %s) = false", err, tt.want)
			}
			for _, other := range []inboxv1.Reason{headless.ReasonSessionInUse, headless.ReasonBadName, inboxv1.ReasonEmpty} {
				if other != tt.want && errors.Is(err, other) {
					t.Errorf("errors.Is(%v, %s) = true", err, other)
				}
			}
			var re *headless.RefusedError
			if !errors.As(err, &re) || re.Reason != tt.want || string(re.Reason) != tt.text {
				t.Errorf("RefusedError %+v, want reason %q", re, tt.text)
			}
			b, _ := json.Marshal(row)
			var m map[string]any
			json.Unmarshal(b, &m)
			if m["reason"] != tt.text || m["class"] != "refused" {
				t.Errorf("receipt reason %v class %v, want %q refused", m["reason"], m["class"], tt.text)
			}
		})
	}
}
