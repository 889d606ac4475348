package transcriptfile

import (
	"strings"
	"testing"
)

// The expected values were computed with the JavaScript of Claude Code's
// encoder (replace(/[^a-zA-Z0-9]/g,"-"), cut at 200, "-" +
// Math.abs(hashCode).toString(36)) run under Node.
func TestEncodeProjectDir(t *testing.T) {
	// A cwd whose hashCode is exactly math.MinInt32: Math.abs makes it
	// 2147483648, base 36 "zik0zk" (a Go int32 negation would overflow).
	minInt := "/home/u/" + strings.Repeat("p", 200) + string([]rune{2, 10, 14, 7, 6, 7, 29})
	tests := []struct {
		name, cwd, want string
	}{
		// Measured with Claude Code 2.1.332 run in that directory: 17 UTF-16
		// units, 17 characters (the facts file's "-tmp--dir-x-y---" lacks one).
		{"measured", "/tmp/ü dir.x_y+é~", "-tmp---dir-x-y---"},
		{"empty", "", ""},
		{"root", "/", "-"},
		{"plain", "/home/u/proj", "-home-u-proj"},
		{"alnum kept", "ABCxyz019", "ABCxyz019"},
		{"CJK one unit each", "/tmp/日本語/dir", "-tmp-----dir"},
		{"exactly 200 kept", "/" + strings.Repeat("b", 199), "-" + strings.Repeat("b", 199)},
		{"201 cut and hashed", "/" + strings.Repeat("b", 200), "-" + strings.Repeat("b", 199) + "-86ms41"},
		{"long", "/home/u/" + strings.Repeat("a", 250), "-home-u-" + strings.Repeat("a", 192) + "-bkw3mj"},
		{"long path", "/home/u/" + strings.Repeat("deep/", 50), "-home-u-" + strings.Repeat("deep-", 38) + "de-963qed"},
		{"non-BMP is two units", "/x/" + strings.Repeat("😀", 120), "-x-" + strings.Repeat("-", 197) + "-rq304y"},
		{"non-BMP makes it long", "/" + strings.Repeat("😀", 100), strings.Repeat("-", 200) + "-5s12ud"},
		{"hash is MinInt32", minInt, "-home-u-" + strings.Repeat("p", 192) + "-zik0zk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EncodeProjectDir(tt.cwd); got != tt.want {
				t.Errorf("EncodeProjectDir(%q) = %q, want %q", tt.cwd, got, tt.want)
			}
		})
	}
}

func TestCWDMatches(t *testing.T) {
	tests := []struct {
		name, dir, cwd string
		want           bool
	}{
		{"same", "-home-u-proj", "/home/u/proj", true},
		{"other", "-home-u-proj", "/home/u/play", false},
		{"lossy encoding matches too", "-home-u-proj", "/home/u.proj", true},
		{"empty cwd never", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CWDMatches(tt.dir, tt.cwd); got != tt.want {
				t.Errorf("CWDMatches(%q, %q) = %v, want %v", tt.dir, tt.cwd, got, tt.want)
			}
		})
	}
}

func FuzzEncodeProjectDir(f *testing.F) {
	for _, s := range []string{"", "/tmp/ü dir.x_y+é~", "/" + strings.Repeat("😀", 100), "\xff\xfe", strings.Repeat("a/", 150)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cwd string) {
		got := EncodeProjectDir(cwd)
		if len(got) > maxProjectDirPrefix+1+7 {
			t.Fatalf("len %d > 208: %q", len(got), got)
		}
		for i := 0; i < len(got); i++ {
			c := got[i]
			if !(c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				t.Fatalf("byte %q at %d in %q", c, i, got)
			}
		}
		if got != EncodeProjectDir(cwd) {
			t.Fatal("not deterministic")
		}
		if !CWDMatches(got, cwd) && cwd != "" {
			t.Fatal("CWDMatches disagrees with EncodeProjectDir")
		}
	})
}
