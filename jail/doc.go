// Package jail is the launcher: it runs a plan.Spec's command in a fresh sandbox and reports how
// it went. Run (or Prestart, then Early.Run) starts the sandbox's init in new namespaces, sends
// it the plan and waits; RunReport also observes the run for --report and --json-status-fd. The
// host side lives here: the egress proxy, signals, the timeout, the Landlock fallback when user
// namespaces are refused, `jail doctor`. What runs inside the sandbox lives in internal packages
// (setup, mount, restrict, explain), the C processes in internal/spawn, and the host-init
// protocol in internal/wire; docs/architecture.md draws the whole.
//
// A program that runs sandboxes must call MaybeInit first in main (and in TestMain), because the
// sandbox's init is this same binary.
package jail
