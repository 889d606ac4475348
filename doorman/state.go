package doorman

import "github.com/oo-family/oo-claude/inboxv1"

// StateStarting is New's status ([Status.State]) until Run has
// established the identity; it is never in a heartbeat. The other states
// of [Status.State], [IdentityError.State] and the heartbeat are
// inboxv1's (inboxv1.StateFollowing, ...).
const StateStarting inboxv1.State = "starting"
