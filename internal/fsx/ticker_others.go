//go:build !linux

package fsx

import "time"

func newTimerfdTicker(time.Duration) *Ticker { return nil }
