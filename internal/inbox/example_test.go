package inbox_test

import (
	"fmt"

	"github.com/oo-family/oo-claude/internal/inbox"
)

func ExampleTagged() {
	fmt.Println(inbox.Tagged("hi", "luna"))
	fmt.Println(inbox.Tagged("[zai 📡 PONG 🐉] hi", "luna"))
	// Output:
	// [luna 📡] hi
	// [zai 📡 PONG 🐉] hi
}
