package door

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Dial connects to the door at socket and reads the listener's SO_PEERCRED.
// A listener of another user, or with ExpectPID set another process, gets
// its connection closed before a byte is written, and Dial returns a
// [*PeerMismatchError].
func (d *Dialer) Dial(ctx context.Context, socket string) (*Conn, error) {
	nc, err := d.dial(ctx, socket)
	if err != nil {
		return nil, &OpError{Op: "dial", Socket: socket, Err: err}
	}
	cred, err := peerCred(nc)
	if err != nil {
		nc.Close()
		return nil, &OpError{Op: "peercred", Socket: socket, Err: err}
	}
	if uid := d.wantUID(); cred.UID != uid || (d.ExpectPID != 0 && cred.PID != d.ExpectPID) {
		nc.Close()
		return nil, &PeerMismatchError{Socket: socket, Want: d.ExpectPID, Got: cred.PID, WantUID: uid, GotUID: cred.UID}
	}
	return &Conn{socket: socket, settle: d.settle(), peer: cred, nc: nc}, nil
}

func rawConn(nc any) (syscall.RawConn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, ErrNotUnixConn
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	return rc, nil
}

func peerCred(nc any) (Cred, error) {
	rc, err := rawConn(nc)
	if err != nil {
		return Cred{}, err
	}
	var (
		uc   *unix.Ucred
		uerr error
	)
	if err := rc.Control(func(fd uintptr) {
		uc, uerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Cred{}, err
	}
	if uerr != nil {
		return Cred{}, os.NewSyscallError("getsockopt", uerr)
	}
	return Cred{PID: int(uc.Pid), UID: int(uc.Uid), GID: int(uc.Gid)}, nil
}

// Deliver writes m's frames in one write (the auth frame only if nothing was
// written on this connection before), then settles: it waits up to the
// settle for the receiver to hang up, by polling the socket for
// POLLRDHUP/POLLHUP/POLLIN through the runtime's poller. A hang-up, an error
// or any byte within the settle is [ErrRefused]; a quiet settle is success.
// Cancelling ctx ends the write or the settle early with ctx.Err().
// After any error but an invalid message the Conn only closes ([ErrBroken]).
// A Conn not from Dial (the zero value) returns an [OpError]
// wrapping [net.ErrClosed].
func (c *Conn) Deliver(ctx context.Context, m Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf, err := m.appendFrames(nil, !c.written)
	if err != nil {
		return err
	}
	if c.broken {
		return &OpError{Op: "write", Socket: c.socket, Err: ErrBroken}
	}
	if c.nc == nil {
		return &OpError{Op: "write", Err: net.ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		return &OpError{Op: "write", Socket: c.socket, Err: err}
	}
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(aLongTimeAgo) })
	defer func() {
		if !stop() {
			// The context fired and set a past deadline that may still
			// land after any reset: this connection is done.
			c.broken = true
		}
	}()

	c.written = true
	if _, err := c.nc.Write(buf); err != nil {
		c.broken = true // how much went out is unknown
		return &OpError{Op: "write", Socket: c.socket, Err: c.cause(ctx, err)}
	}
	if c.settle <= 0 {
		return nil
	}
	if err := c.waitSettle(ctx); err != nil {
		c.broken = true
		return &OpError{Op: "settle", Socket: c.socket, Err: err}
	}
	return nil
}

// cause maps an I/O error to ctx.Err() when the context woke it, and to
// ErrRefused (keeping the errno) when the receiver had closed.
func (c *Conn) cause(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return ctx.Err()
	}
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return err
}

func (c *Conn) waitSettle(ctx context.Context) error {
	rc, err := rawConn(c.nc)
	if err != nil {
		return err
	}
	if err := c.nc.SetReadDeadline(time.Now().Add(c.settle)); err != nil {
		return err
	}
	defer c.nc.SetReadDeadline(time.Time{})
	if err := ctx.Err(); err != nil {
		return err // the context's past deadline may have been overwritten
	}
	var (
		revents int16
		perr    error
	)
	rerr := rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
		for {
			_, perr = unix.Poll(fds, 0)
			if perr != unix.EINTR {
				break
			}
		}
		if perr != nil {
			return true
		}
		revents = fds[0].Revents
		// false: nothing yet, let the runtime poller wait for readiness
		// (its epoll set includes EPOLLRDHUP) or the deadline.
		return revents != 0
	})
	switch {
	case perr != nil:
		return os.NewSyscallError("poll", perr)
	case rerr != nil && errors.Is(rerr, os.ErrDeadlineExceeded):
		if err := ctx.Err(); err != nil {
			return err
		}
		return nil // a quiet settle: the receiver kept the connection
	case rerr != nil:
		return rerr
	}
	return fmt.Errorf("%w: %s", ErrRefused, describe(revents))
}

func describe(revents int16) string {
	switch {
	case revents&unix.POLLERR != 0:
		return "socket error"
	case revents&(unix.POLLHUP|unix.POLLRDHUP) != 0:
		return "receiver hung up"
	case revents&unix.POLLIN != 0:
		return "receiver wrote a byte"
	}
	return fmt.Sprintf("poll revents %#x", revents)
}
