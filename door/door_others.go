//go:build !linux

package door

import "context"

// Dial returns [ErrNotSupported]: the peer check needs Linux's SO_PEERCRED.
func (d *Dialer) Dial(ctx context.Context, socket string) (*Conn, error) {
	return nil, &OpError{Op: "dial", Socket: socket, Err: ErrNotSupported}
}

// Deliver returns [ErrNotSupported].
func (c *Conn) Deliver(ctx context.Context, m Message) error {
	return &OpError{Op: "write", Socket: c.Socket(), Err: ErrNotSupported}
}
