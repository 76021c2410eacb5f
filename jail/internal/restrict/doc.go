// Package restrict holds the restrictions init's setup and the Landlock fallback both apply:
// capabilities dropped, no_new_privs, non-dumpable, inherited descriptors closed, rlimits,
// Landlock's and seccomp's configuration from the plan, and the locked thread that restricts
// itself and starts the command.
package restrict
