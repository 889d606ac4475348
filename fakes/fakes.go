// Package fakes holds what every fake of oo-claude shares: TB, the part of
// testing.TB a fake needs of its caller, and Program, a TB for a program
// that is not a test.
//
// The fakes themselves live in the packages below it: fakestation (a
// station in a temporary directory), fakedoor (a session's door),
// fakedoorman (a session's doorman), fakeowner (a session with its door),
// fakesession (a session that answers), fakeclaude (claude and systemd-run
// stand-ins) and fakemodel (a fake Messages API on loopback).
//
// They share one style: a fake is configured by one Options struct (or, for
// fakeclaude, its Script) given when it starts, as the fields of an
// httptest.Server are set before it starts; and every Wait method takes a
// context and returns the context's error when it ends first.
package fakes

import (
	"fmt"
	"os"
	"sync"
)

// TB is the part of testing.TB a fake needs: *testing.T, *testing.B and
// *testing.F satisfy it, and so does a *Program.
//
// A fake calls Fatalf only on a failure of its own set-up (a file it could
// not write, a socket it could not open) and expects it not to return.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

// Program is a TB for a program that uses the fakes outside a test, such
// as a demo. Its zero value is ready to use; Close runs what the fakes
// registered with Cleanup and removes the temporary directories, as the
// end of a test does.
type Program struct {
	mu       sync.Mutex
	cleanups []func()
	dirs     []string
}

var _ TB = (*Program)(nil)

// Helper does nothing: a program has no test lines to attribute.
func (p *Program) Helper() {}

// Fatalf closes p, prints the message to stderr and exits the program
// with status 1, as a failed test stops.
func (p *Program) Fatalf(format string, args ...any) {
	p.Close()
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// Cleanup registers f to run when p is closed, after the functions
// registered later (last in, first out, as testing.T runs them).
func (p *Program) Cleanup(f func()) {
	if f == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

// TempDir makes a new directory (0700) that Close removes. A directory that
// cannot be made stops the program through Fatalf.
func (p *Program) TempDir() string {
	d, err := os.MkdirTemp("", "oo-claude-fakes-")
	if err != nil {
		p.Fatalf("fakes: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dirs = append(p.dirs, d)
	return d
}

// Close runs the registered cleanups, last first, then removes the
// temporary directories. It is safe to call more than once; each cleanup
// runs once.
func (p *Program) Close() {
	for {
		p.mu.Lock()
		n := len(p.cleanups)
		if n == 0 {
			dirs := p.dirs
			p.dirs = nil
			p.mu.Unlock()
			for _, d := range dirs {
				os.RemoveAll(d)
			}
			return
		}
		f := p.cleanups[n-1]
		p.cleanups = p.cleanups[:n-1]
		p.mu.Unlock()
		f()
	}
}
