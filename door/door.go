package door

import (
	"context"
	"net"
	"os"
	"sync"
	"time"
)

// DefaultSettle is how long one delivery waits for a refusal (a close by the
// receiver) when [Dialer.Settle] is zero. doorman.DoorDialer's Settle means
// the same; the doorman maps OO_CLAUDE_DOOR_SETTLE_S to it.
const DefaultSettle = 250 * time.Millisecond

// NoSettle as [Dialer.Settle] returns right after the write: a refusal is
// then not seen. It is what OO_CLAUDE_DOOR_SETTLE_S=0 maps to.
const NoSettle time.Duration = -1

// defaultTimeout bounds connecting and reading the peer's credentials when
// [Dialer.Timeout] is zero.
const defaultTimeout = 5 * time.Second

// Dialer connects to doors. The zero value dials with net.Dialer, accepts
// only a listener that runs as the caller's user (SO_PEERCRED uid equal to
// the effective uid), and settles [DefaultSettle] per delivery.
type Dialer struct {
	// ExpectPID, when not zero, is the pid the listener must have as well
	// (SO_PEERCRED): the session's claude process. Any other listener gets
	// a [*PeerMismatchError] and not one byte.
	ExpectPID int
	// Timeout bounds the connect and the reading of the peer's
	// credentials; zero means 5 s.
	Timeout time.Duration
	// Settle is how long each delivery waits for a refusal after its write;
	// zero means [DefaultSettle], a negative value (see [NoSettle]) none.
	Settle time.Duration
	// DialContext connects to a Unix socket; nil means net.Dialer's. The
	// connection it returns must implement syscall.Conn.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)

	euid func() int // the uid the listener must have; nil: os.Geteuid (export_test.go)
}

// Cred is the process at the other end of a connection, from SO_PEERCRED.
type Cred struct {
	PID int
	UID int
	GID int
}

// Conn is a connection to one door whose listener passed the peer check.
// Deliver calls are serialised; Close may be called at any time.
type Conn struct {
	socket string
	settle time.Duration
	peer   Cred
	nc     net.Conn

	mu      sync.Mutex // held by Deliver
	written bool       // a frame went out on this connection: no second auth frame
	broken  bool       // a write, settle or context error: Deliver no more
}

// Dial connects to the door at socket with the zero [Dialer]: the listener
// must run as the caller's user.
func Dial(ctx context.Context, socket string) (*Conn, error) {
	var d Dialer
	return d.Dial(ctx, socket)
}

// Peer returns the listener's credentials as read at dial time (zero for
// a Conn not from Dial).
func (c *Conn) Peer() Cred {
	return c.peer
}

// Socket returns the path the connection was dialled to ("" for a Conn
// not from Dial).
func (c *Conn) Socket() string {
	return c.socket
}

// Close closes the connection. A Conn not from Dial (the zero
// value) is closed already: Close returns an [OpError] wrapping
// [net.ErrClosed].
func (c *Conn) Close() error {
	if c.nc == nil {
		return &OpError{Op: "close", Err: net.ErrClosed}
	}
	if err := c.nc.Close(); err != nil {
		return &OpError{Op: "close", Socket: c.socket, Err: err}
	}
	return nil
}

// Deliver dials socket, delivers m (see [Conn.Deliver]) and closes the
// connection: the doorman's one-line step. The returned Cred is the
// listener's, also on a delivery error (zero when the dial failed).
func (d *Dialer) Deliver(ctx context.Context, socket string, m Message) (Cred, error) {
	// Validate before connecting, so a bad line costs no connection.
	if _, err := m.appendFrames(nil, true); err != nil {
		return Cred{}, err
	}
	c, err := d.Dial(ctx, socket)
	if err != nil {
		return Cred{}, err
	}
	err = c.Deliver(ctx, m)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return c.peer, err
}

func (d *Dialer) settle() time.Duration {
	switch {
	case d.Settle == 0:
		return DefaultSettle
	case d.Settle < 0:
		return 0
	}
	return d.Settle
}

func (d *Dialer) wantUID() int {
	if d.euid != nil {
		return d.euid()
	}
	return os.Geteuid()
}

func (d *Dialer) timeout() time.Duration {
	if d.Timeout <= 0 {
		return defaultTimeout
	}
	return d.Timeout
}

func (d *Dialer) dial(ctx context.Context, socket string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	if d.DialContext != nil {
		return d.DialContext(ctx, "unix", socket)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, "unix", socket)
}

// aLongTimeAgo is a deadline that has passed: setting it wakes a blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)
