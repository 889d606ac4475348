package inboxv1

import "path/filepath"

// The names of an inbox's files: the inbox is <dir>/<session id> +
// [SuffixInbox], and every side file is the inbox's path with its suffix.
const (
	SuffixInbox     = ".inbox"           // the lines, appended by senders
	SuffixAck       = ".ack"             // one JSON line per handled line, appended by the doorman
	SuffixOffset    = ".offset"          // the doorman's byte offset, replaced atomically
	SuffixHeartbeat = ".doorman.json"    // the doorman's heartbeat, replaced atomically
	SuffixLock      = ".doorman.lock"    // flock, one deliverer per inbox
	SuffixAttempt   = ".doorman.attempt" // the doorman's record of its door write (an extension)
)

// Files are the paths of one inbox's files. Every name derives from
// <dir>/<session id>.inbox; [FilesFor] makes them.
type Files struct {
	// Inbox is <dir>/<sid>.inbox: the lines, appended by senders.
	Inbox string
	// Ack is <inbox>.ack: one JSON line ([Ack]) per handled line,
	// appended by the doorman.
	Ack string
	// Offset is <inbox>.offset: the doorman's byte offset of the first
	// line it has not handled, replaced atomically.
	Offset string
	// Heartbeat is <inbox>.doorman.json: the doorman's [Heartbeat],
	// replaced atomically.
	Heartbeat string
	// Lock is <inbox>.doorman.lock: the flock that lets one doorman
	// deliver from the inbox.
	Lock string
	// Attempt is <inbox>.doorman.attempt: the doorman's record of the door
	// write of the line it is delivering (an extension), replaced
	// atomically before each write, so no doorman writes a line the
	// receiver already queued.
	Attempt string
}

// FilesFor returns the files of session sid's inbox in dir.
func FilesFor(dir, sid string) Files {
	in := filepath.Join(dir, sid+SuffixInbox)
	return Files{Inbox: in, Ack: in + SuffixAck, Offset: in + SuffixOffset, Heartbeat: in + SuffixHeartbeat, Lock: in + SuffixLock, Attempt: in + SuffixAttempt}
}
