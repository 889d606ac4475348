package inbox

import (
	"io"
	"strings"

	"github.com/oo-family/oo-claude/inboxv1"
)

// monitorEraPrefix starts the lines of the first, monitor-era doorman's ack
// file ("<ts> read: <first 80 characters>"). They are not JSON.
const monitorEraPrefix = " read: "

// isMonitorEraAck reports whether an ack line is a monitor-era line.
func isMonitorEraAck(line string) bool {
	return !strings.HasPrefix(strings.TrimSpace(line), "{") && strings.Contains(line, monitorEraPrefix)
}

// ScanMonitorEraAcks calls fn with the text of every monitor-era line of
// r ("<ts> read: <text>", the text trimmed), in order, in bounded memory
// as ScanAcks. fn returns false to stop.
func ScanMonitorEraAcks(r io.Reader, fn func(text string) bool) error {
	return scanLines(r, 0, maxAckLine, func(line []byte, _ int64) bool {
		l := string(line)
		if !isMonitorEraAck(l) {
			return true
		}
		_, text, _ := strings.Cut(l, monitorEraPrefix)
		return fn(strings.TrimSpace(text))
	})
}

// ScanAcks calls fn for every JSON ack in r, in order, with the byte offset
// after the ack's line. Lines that are not acks (monitor-era lines, a torn
// last line) are skipped, and so is a line longer than maxAckLine, without
// being held in memory: a read of any ack file is bounded. fn returns false
// to stop.
func ScanAcks(r io.Reader, start int64, fn func(a inboxv1.Ack, end int64) bool) error {
	return scanLines(r, start, maxAckLine, func(line []byte, end int64) bool {
		if a, err := decodeAck(line); err == nil && a.SHA256 != "" {
			return fn(a, end)
		}
		return true
	})
}
