// Package wire is the protocol between jail's host and the sandbox's init: the descriptors init
// inherits (ConfigFd, ReportFd), what travels on them in order (the namespaces, then the plan as
// a Config in a positional binary encoding, then Made once the host has made the placeholders,
// then EOF once the host catches signals), and the JSON lines init sends back (Message: an
// error, Landlock applied, the command started and how it ended, --explain's denials).
package wire
