// Package topreq is what `oo-claude top` asks of the top program,
// oo-claude-top: the request, and the command line that carries it from
// one binary to the other.
//
// The view links the Charm stack (Bubble Tea, Lip Gloss, Bubbles and what
// they pull in), and every package a Go binary links runs its init at
// every start: a clipboard package alone looks for four commands on PATH.
// So the view is a program of its own, and oo-claude, which every send
// starts, links only this: it parses and checks the verb's flags, then
// execs oo-claude-top (the same process, its pid, stdio and terminal kept)
// with [Request.Argv]; the top program reads it back with [Parse].
package topreq

import (
	"errors"
	"fmt"
	"strings"
)

// verb is the first argument of the top program's command line, as of
// oo-claude's.
const verb = "top"

// Request is one run of the view.
type Request struct {
	// OOClaude is the absolute path of the oo-claude binary that runs the
	// view: the view's read (enter) is that binary's read verb.
	OOClaude string
	// From is the sender name of the lines sent with s.
	From string
	// Hosts are the ssh destinations of the stations to show (top
	// --host); none is this station.
	Hosts []string
}

// errRequest is the cause of every error of Parse.
var errRequest = errors.New("top")

// Argv is r as the top program's arguments (after its path): top, then
// --oo-claude=PATH, --from=NAME and one --host=DEST a host.
func (r Request) Argv() []string {
	a := []string{verb, "--oo-claude=" + r.OOClaude, "--from=" + r.From}
	for _, h := range r.Hosts {
		a = append(a, "--host="+h)
	}
	return a
}

// Parse reads a request back from args (a command line after its path),
// exactly as Argv writes it: anything else is an error.
func Parse(args []string) (Request, error) {
	var r Request
	if len(args) < 3 || args[0] != verb {
		return r, fmt.Errorf("%w: the arguments do not start with %q, --oo-claude and --from", errRequest, verb)
	}
	path, ok := strings.CutPrefix(args[1], "--oo-claude=")
	if !ok || !strings.HasPrefix(path, "/") {
		return Request{}, fmt.Errorf("%w: %q is not --oo-claude=ABSOLUTE-PATH", errRequest, args[1])
	}
	from, ok := strings.CutPrefix(args[2], "--from=")
	if !ok {
		return Request{}, fmt.Errorf("%w: %q is not --from=NAME", errRequest, args[2])
	}
	r.OOClaude, r.From = path, from
	for _, a := range args[3:] {
		h, ok := strings.CutPrefix(a, "--host=")
		if !ok || h == "" {
			return Request{}, fmt.Errorf("%w: unknown argument %q", errRequest, a)
		}
		r.Hosts = append(r.Hosts, h)
	}
	return r, nil
}
