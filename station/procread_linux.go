package station

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// maxProcFile bounds the read of one procfs file (a stat line is well
// under a kilobyte).
const maxProcFile = 64 << 10

// readProcFile reads a small procfs file with bare system calls: open,
// read to its end, close. os.ReadFile would also fstat it and offer it to
// the runtime's poller (five calls more for each process a send or a
// listing looks at); a procfs file never blocks.
func readProcFile(path string) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 512)
	for {
		if len(b) == cap(b) {
			if len(b) >= maxProcFile {
				return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", maxProcFile)}
			}
			b = append(b, make([]byte, cap(b))...)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}
