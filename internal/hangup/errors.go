package hangup

import "errors"

// ErrUnsupported is Await's answer for a nil file.
var ErrUnsupported = errors.New("hangup: no file to watch")
