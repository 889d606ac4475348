package main

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
)

// initRow is one "init <pkg> @<t> ms, <clock> ms clock, <bytes> bytes,
// <allocs> allocs" line of GODEBUG=inittrace=1.
type initRow struct {
	pkg           string
	clockMS       float64
	bytes, allocs int
}

func parseInitTrace(t *testing.T, stderr string) []initRow {
	t.Helper()
	var rows []initRow
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// init pkg @x ms, y ms clock, b bytes, a allocs
		if len(f) != 11 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		clock, err1 := strconv.ParseFloat(f[4], 64)
		b, err2 := strconv.Atoi(f[7])
		a, err3 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("unparsed inittrace line %q", sc.Text())
		}
		rows = append(rows, initRow{pkg: f[1], clockMS: clock, bytes: b, allocs: a})
	}
	return rows
}

// TestInitCost runs `oo-claude version` with GODEBUG=inittrace=1 and holds
// the package init of this module's own library packages (fakes and this
// test binary's main package aside) to nothing costly: no regexp compiled, no table
// or map built before first use (sync.OnceValue instead). Allocations and
// bytes are the bounds, as they do not move with the machine's load; the
// clock time is only logged (under load a descheduled init reads tens of
// milliseconds however little it does).
func TestInitCost(t *testing.T) {
	t.Parallel()
	const (
		maxAllocs = 64
		maxBytes  = 8 << 10
	)
	r := runBinary(t, []string{"GODEBUG=inittrace=1"}, "", "version")
	if r.code != 0 {
		t.Fatalf("version: exit %d\n%s", r.code, r.stderr)
	}
	rows := parseInitTrace(t, r.stderr)
	if len(rows) == 0 {
		t.Fatalf("no inittrace rows in stderr:\n%s", r.stderr)
	}
	const mod = "github.com/oo-family/oo-claude/"
	var own initRow
	var allMS float64
	for _, row := range rows {
		allMS += row.clockMS
		// fakes/ and this package are the test binary's own (its test
		// files' tables); the installed binary's main package holds none.
		if !strings.HasPrefix(row.pkg, mod) || strings.HasPrefix(row.pkg, mod+"fakes/") || row.pkg == mod+"cli/oo-claude" {
			continue
		}
		own.clockMS += row.clockMS
		own.bytes += row.bytes
		own.allocs += row.allocs
		if row.allocs > 16 {
			t.Errorf("package %s allocates %d times (%d bytes) at init: build it on first use", row.pkg, row.allocs, row.bytes)
		}
	}
	t.Logf("init: this module's packages %.3f ms, %d bytes, %d allocs; every package %.3f ms", own.clockMS, own.bytes, own.allocs, allMS)
	if own.allocs > maxAllocs || own.bytes > maxBytes {
		t.Errorf("this module's package init: %d allocs, %d bytes; want ≤ %d allocs, ≤ %d bytes", own.allocs, own.bytes, maxAllocs, maxBytes)
	}
}
