//go:build !linux

package fsx

// SigsHold reports whether a [Sig] of a file in d can vouch for its
// content. Outside Linux it is false: which file systems keep change
// times locally is not asked there, so every file is read.
func (d *Dir) SigsHold() bool { return false }
