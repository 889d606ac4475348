// Package receipt writes oo-claude's receipts: one JSON line per send,
// resume and start, appended to <state dir>/receipts.jsonl.
//
// It guarantees: every row is one line written with a single O_APPEND write
// (so rows of concurrent processes never interleave), the file is created
// 0600 in a 0700 directory and a symlink at its path is refused; each row
// type carries every key the v0.1 contract names for it (COMPATIBILITY.md,
// "Added keys (extensions)"), unused ones as null, so readers
// can rely on the key set (oo-claude only adds keys, never renames or drops
// one: the send row's seen and seen_s say whether the send's seen wait
// found the line in the session's transcript); and a [Writer] takes no
// token and its rows have no field that could hold one. A caller that cannot write a receipt still has
// its verdict: put the error in the row's receipt_write_error and print it.
package receipt
