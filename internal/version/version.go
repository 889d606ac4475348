// Package version holds oo-claude's version and the Claude Code version its
// end-to-end suite was proven against.
package version

// Version is oo-claude's version; the doorman reports it in its heartbeat
// and MCP serverInfo.
const Version = "0.2.0-dev"

// ProvenAgainst is the Claude Code version (claude-code.version at the
// repository root) the end-to-end suite runs.
const ProvenAgainst = "2.1.332"
