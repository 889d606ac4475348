#!/usr/bin/env bash
# The whole test suite, as a new user (and CI) runs it:
#   scripts/test.sh
# It installs the pinned Claude Code (claude-code.version) and the official
# MCP clients (mcp-clients.version) with npm into a cache outside the module
# when missing, and tmux with apt-get when missing
# (the interactive end-to-end tests need it), then runs gofmt, go vet and every
# test with the race detector, the end-to-end suite against the real CLI
# included. staticcheck runs at the version pinned as a tool in go.mod.
# Extra arguments go to `go test` (e.g. -run TestSteer).
#
# Each silent step (gofmt, go vet, staticcheck) is announced, has a line every 30 s while
# it runs and says how long it took. go test's JSON goes through
# internal/cmd/testprogress, which says it is still building while no test
# binary runs yet, prints each package's result as it finishes, names the packages still running when
# nothing finished for 30 s, prints the output of failed tests, lists the
# skipped tests with their reasons, names the slow packages and tests and ends with
# "N passed, N failed". The exit code is go test's.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${OO_CLAUDE_E2E_CLAUDE:-}" ]; then
	OO_CLAUDE_E2E_CLAUDE=$(scripts/install-claude-code.sh)
fi
export OO_CLAUDE_E2E_CLAUDE
echo "test.sh: Claude Code $("$OO_CLAUDE_E2E_CLAUDE" --version) at $OO_CLAUDE_E2E_CLAUDE"

# The official MCP clients (mcp-clients.version) that TestOfficialClients
# runs against the doorman, installed with npm into the same cache. Without
# them that test skips, except under CI=true, where it fails.
if [ -z "${OO_CLAUDE_E2E_MCP_CLIENTS:-}" ]; then
	OO_CLAUDE_E2E_MCP_CLIENTS=$(scripts/install-mcp-clients.sh) ||
		{ echo "test.sh: installing the MCP clients failed: TestOfficialClients skips (and fails under CI=true)" >&2; OO_CLAUDE_E2E_MCP_CLIENTS=; }
fi
export OO_CLAUDE_E2E_MCP_CLIENTS

# The interactive end-to-end tests run Claude Code's TUI under tmux; a fresh
# machine may lack it. Without tmux they skip, except under CI=true, where
# they fail.
if ! command -v tmux >/dev/null 2>&1; then
	sudo=()
	if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then
		sudo=(sudo -n)
	fi
	if command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: installing tmux with apt-get"
		"${sudo[@]}" apt-get update -qq || echo "test.sh: apt-get update failed" >&2
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null ||
			echo "test.sh: apt-get install tmux failed: the interactive tests skip (and fail under CI=true)" >&2
	else
		echo "test.sh: no tmux and no apt-get: the interactive tests skip (and fail under CI=true)" >&2
	fi
fi
if command -v tmux >/dev/null 2>&1; then
	echo "test.sh: $(tmux -V) at $(command -v tmux)"
fi

# The fleet's end-to-end test runs OpenSSH's sshd on 127.0.0.1 with its own
# config and keys; a fresh machine may lack it (Debian's openssh-server).
# Run as root, sshd needs its privilege separation directory.
if ! command -v sshd >/dev/null 2>&1 && [ ! -x /usr/sbin/sshd ]; then
	sudo=()
	if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then
		sudo=(sudo -n)
	fi
	if command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: installing openssh-server with apt-get"
		"${sudo[@]}" apt-get update -qq || echo "test.sh: apt-get update failed" >&2
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server openssh-client >/dev/null ||
			echo "test.sh: apt-get install openssh-server failed: the ssh tests skip" >&2
	fi
fi
if [ "$(id -u)" = 0 ] && [ -x /usr/sbin/sshd ] && [ ! -d /run/sshd ]; then
	install -d -m 0755 /run/sshd
fi


# heartbeat prints "still <what> (N s)" every 30 s until it is killed, so a
# silent step (go vet's build on a cold machine took minutes) says what it
# is doing.
heartbeat() {
	local what=$1 start=$SECONDS
	trap 'kill "$nap" 2>/dev/null; exit 0' TERM
	while :; do
		sleep 30 &
		nap=$!
		wait "$nap"
		echo "test.sh: still $what ($((SECONDS - start)) s)"
	done
}

# phase says what it runs, runs it with a heartbeat beside it, and says
# how long it took; its exit code is the command's.
phase() {
	local what=$1 start=$SECONDS rc=0 hb
	shift
	echo "test.sh: $what"
	heartbeat "$what" &
	hb=$!
	"$@" || rc=$?
	kill "$hb" 2>/dev/null || true
	wait "$hb" 2>/dev/null || true
	echo "test.sh: $what: $( [ "$rc" = 0 ] && echo done || echo "failed (exit $rc)") in $((SECONDS - start)) s"
	return "$rc"
}

check_gofmt() {
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
	if [ -n "$unformatted" ]; then
		echo "test.sh: gofmt would change:" >&2
		echo "$unformatted" >&2
		return 1
	fi
}

phase "gofmt -l on every tracked .go file" check_gofmt
phase "go vet ./..." go vet ./... # it builds every package first: minutes on a cold machine
# staticcheck, at the version go.mod pins as a tool.
phase "go tool staticcheck ./..." go tool staticcheck ./...
echo "test.sh: go test -race -count=1 -timeout 30m ${*:+$* }./... (the race binaries build first, with a line every 30 s; then each package's line as it finishes)"
set +e
go test -race -count=1 -timeout 30m -json "$@" ./... | go run ./internal/cmd/testprogress
status=("${PIPESTATUS[@]}")
set -e
if [ "${status[1]}" != 0 ]; then
	echo "test.sh: the progress filter failed (exit ${status[1]}); go test exited ${status[0]}" >&2
	[ "${status[0]}" != 0 ] || exit 1
fi
exit "${status[0]}"
