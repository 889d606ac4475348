package transcriptfile_test

import (
	"fmt"

	"github.com/oo-family/oo-claude/internal/transcriptfile"
)

func ExampleEncodeProjectDir() {
	fmt.Println(transcriptfile.EncodeProjectDir("/home/u/proj"))
	fmt.Println(transcriptfile.EncodeProjectDir("/tmp/ü dir.x_y+é~"))
	// Output:
	// -home-u-proj
	// -tmp---dir-x-y---
}
