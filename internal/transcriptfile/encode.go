package transcriptfile

import (
	"strconv"
	"unicode/utf16"
)

// Ext is the extension of a transcript file.
const Ext = ".jsonl"

// maxProjectDirPrefix is the number of encoded characters Claude Code keeps
// of a long project directory name before it appends "-" and a hash.
const maxProjectDirPrefix = 200

// EncodeProjectDir returns the name Claude Code gives the project directory
// of a session whose cwd is cwd (pass the realpath'd cwd, as Claude Code
// does). Every UTF-16 code unit of cwd that is not an ASCII letter or digit
// becomes '-' (so a character outside the Basic Multilingual Plane becomes
// "--"). When the result is longer than 200 characters it is cut to 200 and
// gets "-" and the base-36 absolute value of Java's String.hashCode of cwd
// (over its UTF-16 code units, as a signed 32-bit integer).
//
// Invalid UTF-8 in cwd counts as one U+FFFD per bad byte, as Go converts it.
func EncodeProjectDir(cwd string) string {
	units := utf16.Encode([]rune(cwd))
	out := make([]byte, len(units))
	var h int32
	for i, u := range units {
		h = h*31 + int32(u) // (h<<5)-h+u, wrapping like JavaScript's |0
		if isAlnum(u) {
			out[i] = byte(u)
		} else {
			out[i] = '-'
		}
	}
	if len(out) <= maxProjectDirPrefix {
		return string(out)
	}
	// Math.abs on a JavaScript number: abs(-2^31) is 2^31, so widen first.
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return string(out[:maxProjectDirPrefix]) + "-" + strconv.FormatInt(abs, 36)
}

func isAlnum(u uint16) bool {
	return u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9'
}

// CWDMatches reports whether projectDirName (the base name of a transcript's
// directory) is the encoding of cwd. It does not know about
// CLAUDE_CODE_PROJECT_DIR_NAME, which can replace the encoded name.
func CWDMatches(projectDirName, cwd string) bool {
	return cwd != "" && EncodeProjectDir(cwd) == projectDirName
}
