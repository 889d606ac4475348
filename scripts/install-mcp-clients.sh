#!/usr/bin/env bash
# install-mcp-clients.sh: install the official MCP clients pinned in
# mcp-clients.version (the TypeScript client v2 and the MCP Inspector) for
# the end-to-end suite's TestOfficialClients, and print the directory whose
# node_modules holds them on stdout:
#
#   export OO_CLAUDE_E2E_MCP_CLIENTS=$(scripts/install-mcp-clients.sh)
#
# They go into a cache outside the module, as the pinned Claude Code does,
#   ${OO_CLAUDE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oo-claude-e2e}/mcp-clients-<hash of the pins>
# installed with npm only when missing (into a temporary directory renamed
# into place, so an interrupted install is never taken for a good one). An
# existing install is only checked (each package's installed version must be
# the pinned one). npm's own output goes to stderr; stdout carries only the
# path. Needs node 20 or later and npm.
set -euo pipefail

die() { echo "install-mcp-clients: $*" >&2; exit 1; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mapfile -t pins < <(grep -v '^[[:space:]]*\(#\|$\)' "$root/mcp-clients.version")
[ "${#pins[@]}" -gt 0 ] || die "mcp-clients.version names no package"
for p in "${pins[@]}"; do
	[[ $p =~ ^@?[a-z0-9./-]+@[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "mcp-clients.version holds '$p', want a package@version"
done
hash=$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-12)
cache=${OO_CLAUDE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oo-claude-e2e}
dir=$cache/mcp-clients-$hash

# pinned DIR: every pinned package is installed under DIR at its version.
pinned() {
	local p name version got
	for p in "${pins[@]}"; do
		name=${p%@*} version=${p##*@}
		[ -f "$1/node_modules/$name/package.json" ] || return 1
		got=$(node -p "require(process.argv[1]).version" "$1/node_modules/$name/package.json" 2>/dev/null) || return 1
		[ "$got" = "$version" ] || return 1
	done
}

if ! pinned "$dir"; then
	command -v npm > /dev/null || die "npm is needed to install ${pins[*]}"
	mkdir -p "$cache"
	chmod 700 "$cache"
	tmp=$(mktemp -d "$cache/.install-mcp-clients.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "install-mcp-clients: installing ${pins[*]} into $dir" >&2
	echo '{"private":true}' > "$tmp/package.json"
	npm install --no-audit --no-fund --ignore-scripts --prefix "$tmp" "${pins[@]}" >&2 || die "npm install failed"
	pinned "$tmp" || die "after npm install, $tmp does not hold ${pins[*]}"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	trap - EXIT
fi
echo "$dir"
