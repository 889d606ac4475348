//go:build !linux

package station

import "os"

// readProcFile reads a small procfs file.
func readProcFile(path string) ([]byte, error) { return os.ReadFile(path) }
