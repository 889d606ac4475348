// Package doormanreq is what `oo-claude doorman` asks of the doorman
// program, oo-claude-doorman: the request, and the command line that
// carries it from one binary to the other.
//
// The doorman links the MCP SDK, and every package a Go binary links runs
// its init at every start. So the doorman is a program of its own, and
// oo-claude, which every send starts, links only this: it parses and checks
// the verb's flags, then execs oo-claude-doorman (the same process, its
// pid, stdio and parent kept) with [Request.Argv]; the doorman program
// reads it back with [Parse].
package doormanreq

import (
	"errors"
	"fmt"
	"strings"
)

// verb is the first argument of the doorman program's command line, as of
// oo-claude's: a session runs `<program> doorman --mcp`, and the doorman
// program keeps that line.
const verb = "doorman"

// Request is one run of the doorman.
type Request struct {
	// MCP: the session's MCP stdio server and the follow loop (the
	// registration's way). No other field may be set with it.
	MCP bool
	// Foreground: the foreground loop, delivering into the session this
	// process descends from; Session, Once and JSON refine it.
	Foreground bool
	Session    string // the session id the owner must be ("" any)
	Once       bool   // replay the unread lines, then exit
	JSON       bool   // print the final status as one JSON line
}

// errRequest is the cause of every error of Parse and Check.
var errRequest = errors.New("doorman")

// Check reports whether r is a request the doorman runs: MCP alone, or
// Foreground with its refinements.
func (r Request) Check() error {
	switch {
	case r.MCP && (r.Foreground || r.Once || r.Session != "" || r.JSON):
		return fmt.Errorf("%w: --mcp takes no other flag", errRequest)
	case !r.MCP && !r.Foreground:
		return fmt.Errorf("%w refuses to run without --allow-foreground (or --mcp): a doorman delivers into the session it descends from", errRequest)
	}
	return nil
}

// Argv is r as the doorman program's arguments (after its path): doorman,
// then --mcp, or --allow-foreground with --session=ID, --once and --json
// as set.
func (r Request) Argv() []string {
	if r.MCP {
		return []string{verb, "--mcp"}
	}
	a := []string{verb, "--allow-foreground"}
	if r.Session != "" {
		a = append(a, "--session="+r.Session)
	}
	if r.Once {
		a = append(a, "--once")
	}
	if r.JSON {
		a = append(a, "--json")
	}
	return a
}

// Parse reads a request back from args (a command line after its path),
// exactly as Argv writes it: anything else is an error.
func Parse(args []string) (Request, error) {
	var r Request
	if len(args) == 0 || args[0] != verb {
		return r, fmt.Errorf("%w: the arguments do not start with %q", errRequest, verb)
	}
	seen := map[string]bool{}
	for _, a := range args[1:] {
		name, val, hasVal := strings.Cut(a, "=")
		if seen[name] {
			return Request{}, fmt.Errorf("%w: %s twice", errRequest, name)
		}
		seen[name] = true
		switch {
		case name == "--mcp" && !hasVal:
			r.MCP = true
		case name == "--allow-foreground" && !hasVal:
			r.Foreground = true
		case name == "--session" && hasVal && val != "":
			r.Session = val
		case name == "--once" && !hasVal:
			r.Once = true
		case name == "--json" && !hasVal:
			r.JSON = true
		default:
			return Request{}, fmt.Errorf("%w: unknown argument %q", errRequest, a)
		}
	}
	if err := r.Check(); err != nil {
		return Request{}, err
	}
	return r, nil
}
