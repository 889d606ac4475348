package claudeproc

// GroupHasLiving is groupHasLiving, for TestGroupHasLiving.
var GroupHasLiving = groupHasLiving
