// Package inbox is the I/O of the Claude inbox file contract v1, whose
// types and constants are package inboxv1's: the line rules (CheckLine,
// CheckFrom, SenderTag, Tagged, the structured form and Decode), the
// inbox's files' one reader and one writer each (the inbox under its removal
// protocol, the ack file, the offset, the doorman's heartbeat and its
// attempt record), the trust check of an inbox, the per-(target, sender)
// throttle ledger, and the inbox state that the observatory, the doctor and
// headless report (ReadState, ScanState).
//
// A sender program does not need it: claudeinbox.Sender does the sender's
// whole part. The doorman, the observatory, the doctor, headless, the CLI
// and the fakes read and write the files through it, so each file format
// has one reader and one writer.
//
// The inbox state is read without writing or locking anything: an inbox is
// read in one sequential pass of 64 KiB reads (never held in memory whole);
// a last line without its newline (being appended) is not counted; pending
// never goes below 0; a symlink in place of an inbox, ack, offset or
// heartbeat file is not followed.
package inbox
