// Package inboxv1 is the Claude inbox contract v1 as oo-claude reads and
// writes it: the types and constants of its files, each declared once. A
// session's inbox is <dir>/<session id>.inbox; senders append lines to it,
// and the session's doorman carries them through the session's door and
// records what it did in the side files beside it (the ack file, the
// offset, the heartbeat, the lock and the attempt record; see [Files]).
//
// It holds no I/O: claudeinbox sends, doorman delivers, observatory and
// doctor report, and each of them returns or takes these types ([Ack],
// [Heartbeat], [Inbox], [Reason], [State]) so that a program outside the
// module can name every field. The shapes are contract v1's fields first,
// then oo-claude's extension keys; COMPATIBILITY.md in the repository,
// "Inbox contract v1", lists them and where they differ from v0.1.
package inboxv1
