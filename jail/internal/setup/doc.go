// Package setup is the sandbox's init once Go's runtime runs in it: it does what its namespaces
// call for before the plan arrives (the prelude), reads the plan, builds the root filesystem
// (package mount), sets the hostname, limits and working directory, then restricts one locked
// thread (package restrict) and starts the command from it as pid 1's child. It executes the
// plan; it decides nothing.
package setup
