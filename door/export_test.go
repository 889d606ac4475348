package door

// WithEUID returns d expecting listeners of uid instead of the process's
// effective uid (a listener of another user cannot be made in a test).
func WithEUID(d Dialer, uid int) Dialer {
	d.euid = func() int { return uid }
	return d
}

// MaxWriteBytes is the bound of one delivery's frames.
const MaxWriteBytes = maxWriteBytes
