// Package hangup tells a process that the reader of its standard output
// went away, without writing to it: [Await] returns when a pipe's or a
// socket's far end is closed (POLLHUP or POLLERR on the descriptor), so a
// quiet stream (oo-claude watch on an idle station, run by ssh without a
// tty) ends when its reader does, not at its next write.
package hangup
