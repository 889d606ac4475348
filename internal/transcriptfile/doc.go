// Package transcriptfile is the file layer of Claude Code's session
// transcripts, shared by the module's packages: the project directory
// encoding, the row model and its lenient parser, the backwards line
// reader, a transcript's recorded cwd and a rider's meta file. The public
// reader is package transcript; this package holds what only the module's
// own packages (transcript, observatory, headless, doorman, the CLI and the
// fakes) need.
package transcriptfile
