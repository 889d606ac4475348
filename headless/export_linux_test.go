package headless

// GroupHasLiving is groupHasLiving, for TestGroupHasLiving.
var GroupHasLiving = groupHasLiving
