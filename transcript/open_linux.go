package transcript

import (
	"os"
	"syscall"
)

// openNoFollow opens path read-only and refuses a symlink as its last
// component (O_NOFOLLOW).
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
}
