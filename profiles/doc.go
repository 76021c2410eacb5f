// Package profiles is jail's profile language: TOML files (the built-ins are embedded), decoded
// strictly, composed with extends, with variables (~, $HOME, $CWD, $TMPDIR, the git paths) and
// optional paths; command-line flags write into the same Profile value as files do. Load finds
// and reads a profile, Merge lays one over another, and Resolve turns one into a plan.Spec on
// this host: values validated, paths resolved without following a planted symlink, the ordered
// mount list worked out, the environment filtered. Errors name file, line and key.
package profiles
