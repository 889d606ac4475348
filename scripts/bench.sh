#!/usr/bin/env bash
# Whole-process figures for BENCHMARKS.md ("read, sessions" and "send"):
#
#   scripts/bench.sh [RUNS]        (default 30 runs per case, after 3 warm-ups)
#   scripts/bench.sh send [RUNS]   (default 20 runs per case, after 2 warm-ups)
#   scripts/bench.sh mcp [RUNS] [REV]  (default 30 runs, after 2 warm-ups)
#
# `mcp` measures `oo-claude doorman --mcp` from its start to its answer to
# initialize, and its VmRSS then and after a tools/call: the e2e test
# TestMCPStartCost. With REV (a git revision), a binary built from REV is
# measured side by side, the two interleaved.
#
# `send` measures the whole `oo-claude send` process, from its start to its
# exit with the ack, on stations of 1, 50 and 500 registry rows side by side
# in one run: the e2e test TestSendCost, against the pinned Claude Code
# (scripts/install-claude-code.sh installs it when missing) and tmux. Its
# targets are a session whose doorman is fakes/fakedoorman, acking at once
# (by full id, name and pid: the sender's own cost), and a real interactive
# session with the injected doorman (by full id: the real path). Every
# other row is an unrelated live session (a sleep process with its real
# procStart). The throttle is on (30 s), each run a sender of its own.
#
# `issue20 [ROW...]` (BENCH_REV=<git revision> measures that revision's
# oo-claude binary with this tree's harness) measures issue 20's table, each row beside a Go hello
# world built in the same run (static, as oo-claude: CGO_ENABLED=0) and the
# load average when the row ran; BENCH_N (default 20) samples per figure,
# medians. ROWs (default all, in this order):
#
#   version   oo-claude version vs hello (wall time, interleaved)
#   send      TestSendCost (e2e, the pinned CLI, tmux) at 1 and 500 registry
#             rows: the whole send process (fake receiver: the sender's own
#             cost; real interactive and real -p: through the real CLI), and
#             for the real targets front (send start -> the enqueue row's
#             timestamp), floor (-> the ack) and back (-> the exit); the
#             "lib" rows send through claudeinbox.Sender in the test's own
#             process (this tree's library, whatever BENCH_REV names)
#   sessions  sessions --json, 200 sessions x 10 riders all riding / 2
#             riding, and 1000 x 10 all riding: through the rider cache
#             (the riders settled and the cache written before the
#             measurement, as on a station an observatory polls), and the
#             same without it (a state directory that does not exist)
#   watchcpu  oo-claude watch --json at rest on 20 / 200 / 1000 sessions:
#             CPU and wake-ups over BENCH_IDLE_S (default 20) seconds,
#             scaled to a minute
#   watchlat  a line appended to an inbox -> its line-queued event printed
#             by oo-claude watch --json (another process), 200 sessions
#   doorman   an idle oo-claude doorman --mcp (BenchmarkDoormanIdle: 20 s
#             window scaled to a minute): CPU, wake-ups, system calls (perf
#             stat when installed: total, fsync, rename, nanosleep)
#   top       oo-claude top at rest in a tmux pane at 160x50 on 200 sessions
#             x 10 riders (issue 24's idle figure): CPU and wake-ups over
#             BENCH_IDLE_S seconds, scaled to a minute (needs tmux)
#
# Without `send`, `mcp` or `issue20`:
#
# It builds oo-claude into a temporary directory, lays out a synthetic
# station there and prints the median wall time of each case:
#
#   version          oo-claude version            (start-up)
#   python3          $PYTHON -I -c pass           (the reference start-up, same run;
#                    PYTHON defaults to /usr/bin/python3, the fixed interpreter
#                    v0.1's entry points use: a PATH shim would add its own cost)
#   read-2MiB        oo-claude read <sid> --turns 3 on a 2 MiB transcript
#   read-2GiB        the same on a 2 GiB transcript (sparse: the last exchanges
#                    are real rows at its end, the rest a hole)
#   sessions-r2      oo-claude sessions --json, 200 live sessions × 10 riders,
#                    2 riders per session changed within the riding window
#   sessions-r10     the same with all 10 riders changed within the window
#   sessions-r10-all the same with --all (every rider listed)
#
# The 200 sessions are live: each registry row names one of 200 `sleep`
# processes this script starts (and stops on exit, by pid) with its real
# procStart. Needs bash, go, python3 (for the fixtures), sleep. Page cache warm (3 warm-ups).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = send ]; then
	export OO_CLAUDE_E2E_CLAUDE=${OO_CLAUDE_E2E_CLAUDE:-$(scripts/install-claude-code.sh)}
	echo "machine: $(nproc) cores, $(uname -sm), $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)"
	OO_CLAUDE_E2E_SEND_SAMPLES=${2:-20} go test -count=1 -v -run '^TestSendCost$' ./e2e/ |
		sed -n '/whole oo-claude send/,/^--- /p' | grep -v '^--- ' | sed 's/^ *sendcost_test.go:[0-9]*: //; s/^        //'
	exit "${PIPESTATUS[0]}"
fi
if [ "${1:-}" = mcp ]; then
	export OO_CLAUDE_E2E_CLAUDE=${OO_CLAUDE_E2E_CLAUDE:-$(scripts/install-claude-code.sh)}
	echo "machine: $(nproc) cores, $(uname -sm), $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ -n "${3:-}" ]; then
		B=$(mktemp -d)
		trap 'rm -rf "$B"' EXIT
		git archive "$3" | tar -x -C "$B"
		# REV's oo-claude, and its doorman program beside it where REV has one.
		(cd "$B" && go build -o "$B/" ./cli/... && mv "$B/oo-claude" "$B/oo-claude.base")
		export OO_CLAUDE_E2E_MCP_BASE=$B/oo-claude.base
		echo "base: $(git rev-parse --short "$3")"
	fi
	OO_CLAUDE_E2E_MCP_SAMPLES=${2:-30} go test -count=1 -v -run '^TestMCPStartCost$' ./e2e/ |
		sed -n '/doorman --mcp, /,/^--- /p' | grep -v '^--- ' | sed 's/^ *mcpstart_test.go:[0-9]*: //'
	exit "${PIPESTATUS[0]}"
fi
RUNS=${1:-30}
PYTHON=${PYTHON:-/usr/bin/python3}
T=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT

# oo-claude and, since it became a program of its own, the doorman
# program beside it (./cli/... builds whichever the tree has).
[ "${1:-}" = issue20 ] || go build -o "$T/" ./cli/...
BIN="$T/oo-claude"

# median RUNS CMD...: runs CMD RUNS times (after 3 warm-ups), prints the
# median wall time in ms.
median() {
	local n=$1
	shift
	for _ in 1 2 3; do "$@" >/dev/null 2>&1; done
	local times=()
	for ((i = 0; i < n; i++)); do
		local s e
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1
		e=$(date +%s%N)
		times+=($(((e - s) / 1000)))
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.1f", m/1000}'
}

# station ROOT RECENT [N]: N (default 200) sessions × 10 riders under ROOT,
# RECENT riders per session changed now (half of them riding), the others
# an hour ago.
station() {
	local root=$1 recent=$2 n=${3:-200}
	mkdir -p -m 0700 "$root"/{sessions,projects,inbox,state,observatory}
	python3 -I - "$root" "$recent" "${PIDS[*]:0:$n}" <<'PY'
import json, os, sys, time
root, recent = sys.argv[1], int(sys.argv[2])
pids = [int(p) for p in sys.argv[3].split()]
now = time.time()
def ts(t): return time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(t)) + '.000Z'
def w(path, text, mtime=None):
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, 'w') as f: f.write(text)
    os.chmod(path, 0o600)
    if mtime: os.utime(path, (mtime, mtime))
def enc(cwd): return ''.join(c if c.isascii() and c.isalnum() else '-' for c in cwd)
ledger = []
for i, pid in enumerate(pids):
    with open(f'/proc/{pid}/stat') as f: start = f.read().rsplit(')', 1)[1].split()[19]
    sid = f'dddddddd-0000-4000-8000-{i:012d}'
    cwd = f'/home/u/proj{i:03d}'
    ms = int((now - 60 * i) * 1000)
    w(f'{root}/sessions/{pid}.json', json.dumps({'pid': pid, 'sessionId': sid, 'cwd': cwd, 'startedAt': ms,
        'procStart': start, 'version': '2.1.332', 'kind': 'interactive', 'entrypoint': 'sdk-cli',
        'messagingSocketPath': f'/tmp/cc-socks/{pid}.sock', 'name': f'proj{i:03d}-aa', 'status': 'busy',
        'updatedAt': ms, 'statusUpdatedAt': ms}))
    sdir = f'{root}/projects/{enc(cwd)}/{sid}'
    for j in range(10):
        agent = f'r{j:02d}'
        done = j % 2 == 1
        rows = [
            {'type': 'user', 'isSidechain': True, 'agentId': agent, 'sessionId': sid, 'timestamp': ts(now - 120),
             'message': {'role': 'user', 'content': 'look into it'}},
            {'type': 'assistant', 'isSidechain': True, 'agentId': agent, 'sessionId': sid, 'timestamp': ts(now - 110),
             'message': {'id': f'm{j}a', 'role': 'assistant', 'stop_reason': 'tool_use',
                         'content': [{'type': 'tool_use', 'id': 't1', 'name': 'Bash', 'input': {'command': 'ls -la'}}]}},
            {'type': 'user', 'isSidechain': True, 'agentId': agent, 'sessionId': sid, 'timestamp': ts(now - 100),
             'message': {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 't1', 'content': 'ok'}]}},
            {'type': 'assistant', 'isSidechain': True, 'agentId': agent, 'sessionId': sid, 'timestamp': ts(now - 90),
             'message': {'id': f'm{j}b', 'role': 'assistant', 'stop_reason': 'end_turn' if done else 'tool_use',
                         'content': [{'type': 'text', 'text': 'All done.'}] if done else
                                    [{'type': 'tool_use', 'id': 't2', 'name': 'Read', 'input': {'file_path': '/x/y.go'}}]}},
        ]
        mtime = now if j < recent else now - 3600
        w(f'{sdir}/subagents/agent-{agent}.jsonl', ''.join(json.dumps(r) + '\n' for r in rows), mtime)
        w(f'{sdir}/subagents/agent-{agent}.meta.json', json.dumps({'agentType': 'general-purpose',
            'description': f'task {agent}', 'model': 'claude-haiku-5-5'}))
    lines = ''.join(f'[mama \U0001F4E1] line {k} of session {i}\n' for k in range(20))
    inbox = f'{root}/inbox/{sid}.inbox'
    w(inbox, lines)
    off = len(lines.encode()) // 2
    w(inbox + '.offset', f'{off}\n')
    w(inbox + '.doorman.json', json.dumps({'pid': pid, 'session_id': sid, 'since': ts(now - 3600), 'last_seen': ts(now),
        'delivered': 10, 'offset': off, 'state': 'following', 'mode': 'mcp'}))
    if i and i % 10 == 0:
        ledger.append(json.dumps({'ts': ts(now), 'child_host': None, 'child_session': sid, 'parent_host': None,
            'parent_session': 'dddddddd-0000-4000-8000-000000000000', 'title': '', 'by': 'parent'}))
w(f'{root}/observatory/lineage.jsonl', ''.join(l + '\n' for l in ledger))
PY
}

# transcript PATH SIZE: a transcript of SIZE bytes whose last 5 exchanges
# are real rows at its end (a steered turn each) and the rest a sparse hole.
transcript() {
	python3 -I - "$1" "$2" <<'PY'
import json, os, sys
path, size = sys.argv[1], int(sys.argv[2])
sid = os.path.basename(path)[:-6]
rows = []
for n in range(5):
    t = f'2026-11-30T12:{n:02d}:'
    rows += [
        {'type': 'user', 'sessionId': sid, 'timestamp': t + '00Z', 'uuid': f'p{n}', 'message': {'role': 'user', 'content': f'run the tests {n}'}},
        {'type': 'assistant', 'sessionId': sid, 'timestamp': t + '01Z', 'message': {'id': f'a{n}', 'role': 'assistant', 'stop_reason': 'tool_use',
            'content': [{'type': 'tool_use', 'id': f't{n}', 'name': 'Bash', 'input': {'command': 'go test ./...'}}]}},
        {'type': 'user', 'sessionId': sid, 'timestamp': t + '02Z', 'message': {'role': 'user',
            'content': [{'type': 'tool_result', 'tool_use_id': f't{n}', 'content': 'ok ' + 'x' * 20000}]}},
        {'type': 'attachment', 'sessionId': sid, 'timestamp': t + '03Z', 'attachment': {'type': 'queued_command', 'prompt': '[mama \U0001F4E1] also vet',
            'origin': {'kind': 'peer', 'from': 'mama', 'msg_id': f'58b50e71-3528-44fb-bc68-56348cb3876{n}', 'verifiedPeerPid': 1, 'verifiedPeerProcStart': '1'}}},
        {'type': 'assistant', 'sessionId': sid, 'timestamp': t + '04Z', 'message': {'id': f'b{n}', 'role': 'assistant', 'stop_reason': 'end_turn',
            'content': [{'type': 'text', 'text': f'Tests pass ({n}); vet is clean.'}]}},
    ]
tail = ''.join(json.dumps(r) + '\n' for r in rows).encode()
os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
with open(path, 'wb') as f:
    head = b'{"type":"user","sessionId":"%s","timestamp":"2026-11-30T11:00:00Z","message":{"role":"user","content":"start"}}\n' % sid.encode()
    f.write(head)
    f.truncate(size - len(tail) - 1)
    f.seek(0, 2)
    f.write(b'\n' + tail)
os.chmod(path, 0o600)
PY
}

# sleepers N: at least N sleep processes in PIDS (stopped on exit).
sleepers() {
	while [ "${#PIDS[@]}" -lt "$1" ]; do
		sleep 3600 &
		PIDS+=($!)
	done
}

# stfile ROOT [KEY=VALUE...]: stenv's knobs (and the extra ones) in a
# file, ROOT.env, for benchtool's @FILE: no env(1) exec in the time.
stfile() {
	local root=$1
	shift
	stenv "$root" | tr ' ' '\n' | grep = >"$root.env"
	printf '%s\n' "$@" >>"$root.env"
	echo "@$root.env"
}

# stenv ROOT: the env command that points oo-claude at the station ROOT.
stenv() {
	echo env HOME="$1" OO_CLAUDE_SESSIONS_DIR="$1/sessions" OO_CLAUDE_PROJECTS_DIR="$1/projects" \
		OO_CLAUDE_INBOX_DIR="$1/inbox" OO_CLAUDE_STATE_DIR="$1/state" OO_CLAUDE_OBSERVATORY_DIR="$1/observatory"
}

if [ "${1:-}" = issue20 ]; then
	shift
	ROWS=("$@")
	[ ${#ROWS[@]} -gt 0 ] || ROWS=(version send sessions watchcpu watchlat doorman top)
	N=${BENCH_N:-20}
	IDLE=${BENCH_IDLE_S:-20}
	began=$(date +%s)
	if [ -n "${BENCH_REV:-}" ]; then
		# The binary measured is BENCH_REV's; the harness (and the doorman
		# row's test binary) is this tree's.
		mkdir -p "$T/rev"
		git archive "$BENCH_REV" | tar -x -C "$T/rev"
		(cd "$T/rev" && CGO_ENABLED=0 go build -o "$T/" ./cli/...)
		echo "oo-claude built from $(git rev-parse --short "$BENCH_REV")"
	else
		CGO_ENABLED=0 go build -o "$T/" ./cli/...
	fi
	go build -o "$T/benchtool" scripts/benchtool/main.go
	mkdir -p "$T/hello"
	printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello, world") }\n' >"$T/hello/main.go"
	(cd "$T/hello" && printf 'module hello\n\ngo 1.26\n' >go.mod && CGO_ENABLED=0 GOFLAGS= go build -o "$T/hello/hello" .)
	HELLO=$T/hello/hello
	BT=$T/benchtool
	# hello's own median, printed beside a row that cannot interleave it.
	hello() { "$BT" pair "$N" "$BT" -- "$HELLO" | sed 's/ (hello.*//'; }
	load() { echo "load $(cut -d' ' -f1 /proc/loadavg)"; }
	echo "machine: $(nproc) cores, $(uname -sm), $(go version | cut -d' ' -f3); medians of $N; oo-claude and hello built with CGO_ENABLED=0"
	for row in "${ROWS[@]}"; do
		case $row in
		version)
			printf '%-30s %s   [%s]\n' "version vs hello" "$("$BT" pair "$N" "$HELLO" -- "$BIN" version)" "$(load)"
			;;
		send)
			export OO_CLAUDE_E2E_CLAUDE=${OO_CLAUDE_E2E_CLAUDE:-$(scripts/install-claude-code.sh)}
			echo "send (TestSendCost, 1 and 500 rows; hello $(hello))   [$(load)]"
			OO_CLAUDE_E2E_OOCLAUDE=$BIN OO_CLAUDE_E2E_SEND_ROWS=1,500 OO_CLAUDE_E2E_SEND_SAMPLES=$N \
				go test -count=1 -v -run '^TestSendCost$' ./e2e/ |
				sed -n '/whole oo-claude send/,/^--- /p' | grep -v -e '^--- ' -e 'fakemodel: ' | sed 's/^ *sendcost_test.go:[0-9]*: //; s/^        /  /'
			echo "  [after: $(load)]"
			;;
		sessions)
			sleepers 1000
			for spec in 200:10 200:2 1000:10; do
				S="$T/st-${spec/:/-}"
				[ -d "$S" ] || station "$S" "${spec#*:}" "${spec%:*}"
				# The rider cache keeps only what settled (a change time
				# 2 s old): wait that out, then one run writes it.
				sleep 2.1
				$(stenv "$S") "$BIN" sessions --json >/dev/null
				printf '%-30s %s   [%s]\n' "sessions --json ${spec%:*}x10 r${spec#*:}" \
					"$("$BT" pair "$N" "$HELLO" -- "$(stfile "$S")" "$BIN" sessions --json)" "$(load)"
				printf '%-30s %s   [%s]\n' "  the same, no rider cache" \
					"$("$BT" pair "$N" "$HELLO" -- "$(stfile "$S" OO_CLAUDE_STATE_DIR="$S/no-state")" "$BIN" sessions --json)" "$(load)"
			done
			;;
		watchcpu)
			sleepers 1000
			for n in 20 200 1000; do
				S="$T/st-$n-10"
				[ -d "$S" ] || station "$S" 10 "$n"
				$(stenv "$S") "$BIN" watch --json >/dev/null 2>&1 &
				wp=$!
				sleep 3 # its start (the initial events) is not at rest
				printf '%-30s %s   [hello %s, %s]\n' "watch at rest, $n sessions" "$("$BT" cpu "$wp" "$IDLE")" "$(hello)" "$(load)"
				kill "$wp"
				wait "$wp" 2>/dev/null || true
			done
			;;
		watchlat)
			sleepers 200
			S="$T/st-200-10"
			[ -d "$S" ] || station "$S" 10 200
			printf '%-30s %s   [hello %s, %s]\n' "watch append -> event" \
				"$("$BT" watchlat "$N" "$S/inbox/dddddddd-0000-4000-8000-000000000000.inbox" -- $(stenv "$S") "$BIN" watch --json)" "$(hello)" "$(load)"
			;;
		doorman)
			echo "idle doorman (BenchmarkDoormanIdle, 20 s window; hello $(hello))   [$(load)]"
			go test -run '^$' -bench '^BenchmarkDoormanIdle$' -benchtime 1x ./cli/oo-claude/ | grep -E '^Benchmark|no syscall' | sed 's/^/  /'
			;;
		top)
			sleepers 200
			S="$T/st-200-10"
			[ -d "$S" ] || station "$S" 10 200
			sock="$T/tmux.sock"
			tmux -S "$sock" -f /dev/null new-session -d -x 160 -y 50 "exec $(stenv "$S") LANG=C.UTF-8 $BIN top"
			sleep 3 # its start (the first frame, the document) is not at rest
			tp=$(tmux -S "$sock" display -p '#{pane_pid}')
			printf '%-30s %s   [hello %s, %s]\n' "top at rest, 200x10, 160x50" "$("$BT" cpu "$tp" "$IDLE")" "$(hello)" "$(load)"
			tmux -S "$sock" kill-server 2>/dev/null || true
			;;
		*)
			echo "unknown row $row (version send sessions watchcpu watchlat doorman top)" >&2
			exit 2
			;;
		esac
	done
	echo "took $(($(date +%s) - began)) s"
	exit 0
fi

sleepers 200

echo "machine: $(nproc) cores, $(uname -sm), $(go version | cut -d' ' -f3), runs: $RUNS (median of wall time, ms)"
printf '%-18s %s\n' version "$(median "$RUNS" "$BIN" version)"
printf '%-18s %s\n' python3 "$(median "$RUNS" "$PYTHON" -I -c pass)"

R="$T/read"
S2=aaaaaaaa-0000-4000-8000-000000000002
SG=aaaaaaaa-0000-4000-8000-000000000003
transcript "$R/projects/-bench-small/$S2.jsonl" $((2 << 20))
transcript "$R/projects/-bench-big/$SG.jsonl" $((2 << 30))
readenv=(env HOME="$R" OO_CLAUDE_PROJECTS_DIR="$R/projects" OO_CLAUDE_SESSIONS_DIR="$R/sessions")
small=$(median "$RUNS" "${readenv[@]}" "$BIN" read "$S2" --turns 3)
big=$(median "$RUNS" "${readenv[@]}" "$BIN" read "$SG" --turns 3)
printf '%-18s %s\n' read-2MiB "$small" read-2GiB "$big"
awk -v a="$small" -v b="$big" 'BEGIN {printf "%-18s %.2f (budget <= 1.5)\n", "read ratio", b / a}'

for recent in 2 10; do
	S="$T/station-$recent"
	station "$S" "$recent"
	read -ra stenv <<<"$(stenv "$S")"
	n=$("${stenv[@]}" "$BIN" sessions --json | python3 -I -c 'import json,sys; d=json.load(sys.stdin); print(len(d["sessions"]), sum(s["riders_total"] for s in d["sessions"]))')
	printf '%-18s %s   (sessions, riders: %s)\n' "sessions-r$recent" "$(median "$RUNS" "${stenv[@]}" "$BIN" sessions --json)" "$n"
	if [ "$recent" = 10 ]; then
		printf '%-18s %s\n' "sessions-r10-all" "$(median "$RUNS" "${stenv[@]}" "$BIN" sessions --json --all)"
	fi
done
