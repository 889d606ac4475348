// Package jsonrow holds the value shapes the module's JSON rows and files
// share: the one timestamp format (receipts, acks, heartbeats, attempt
// records), seconds as the rows carry them, and pointers for the keys that
// may be null.
package jsonrow

import (
	"fmt"
	"time"
)

// timeFormat is how every timestamp the module writes is written: ISO
// 8601 in UTC with milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTime renders t as the module's files and rows write it.
func FormatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// ParseTime reads a timestamp of the files (any RFC 3339 form, also
// without zone).
func ParseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("bad timestamp %q", s)
}

// Stamp returns a row's ts and ts_ms for t.
func Stamp(t time.Time) (ts string, tsMS int64) {
	return FormatTime(t), t.UnixMilli()
}

// Seconds turns a duration into the float seconds rows carry (millisecond
// precision), as a pointer for the nullable keys.
func Seconds(d time.Duration) *float64 {
	s := float64(d.Milliseconds()) / 1000
	return &s
}

// Ptr returns a pointer to v: rows use pointers for keys that may be null.
func Ptr[T any](v T) *T { return &v }
