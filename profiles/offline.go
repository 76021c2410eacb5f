package profiles

import "cmp"

// offlineEnv is what a sandbox without network (mode "none") tells the package managers that
// retry a registry they cannot reach, a minute and more, before failing: how often to retry, so
// that each fails at once and names the network error. A profile's NAME=VALUE, or the variable
// passed through from the host, wins. Measured under mode "none" (the failure without, with):
//
//	npm  `npm view left-pad`        71 s, 0.8 s   fetch-retries: two retries, 10 s and 60 s apart
//	cargo `cargo fetch`             12 s, 0.05 s  net.retry: three, with pauses
//	pip  `pip download left-pad`    9 s, 1.1 s    retries: five; with none pip hides the cause
//	                                              (name resolution), one retry still names it
//
// Go is left alone: it fails at once already ("network is unreachable"), and GOPROXY=off would
// only make the message misleading.
var offlineEnv = []string{
	"npm_config_fetch_retries=0",
	"CARGO_NET_RETRY=0",
	"PIP_RETRIES=1",
}

// noNetworkEnv is offlineEnv in mode "none", else nothing.
func noNetworkEnv(n NetworkRules) []string {
	if cmp.Or(n.Mode, defaultNetworkMode) != "none" {
		return nil
	}
	return offlineEnv
}
