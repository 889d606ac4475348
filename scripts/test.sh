#!/usr/bin/env bash
# The whole test suite, as a new user (and CI) runs it:
#   scripts/test.sh
# It installs the pinned Claude Code (claude-code.version) with npm into a
# cache outside the module when missing, then runs gofmt, go vet and every
# test with the race detector, the end-to-end suite against the real CLI
# included. Extra arguments go to `go test` (e.g. -run TestSteer).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${OO_CLAUDE_E2E_CLAUDE:-}" ]; then
	OO_CLAUDE_E2E_CLAUDE=$(scripts/install-claude-code.sh)
fi
export OO_CLAUDE_E2E_CLAUDE
echo "test.sh: Claude Code $("$OO_CLAUDE_E2E_CLAUDE" --version) at $OO_CLAUDE_E2E_CLAUDE"

unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [ -n "$unformatted" ]; then
	echo "test.sh: gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
go test -race -count=1 "$@" ./...
