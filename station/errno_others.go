//go:build !linux

package station

import "errors"

var errESRCH = errors.New("no such process")
