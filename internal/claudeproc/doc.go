// Package claudeproc is how oo-claude runs the Claude Code binary for
// package headless: the argv of a resume, a start and a detached start's
// systemd-run, the child's scrubbed environment and the descriptors it
// inherits, the process-group runner that stops a run with its
// grandchildren, and the scan for a process that names a session on its
// command line. Its users are headless, the binary and the module's tests.
package claudeproc
