package headless

// The result parsers, for their table and fuzz tests.
var (
	ParseResult = parseResult
	ParseTurns  = parseTurns
)
