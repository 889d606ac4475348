package seconds

import (
	"testing"
	"time"
)

// TestParse: only plain decimals are seconds; "0x1p1" was read as 2 s.
func TestParse(t *testing.T) {
	cases := []struct {
		in        string
		allowZero bool
		want      time.Duration
		ok        bool
	}{
		{"5", false, 5 * time.Second, true},
		{"0.5", false, 500 * time.Millisecond, true},
		{".25", false, 250 * time.Millisecond, true},
		{"2.", false, 2 * time.Second, true},
		{"0", true, 0, true},
		{"0", false, 0, false},
		{"0.0000000001", false, 0, false},
		{"0x1p1", false, 0, false},
		{"0X10", false, 0, false},
		{"1e3", false, 1000 * time.Second, true},
		{"1e-300", true, 0, true},
		{"1e-300", false, 0, false},
		{"1e", false, 0, false},
		{"1e+", false, 0, false},
		{"e3", false, 0, false},
		{"0x1p-2", false, 0, false},
		{"+1", false, 0, false},
		{"-1", true, 0, false},
		{"Inf", false, 0, false},
		{"NaN", true, 0, false},
		{"1_000", false, 0, false},
		{"", true, 0, false},
		{".", true, 0, false},
		{"1.2.3", false, 0, false},
		{" 1", false, 0, false},
		{"10000001", false, 0, false},
	}
	for _, c := range cases {
		got, ok := Parse(c.in, c.allowZero)
		if ok != c.ok || got != c.want {
			t.Errorf("Parse(%q, %v) = %v, %v; want %v, %v", c.in, c.allowZero, got, ok, c.want, c.ok)
		}
	}
}

// FuzzParse: whatever it accepts is a duration in [0, Max] seconds, never 0
// when zero is not allowed, and only from digits, one '.' and an exponent.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"5", "0.5", "1e-300", "0x1p1", "NaN", "Inf", "-1", "1_0", ".", "1e"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, allowZero bool) {
		d, ok := Parse(s, allowZero)
		if !ok {
			if d != 0 {
				t.Fatalf("Parse(%q) refused but returned %v", s, d)
			}
			return
		}
		if d < 0 || d > time.Duration(Max*float64(time.Second)) || (!allowZero && d == 0) {
			t.Fatalf("Parse(%q, %v) = %v", s, allowZero, d)
		}
		for _, c := range s {
			if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
				t.Fatalf("Parse(%q) accepted %q", s, c)
			}
		}
	})
}

// TestWant: the message names the bound; "1e20" was refused with "want
// seconds ≥ 0" though it is ≥ 0.
func TestWant(t *testing.T) {
	for _, c := range []struct {
		allowZero bool
		want      string
	}{
		{true, "seconds ≥ 0 and ≤ 10000000 (a decimal such as 5, 0.5 or 1e-3)"},
		{false, "seconds > 0 and ≤ 10000000 (a decimal such as 5, 0.5 or 1e-3)"},
	} {
		if got := Want(c.allowZero); got != c.want {
			t.Errorf("Want(%v) = %q, want %q", c.allowZero, got, c.want)
		}
	}
}

// TestDecimal: a budget takes the same plain decimals as seconds; "0x1p1"
// was a budget of 2 USD and "1_0" one of 10.
func TestDecimal(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0.25", 0.25, true},
		{"2", 2, true},
		{".5", 0.5, true},
		{"1e-2", 0.01, true},
		{"0", 0, true},
		{"0x1p1", 0, false},
		{"1_0", 0, false},
		{"+1", 0, false},
		{"-0", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"1e400", 0, false},
		{"", 0, false},
		{"1 ", 0, false},
	}
	for _, c := range cases {
		if got, ok := Decimal(c.in); ok != c.ok || got != c.want {
			t.Errorf("Decimal(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
