package headless

// The result parsers, for their table and fuzz tests.
var (
	ParseResult = parseResult
	ParseTurns  = parseTurns
)

// Causes of refusals a caller tells apart by RefusedError.Reason.
var (
	ErrBadLine      = errBadLine
	ErrBadSessionID = errBadSessionID
	ErrBadLimits    = errBadLimits
)

// SteerablePoll is the fallback poll of the steerable waits, for a test
// that sets it out of reach to show the waits wake on file events.
var SteerablePoll = &steerablePoll
