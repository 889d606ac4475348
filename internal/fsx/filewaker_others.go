//go:build !linux

package fsx

import "time"

// newFileWaker is NewFileWaker where inotify is not: a directory watch.
func newFileWaker(fallback time.Duration, files []string) *Waker {
	return NewWaker(fallback, files...)
}
