// Package seconds parses the seconds that knobs and flags take: a plain
// decimal number, an exponent allowed ("5", "0.5", ".25", "1e-3", "1e3"),
// never a hex float, an underscore, an infinity, NaN or a sign, and at most
// Max. [Decimal] is the same rule for the other numbers flags take (a
// budget in USD).
package seconds

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Max is the largest number of seconds accepted (about 115 days).
const Max = 1e7

// Parse reads v as a duration in seconds. ok is false for anything but a
// plain decimal number in [0, Max], and for a value that rounds to 0 when
// allowZero is false.
func Parse(v string, allowZero bool) (d time.Duration, ok bool) {
	f, ok := Decimal(v)
	if !ok {
		return 0, false
	}
	d = time.Duration(f * float64(time.Second))
	if f > Max || d < 0 || (d == 0 && !allowZero) {
		return 0, false
	}
	return d, true
}

// Decimal reads v as a plain decimal number, the one rule of every number
// a flag or knob takes: ok is false for a hex float ("0x1p1"), an
// underscore ("1_0"), a sign, NaN, an infinity or a number too large for a
// float64.
func Decimal(v string) (f float64, ok bool) {
	if !plainDecimal(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// Want says what Parse accepts, for the message of a refused value:
// "seconds ≥ 0 and ≤ 10000000 (a decimal such as 5, 0.5 or 1e-3)", with
// "> 0" when zero is not allowed.
func Want(allowZero bool) string {
	low := "> 0"
	if allowZero {
		low = "≥ 0"
	}
	return fmt.Sprintf("seconds %s and ≤ %s (a decimal such as 5, 0.5 or 1e-3)", low, strconv.FormatFloat(Max, 'f', -1, 64))
}

// plainDecimal reports whether v is a decimal number: digits with at most
// one '.', at least one digit, and optionally an exponent ("e-3").
func plainDecimal(v string) bool {
	mant, exp := v, ""
	if i := strings.IndexAny(v, "eE"); i >= 0 {
		mant, exp = v[:i], v[i+1:]
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		if exp == "" || strings.Trim(exp, "0123456789") != "" {
			return false
		}
	}
	digits, dots := 0, 0
	for i := 0; i < len(mant); i++ {
		switch c := mant[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}
