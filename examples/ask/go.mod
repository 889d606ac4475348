module example.com/ask

go 1.26.0

require github.com/oo-family/oo-claude v0.0.0

require (
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/oo-family/oo-claude => ../..
