package station_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oo-family/oo-claude/station"
)

// procRoot is a fake procfs under dir: each pid of starts runs with its
// start time.
func procRoot(tb testing.TB, dir string, starts map[int]string) station.Proc {
	tb.Helper()
	for pid, start := range starts {
		d := filepath.Join(dir, strconv.Itoa(pid))
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
		stat := fmt.Sprintf("%d (claude) S 1%s %s 0 0\n", pid, strings.Repeat(" 0", 17), start)
		if err := os.WriteFile(filepath.Join(d, "stat"), []byte(stat), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return station.Proc{Root: dir}
}

// writeRaw writes a registry file as it stands (name: <name>.json).
func writeRaw(tb testing.TB, dir, name, content string) {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func rawRow(pid int, sid, name string, startedAt int64) string {
	return fmt.Sprintf(`{"pid":%d,"sessionId":%q,"cwd":"/home/u/proj","startedAt":%d,"procStart":"777","version":"2.1.332","kind":"interactive","entrypoint":"cli","name":%q,"status":"idle"}`,
		pid, sid, startedAt, name)
}

// A full id, a pid, a name, an id prefix and a name fragment are resolved
// on a station of 500 unrelated live rows by decoding (and checking the
// liveness of) the target's row alone.
func TestResolveWorkDoesNotGrowWithUnrelatedRows(t *testing.T) {
	dir := t.TempDir()
	sessions := filepath.Join(dir, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	starts := map[int]string{}
	for i := 0; i < 500; i++ {
		pid := 2000 + i
		starts[pid] = "777"
		writeRaw(t, sessions, strconv.Itoa(pid), rawRow(pid, fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012d", i), fmt.Sprintf("other-%03d", i), int64(1e12)+int64(i)))
	}
	const sid = "017c3f59-43cc-4dc8-bfb6-5e9a5625a864"
	starts[4242] = "777"
	writeRaw(t, sessions, "4242", rawRow(4242, sid, "work-e9", 2e12))
	st := &station.Station{Paths: station.Paths{SessionsDir: sessions}, Proc: procRoot(t, filepath.Join(dir, "proc"), starts)}
	var decoded []string
	station.SetDecoded(st, func(path string) { decoded = append(decoded, filepath.Base(path)) })

	for _, tt := range []struct{ target, how string }{
		{sid, station.MatchID},
		{strings.ToUpper(sid), station.MatchID},
		{"4242", station.MatchPID},
		{"work-e9", station.MatchName},
		{"017c3f59-43", station.MatchPrefix},
		{"rk-e", station.MatchFragment},
	} {
		t.Run(tt.target, func(t *testing.T) {
			decoded = nil
			got, err := st.Resolve(tt.target)
			if err != nil || got.SessionID != sid || got.MatchedBy != tt.how {
				t.Fatalf("Resolve(%q) = %+v, %v; want %s by %s", tt.target, got, err, sid, tt.how)
			}
			if diff := cmp.Diff([]string{"4242.json"}, decoded); diff != "" {
				t.Errorf("rows decoded (-want +got):\n%s", diff)
			}
		})
	}
	// Every row still counts for a listing.
	all, err := st.Live()
	if err != nil || len(all) != 501 {
		t.Fatalf("Live() = %d rows, %v; want 501", len(all), err)
	}
}

// resolveByFullScan is the rule of Resolve written the plain way, over
// every row decoded ([station.Station.Sessions], [station.Station.Live]):
// the oracle the pre-filtered Resolve is held to.
func resolveByFullScan(st *station.Station, target string) (station.Target, error) {
	target = strings.TrimSpace(target)
	if target == "" || strings.ContainsAny(target, "/\x00\n") {
		return station.Target{}, &station.TargetError{Target: target, Err: station.ErrBadTarget}
	}
	all, err := station.Sessions(st)
	if err != nil {
		return station.Target{}, err
	}
	live, err := st.Live()
	if err != nil {
		return station.Target{}, err
	}
	one := func(x station.Session, how string) station.Target {
		return station.Target{SessionID: x.SessionID, Running: true, Session: &x, MatchedBy: how}
	}
	if station.IsSessionID(target) {
		for _, x := range live {
			if strings.EqualFold(x.SessionID, target) {
				return one(x, station.MatchID), nil
			}
		}
		return station.Target{SessionID: strings.ToLower(target), MatchedBy: station.MatchID}, nil
	}
	if pid, err := strconv.Atoi(target); err == nil && pid > 0 && strconv.Itoa(pid) == target {
		for _, x := range all {
			if x.Live && x.PID == pid {
				return one(x, station.MatchPID), nil
			}
		}
	}
	pick := func(match func(station.Session) bool) []station.Session {
		var hits []station.Session
		for _, x := range live {
			if match(x) {
				hits = append(hits, x)
			}
		}
		return hits
	}
	decide := func(hits []station.Session, how func(station.Session) string) (station.Target, error) {
		if len(hits) == 1 {
			return one(hits[0], how(hits[0])), nil
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.SessionID)
		}
		slices.Sort(ids)
		return station.Target{}, &station.TargetError{Target: target, Candidates: ids, Err: station.ErrAmbiguousTarget}
	}
	if hits := pick(func(x station.Session) bool { return x.Name != "" && x.Name == target }); len(hits) > 0 {
		return decide(hits, func(station.Session) string { return station.MatchName })
	}
	prefix := func(x station.Session) bool {
		return len(target) >= station.MinIDPrefix && strings.HasPrefix(strings.ToLower(x.SessionID), strings.ToLower(target))
	}
	fragment := func(x station.Session) bool {
		return len(target) >= station.MinNameFragment && x.Name != "" && strings.Contains(x.Name, target)
	}
	if hits := pick(func(x station.Session) bool { return prefix(x) || fragment(x) }); len(hits) > 0 {
		return decide(hits, func(x station.Session) string {
			if prefix(x) {
				return station.MatchPrefix
			}
			return station.MatchFragment
		})
	}
	return station.Target{}, &station.TargetError{Target: target, Err: station.ErrUnknownTarget}
}

// Resolve, which decodes only the rows whose bytes can match, finds
// exactly what the full scan finds, on a station built to trip a byte
// pre-filter: names and ids written with JSON escapes, a name with bytes
// that are not UTF-8, ids in upper case, two live rows of one session id
// (the newer wins), a dead row, a row whose pid is not its file's name,
// all-digit names and id prefixes, a name that is another row's pid.
func FuzzResolveAgreesWithFullScan(f *testing.F) {
	dir := f.TempDir()
	sessions := filepath.Join(dir, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		f.Fatal(err)
	}
	rows := []struct {
		file, content string
	}{
		{"101", rawRow(101, "017c3f59-43cc-4dc8-bfb6-5e9a5625a864", "work-e9", 1000)},
		{"102", rawRow(102, "017c3f59-43cc-4dc8-bfb6-5e9a5625a864", "work-new", 2000)}, // the same session, newer
		{"103", rawRow(103, "9A9A9A9A-1111-4DC8-BFB6-5E9A5625A866", "Bäckerei 名前", 3000)},
		{"104", `{"pid":104,"sessionId":"abcdef01-2222-4dc8-bfb6-5e9a5625a868","startedAt":4000,"procStart":"777","name":"\u0065scaped"}`},
		{"105", "{\"pid\":105,\"sessionId\":\"abcdef01-3333-4dc8-bfb6-5e9a5625a869\",\"startedAt\":5000,\"procStart\":\"777\",\"name\":\"bad\xffname\"}"},
		{"106", `{"pid":106,"sessionId":"\u0031bcdef01-4444-4dc8-bfb6-5e9a5625a86a","startedAt":6000,"procStart":"777","name":"esc-id"}`},
		{"107", rawRow(107, "6b1f0c2e-2222-4dc8-bfb6-5e9a5625a86b", "2026", 7000)},
		{"108", rawRow(108, "12345678-3333-4dc8-bfb6-5e9a5625a86c", "numbers", 8000)},
		{"109", rawRow(109, "deadbeef-1111-4dc8-bfb6-5e9a5625a86d", "ghost", 9000)}, // runs with another start
		{"110", rawRow(111, "7c7c7c7c-5555-4dc8-bfb6-5e9a5625a86e", "misfiled", 10000)},
		{"112", rawRow(112, "7c7c7c7c-6666-4dc8-bfb6-5e9a5625a86f", "101", 11000)},
		{"113", rawRow(113, "12345678-7777-4dc8-bfb6-5e9a5625a870", "", 12000)},
		{"114", `{"pid":114,"sessionId":"017c3f59-43cc-4dc8-bfb6-5e9a5625a864","startedAt":500,"procStart":"777","name":"old\u002dcopy"}`}, // the same session, oldest, escaped
		{"115", `{torn`},
	}
	for _, r := range rows {
		writeRaw(f, sessions, r.file, r.content)
	}
	if err := os.WriteFile(filepath.Join(sessions, "101.aaaa.key"), []byte(`{"peerToken":"x"}`), 0o600); err != nil {
		f.Fatal(err)
	}
	starts := map[int]string{109: "778", 111: "777"}
	for _, pid := range []int{101, 102, 103, 104, 105, 106, 107, 108, 112, 113, 114, 115} {
		starts[pid] = "777"
	}
	st := &station.Station{Paths: station.Paths{SessionsDir: sessions}, Proc: procRoot(f, filepath.Join(dir, "proc"), starts)}
	for _, s := range []string{
		"017c3f59-43cc-4dc8-bfb6-5e9a5625a864", "017C3F59-43CC-4DC8-BFB6-5E9A5625A864", "017c3f59", "work-e9", "work-new", "work", "old-copy", "copy",
		"9a9a9a9a", "9A9A9A9A-1111-4DC8-BFB6-5E9A5625A866", "9a9a9a9a-1111-4dc8-bfb6-5e9a5625a866", "Bäck", "名前",
		"escaped", "scap", "bad\uFFFDname", "bad\xffname", "\uFFFDnam", "1bcdef01-4444-4dc8-bfb6-5e9a5625a86a", "1bcdef01", "esc-id",
		"2026", "202", "12345678", "123456783333", "12345678-3", "numbers", "ghost", "109", "deadbeef-1111-4dc8-bfb6-5e9a5625a86d",
		"110", "111", "misfiled", "101", "102", "0101", "+101", "112", "113", "114", "abcdef01", "\"name\"", "\\u0065", "777", "", "../x",
		// In every row's bytes: every row is decoded, and past maxIDScan
		// candidates the rows of the same ids are found by decoding.
		"procStart", "sessionId", "interactive", "4dc8-bfb6",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		want, werr := resolveByFullScan(st, target)
		got, err := st.Resolve(target)
		if fmt.Sprint(werr) != fmt.Sprint(err) {
			t.Fatalf("Resolve(%q) error %v, full scan %v", target, err, werr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Resolve(%q) (-full scan +resolve):\n%s", target, diff)
		}
	})
}

// A registry past one reader's share is read by several goroutines; every
// row is still read once, in the listing's order, and what is not a row
// (another name, a directory, a FIFO, a symlink, a file larger than a row)
// is skipped wherever it falls in the listing.
func TestRowsReadSideBySide(t *testing.T) {
	dir := t.TempDir()
	sessions := filepath.Join(dir, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	starts := map[int]string{}
	var want []int
	for i := 0; i < 333; i++ {
		pid := 10000 + i
		switch i % 37 {
		case 5:
			if err := os.Mkdir(filepath.Join(sessions, strconv.Itoa(pid)+".json"), 0o700); err != nil {
				t.Fatal(err)
			}
			continue
		case 11:
			if err := syscall.Mkfifo(filepath.Join(sessions, strconv.Itoa(pid)+".json"), 0o600); err != nil {
				t.Fatal(err)
			}
			continue
		case 17:
			writeRaw(t, sessions, "other", rawRow(pid, "x", "x", 1))
			if err := os.Symlink(filepath.Join(sessions, "other.json"), filepath.Join(sessions, strconv.Itoa(pid)+".json")); err != nil {
				t.Fatal(err)
			}
			continue
		case 23:
			writeRaw(t, sessions, strconv.Itoa(pid), strings.Repeat(" ", 70<<10)+rawRow(pid, "x", "x", 1))
			continue
		case 29:
			writeRaw(t, sessions, strconv.Itoa(pid)+".tmp", rawRow(pid, "x", "x", 1))
			continue
		}
		starts[pid] = "777"
		want = append(want, pid)
		writeRaw(t, sessions, strconv.Itoa(pid), rawRow(pid, fmt.Sprintf("bbbbbbbb-0000-4000-8000-%012d", i), fmt.Sprintf("row-%03d", i), int64(1e12)+int64(i)))
	}
	st := &station.Station{Paths: station.Paths{SessionsDir: sessions}, Proc: procRoot(t, filepath.Join(dir, "proc"), starts)}
	for range 3 {
		all, err := station.Sessions(st)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, x := range all {
			if !x.Live || x.Name != fmt.Sprintf("row-%03d", x.PID-10000) {
				t.Fatalf("row %d = %+v", x.PID, x.Row)
			}
			got = append(got, x.PID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("rows read (-want +got):\n%s", diff)
		}
	}
}
