// Package gitimport brings what a command committed in git commit mode out of the sandbox:
// once every sandboxed process is gone, it reads the overlay's upper directory as data, takes
// the new objects and the refs that changed, and nothing else (config, hooks, the index, info/,
// rebase state stay behind), checks the new commits with the host's git, and fetches them into
// the repository under a prefix of their own (refs/jail/RUN/...), for a person to merge.
//
// The host's git only ever runs on the real repository (whose config the sandbox could not
// write) and on a source repository this package writes itself (config, HEAD, refs), whose
// objects are the quarantined new ones plus the real repository's, through alternates — the
// way git's own receive-pack quarantines a push. fetch.fsckObjects checks every object it
// brings in.
package gitimport
