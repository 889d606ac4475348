package transcript

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bigTail is the end of a big transcript: three turns that differ from the
// filler before them, then rows that are no exchange.
func bigTail() string {
	b := newBuilder(testSID, testCWD)
	for n := 900001; n <= 900003; n++ {
		steeredTurn(b, n)
	}
	b.raw(`{"type":"cost-state","sessionId":"` + testSID + `","totalCostUSD":0.01}`)
	return b.String()
}

// writeBigTranscript writes a transcript of about size bytes: realistic
// steered turns repeated (one block of about 1 MiB written again and
// again), then tail.
func writeBigTranscript(tb testing.TB, path string, size int64, tail string) {
	tb.Helper()
	b := newBuilder(testSID, testCWD)
	for n := 1; len(b.String()) < 1<<20; n++ {
		steeredTurn(b, n)
	}
	block := []byte(b.String())
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 4<<20)
	for written := int64(0); written+int64(len(block))+int64(len(tail)) <= size; written += int64(len(block)) {
		if _, err := w.Write(block); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := w.WriteString(tail); err != nil {
		tb.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if _, ok := tb.(*testing.B); ok {
		// Let the writeback of the new file finish before the timing: it
		// would compete with the reads being measured.
		if err := f.Sync(); err != nil {
			tb.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func exchangesOf(tb testing.TB, path string, n int) ([]Exchange, stats) {
	tb.Helper()
	f, size, err := openTranscript(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	ex, st, err := exchangesFrom(f, size, n)
	if err != nil {
		tb.Fatal(err)
	}
	return ex, st
}

// A 300 MiB transcript costs what a small one costs: the same exchanges,
// from the same few bytes at its end.
func TestExchanges300MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 300 MiB transcript")
	}
	dir := t.TempDir()
	tail := bigTail()
	small := filepath.Join(dir, "small.jsonl")
	big := filepath.Join(dir, "big.jsonl")
	writeBigTranscript(t, small, 2<<20, tail)
	writeBigTranscript(t, big, 300<<20, tail)

	want, wantSt := exchangesOf(t, small, 3)
	got, gotSt := exchangesOf(t, big, 3)
	if len(got) != 3 || got[0].Prompt.Text != "run the tests 900001" {
		t.Fatalf("got %d exchanges, first %q", len(got), got[0].Prompt.Text)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exchanges of 300 MiB vs 2 MiB (-want +got):\n%s", diff)
	}
	if gotSt.BytesRead != wantSt.BytesRead || gotSt.BytesRead > 1<<20 {
		t.Errorf("read %d bytes of 300 MiB and %d of 2 MiB; want the same, under 1 MiB", gotSt.BytesRead, wantSt.BytesRead)
	}
	ex, err := Exchanges(big, 0)
	if err != nil || len(ex) != DefaultExchanges {
		t.Fatalf("Exchanges = %d exchanges, %v", len(ex), err)
	}
}

// BenchmarkExchanges reads the last 3 exchanges of a 2 MiB and a 2 GiB
// transcript (the 2 GiB file is written to b.TempDir first, which takes a
// few seconds, only when this benchmark runs). ns/op should be about equal.
func BenchmarkExchanges(b *testing.B) {
	tail := bigTail()
	for _, bc := range []struct {
		name string
		size int64
	}{{"2MiB", 2 << 20}, {"2GiB", 2 << 30}} {
		b.Run(bc.name, func(b *testing.B) {
			p := filepath.Join(b.TempDir(), "t.jsonl")
			writeBigTranscript(b, p, bc.size, tail)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				ex, err := Exchanges(p, 3)
				if err != nil || len(ex) != 3 {
					b.Fatalf("Exchanges = %d, %v", len(ex), err)
				}
			}
		})
	}
}

// BenchmarkCountLines is the cost of a rider's rows: one sequential read
// of the whole transcript (reported as throughput).
func BenchmarkCountLines(b *testing.B) {
	p := filepath.Join(b.TempDir(), "t.jsonl")
	writeBigTranscript(b, p, 256<<20, bigTail())
	f, size, err := openTranscript(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		if _, err := countLines(f, size); err != nil {
			b.Fatal(err)
		}
	}
}

// appendSparse extends the file at path by n bytes of a hole (NULs, no
// "\n", no disk) and then writes tail.
func appendSparse(tb testing.TB, path string, n int64, tail string) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(tail), fi.Size()+n); err != nil {
		tb.Fatal(err)
	}
}

// A row of 128 MiB and a torn tail of 128 MiB (both sparse) are not held:
// the exchanges before and between them read as without them, and the
// read allocates a fraction of their size.
func TestExchangesHoldNoHugeRow(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	b := newBuilder(testSID, testCWD)
	steeredTurn(b, 1)
	steeredTurn(b, 2)
	if err := os.WriteFile(p, []byte(b.String()+`{"type":"user","x":"`), 0o600); err != nil {
		t.Fatal(err)
	}
	appendSparse(t, p, 128<<20, `"}`+"\n")
	b = newBuilder(testSID, testCWD)
	steeredTurn(b, 3)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	appendSparse(t, p, 128<<20, `{"type":"assistant"`) // torn: no "\n"

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ex, st := exchangesOf(t, p, 3)
	runtime.ReadMemStats(&after)
	var prompts []string
	for _, e := range ex {
		prompts = append(prompts, e.Prompt.Text)
	}
	if diff := cmp.Diff([]string{"run the tests 1", "run the tests 2", "run the tests 3"}, prompts); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	if st.LongRows != 1 || st.TornBytes != 128<<20+int64(len(`{"type":"assistant"`)) {
		t.Errorf("long rows %d, torn bytes %d", st.LongRows, st.TornBytes)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 100<<20 {
		t.Errorf("the read allocated %d MiB: a huge row was held", got>>20)
	}
}
