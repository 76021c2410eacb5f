package explain

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jail-sandbox/jail/internal/quote"
	"github.com/jail-sandbox/jail/plan"
)

// explain is d as the line the host prints (without "jail: "): what was refused, which part of
// spec refused it, and what would allow it — for a person, or a model deciding what to ask for.
func (d Denial) Explain(spec *plan.Spec) string {
	profile := "profile " + spec.Profile
	if d.Kind == "connect" {
		return fmt.Sprintf("denied connect %s — %s", d.Address, connectReason(d, spec, profile))
	}
	what := "denied write " + quote.Word(d.Path)
	switch d.Rule {
	case "protected":
		return fmt.Sprintf("%s — %s protects %s (the host may run it later); to allow: a profile without that protect entry (see: jail profile show %s)",
			what, profile, d.Under, spec.Profile)
	case "git-metadata":
		return fmt.Sprintf("%s — %s keeps the repository's git directory %s read-only (git.mode = \"read-only\"), so that nothing written there runs on the host later; to allow: commits through -p agent-commit",
			what, profile, d.Under)
	case "hidden":
		return fmt.Sprintf("%s — %s hides %s; to allow: a profile without that hide entry (see: jail profile show %s)",
			what, profile, d.Under, spec.Profile)
	case "not-in-sandbox":
		return fmt.Sprintf("%s — %s is not in the sandbox: %s puts an empty throwaway tmpfs at %s; to allow: --rw %s",
			what, quote.Word(filepath.Dir(d.Path)), profile, d.Under, quote.Word(filepath.Dir(d.Path)))
	case "mountpoint":
		return fmt.Sprintf("%s — it is a mountpoint of the sandbox, which cannot be renamed or removed; to allow: nothing (write inside it instead)", what)
	}
	return fmt.Sprintf("%s — %s %s; to allow: --rw %s", what, profile, grantsPhrase(spec), quote.Word(d.suggestedGrant()))
}

// grantsPhrase says where spec lets the command write.
func grantsPhrase(spec *plan.Spec) string {
	binds, tmpfs := writableGrants(spec)
	var s string
	switch {
	case len(binds) == 0 && len(tmpfs) == 0:
		return "grants no writes"
	case len(binds) == 0:
		s = "grants writes only in the throwaway " + strings.Join(tmpfs, ", ")
	default:
		s = "grants writes only under " + strings.Join(binds, ", ")
		if len(tmpfs) > 0 {
			s += " (and in the throwaway " + strings.Join(tmpfs, ", ") + ")"
		}
	}
	return s
}

func connectReason(d Denial, spec *plan.Spec, profile string) string {
	switch d.Rule {
	case "proxy-only":
		return profile + " reaches the network only through jail's proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY); to allow: --allow-host HOST for use through the proxy, or --net host"
	case "tcp-port":
		return fmt.Sprintf("%s allows TCP connections only to ports %s; to allow: add the port to tcp_connect in [network] of a profile", profile, ports(spec.Network.TCPConnect))
	}
	return profile + " has no network; to allow: --allow-host HOST or --net host"
}

func ports(ps []uint16) string {
	if len(ps) == 0 {
		return "none"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}

// suggestedGrant is the path to pass to --rw: the path itself when it existed, else its
// directory (a grant must exist).
func (d Denial) suggestedGrant() string {
	if d.Exists {
		return d.Path
	}
	return filepath.Dir(d.Path)
}
