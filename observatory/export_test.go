package observatory

import (
	"time"

	"github.com/oo-family/oo-claude/station"
)

// WithFileNow returns o with the rider cache's clock (the kernel's, which
// a file's change time is held to) set to now.
func WithFileNow(o Options, now func() time.Time) Options {
	o.fileNow = now
	return o
}

// RiderCacheFile is the rider cache file of the station paths p.
func RiderCacheFile(p station.Paths) string { return riderCacheFile(p.StateDir, p.ProjectsDir) }
