package station

// SetDecoded makes s report each registry row it decodes and checks for
// liveness, so a test can hold Resolve to work that does not grow with
// unrelated rows.
func SetDecoded(s *Station, f func(path string)) { s.decoded = f }

// Unexported names their tests and fuzzers hold to their promises.
const (
	MinIDPrefix     = minIDPrefix
	MinNameFragment = minNameFragment
)

var (
	ParseStat    = parseStat
	ErrBadStat   = errBadStat
	ErrNoProcess = errNoProcess
	ErrNoToken   = errNoToken
	ErrBadRow    = errBadRow
)

// Sessions is (*Station).sessions: every registry row, live or not.
func Sessions(s *Station) ([]Session, error) { return s.sessions() }
