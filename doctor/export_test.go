package doctor

// The `claude mcp get` parser, for its table test.
type MCPRegistration = mcpRegistration

var ParseMCPGet = parseMCPGet
