//go:build !linux

package fsx

import "os"

// swapIn puts the file at tmp in path's place, atomically: a rename.
func swapIn(tmp, path string) error { return os.Rename(tmp, path) }
