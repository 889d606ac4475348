package station

import "golang.org/x/sys/unix"

// errESRCH is what reading /proc/<pid>/stat of a vanishing process returns.
var errESRCH error = unix.ESRCH
