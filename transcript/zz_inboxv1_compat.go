package transcript

// Reply is receipt.Reply. This file lets the module build until every use
// names receipt.Reply directly; the move script rewrites the uses and
// deletes it.

import "github.com/oo-family/oo-claude/receipt"

type Reply = receipt.Reply
