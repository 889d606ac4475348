// Package dispatcher is a dispatcher's ask-and-answer, as another project
// writes it on top of oo-claude: start a worker session and have it back
// as soon as it can be steered, send a question to a session and return
// its answer. Its tests are the recipe: they test this dispatcher against
// fakes (fakes/fakesession, fakes/fakeclaude, fakes/fakedoorman), with no
// Claude Code on the machine.
package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oo-family/oo-claude/claudeinbox"
	"github.com/oo-family/oo-claude/headless"
	"github.com/oo-family/oo-claude/station"
	"github.com/oo-family/oo-claude/transcript"
)

// ErrNoAnswer: the line was delivered but no complete answer came in time.
var ErrNoAnswer = errors.New("dispatcher: no answer in time")

// Ask sends question to the session target names and waits up to wait for
// its answer.
func Ask(ctx context.Context, paths station.Paths, target, question string, wait time.Duration) (string, error) {
	s := &claudeinbox.Sender{
		Station:   station.New(paths),
		Wait:      5 * time.Second,
		ReplyWait: wait,
		Witness:   transcript.Witness{ProjectsDir: paths.ProjectsDir},
	}
	v, err := s.Send(ctx, claudeinbox.Request{Target: target, Line: question, From: "dispatcher"})
	if err != nil {
		return "", err
	}
	if !v.Class.Delivered() {
		return "", fmt.Errorf("dispatcher: %s (%s)", v.Class, v.Note)
	}
	if v.Reply == nil {
		return "", ErrNoAnswer
	}
	return v.Reply.Text, nil
}

// StartWorker starts a headless worker session on prompt in cwd and
// returns it as soon as a line sent to it would be delivered (its doorman
// follows its inbox), so the dispatcher can Ask it at once; the run goes on
// under ctx and Run.Wait gives its result. self is the oo-claude binary
// (the doorman Claude Code starts for the session).
func StartWorker(ctx context.Context, r *headless.Runner, self, cwd, prompt string) (*headless.Run, error) {
	return r.StartSteerable(ctx, headless.StartRequest{Prompt: prompt, CWD: cwd, Self: self, Name: "worker"})
}
