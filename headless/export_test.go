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
