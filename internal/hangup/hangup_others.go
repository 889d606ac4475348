//go:build !linux

package hangup

import (
	"context"
	"os"
)

// Await waits for ctx only: hang-up detection is Linux's here.
func Await(ctx context.Context, f *os.File) error {
	if f == nil {
		return ErrUnsupported
	}
	<-ctx.Done()
	return ctx.Err()
}
