#!/usr/bin/env bash
# install-claude-code.sh: install the Claude Code CLI version pinned in
# claude-code.version for the end-to-end suite, and print the path of its
# native binary on stdout:
#
#   export OO_CLAUDE_E2E_CLAUDE=$(scripts/install-claude-code.sh)
#
# The CLI goes into a cache outside the module,
#   ${OO_CLAUDE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oo-claude-e2e}/<version>
# installed with npm only when missing (into a temporary directory renamed
# into place, so an interrupted install is never taken for a good one).
# An existing install is only checked (`claude --version` must print the
# pinned version), which takes well under a second. npm's own output goes
# to stderr; stdout carries only the path.
set -euo pipefail

die() { echo "install-claude-code: $*" >&2; exit 1; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=$(tr -d '[:space:]' < "$root/claude-code.version")
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "claude-code.version holds '$version', want a version like 2.1.332"

case "$(uname -s)-$(uname -m)" in
Linux-x86_64) platform=linux-x64 ;;
Linux-aarch64 | Linux-arm64) platform=linux-arm64 ;;
*) die "unsupported platform $(uname -s) $(uname -m): the e2e suite runs on Linux" ;;
esac

cache=${OO_CLAUDE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oo-claude-e2e}
dir=$cache/$version
rel=node_modules/@anthropic-ai/claude-code-$platform/claude

# pinned DIR: the binary under DIR prints the pinned version.
pinned() {
	local out
	[[ -x $1/$rel ]] || return 1
	out=$(DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 "$1/$rel" --version 2>/dev/null) || return 1
	[[ $out == "$version "* || $out == "$version" ]]
}

if ! pinned "$dir"; then
	command -v npm > /dev/null || die "npm is needed to install @anthropic-ai/claude-code@$version"
	mkdir -p "$cache"
	chmod 700 "$cache"
	tmp=$(mktemp -d "$cache/.install-$version.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "install-claude-code: installing @anthropic-ai/claude-code@$version into $dir" >&2
	# npm 11 may skip the package's postinstall; the native binary comes
	# with the platform's optional dependency either way.
	npm install --no-audit --no-fund --no-save --include=optional --prefix "$tmp" \
		"@anthropic-ai/claude-code@$version" >&2 || die "npm install failed"
	pinned "$tmp" || die "after npm install, $tmp/$rel --version does not print $version"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	trap - EXIT
fi
echo "$dir/$rel"
