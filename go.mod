module github.com/oo-family/oo-claude

go 1.26.0

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/google/go-cmp v0.7.0
	github.com/google/uuid v1.6.0
	github.com/peterbourgon/ff/v3 v3.4.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/rogpeppe/go-internal v1.14.1
	golang.org/x/tools v0.26.0 // indirect
)
