package e2b

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/client"
)

// Templates maps E2B template names to jail profiles (names or files). A name it does not hold
// runs on base's profile, so that a provider asking for its own template (Mastra's
// mastra-<hash>) works unchanged.
type Templates map[string]string

// DefaultTemplates maps base, E2B's default template, to agent, jail's default profile.
func DefaultTemplates() Templates { return Templates{"base": "agent"} }

// Profile is the jail profile template runs on.
func (t Templates) Profile(template string) string {
	if p, ok := t[template]; ok {
		return p
	}
	return t["base"]
}

// DefaultTimeout is an E2B sandbox's lifetime when create names none: the SDKs' default.
const DefaultTimeout = 300 * time.Second

// Labels of a jail sandbox that is an E2B sandbox: every other label is an E2B metadata entry.
const (
	labelPrefix   = "e2b."
	labelTemplate = labelPrefix + "template"
)

// newSandbox is the body of POST /sandboxes and POST /v2/sandboxes (E2B's NewSandbox and
// NewSandboxV2). Fields E2B adds later are ignored; those below that jail cannot honour are
// refused by name.
type newSandbox struct {
	TemplateID          string            `json:"templateID"`
	Timeout             *int64            `json:"timeout"` // seconds
	Metadata            map[string]string `json:"metadata"`
	EnvVars             map[string]string `json:"envVars"`
	AllowInternetAccess *bool             `json:"allow_internet_access"`
	Network             *networkConfig    `json:"network"`
	AutoPause           *bool             `json:"autoPause"`
	AutoResume          *struct {
		Enabled bool `json:"enabled"`
	} `json:"autoResume"`
	MCP          json.RawMessage `json:"mcp"`
	VolumeMounts json.RawMessage `json:"volumeMounts"`
}

// networkConfig is E2B's SandboxNetworkConfig.
type networkConfig struct {
	AllowOut        []string        `json:"allowOut"`
	DenyOut         []string        `json:"denyOut"`
	MaskRequestHost string          `json:"maskRequestHost"`
	EgressProxy     json.RawMessage `json:"egressProxy"`
	Rules           json.RawMessage `json:"rules"`
}

// unsupportedError is a request for something jail does not do; the control plane answers it
// with 400 and the message.
type unsupportedError string

func (e unsupportedError) Error() string { return "jail: " + string(e) }

func unsupportedf(format string, args ...any) error {
	return unsupportedError(fmt.Sprintf(format, args...))
}

// createRequest turns an E2B create into jail's: the template's profile, every layer on, no
// tool caches; the user's home and /workspace as private writable directories; workdir, a
// directory of the endpoint's own, as the working directory the profile grants; the timeout as
// the sandbox's TTL; metadata as labels; network options as the egress proxy's allowed hosts.
func (s *Server) createRequest(in newSandbox, workdir string) (api.CreateRequest, error) {
	req := api.CreateRequest{
		Profile: s.Templates.Profile(in.TemplateID),
		Workdir: workdir,
		Cwd:     Home,
		Grants:  api.Grants{Tmpfs: []string{Home, Workspace}},
		Env:     map[string]string{"HOME": Home},
		Labels:  map[string]string{labelTemplate: in.TemplateID},
		TTL:     api.Duration(DefaultTimeout),
		// Each E2B sandbox starts clean, and its working directory is its own: caches kept
		// for it would be left behind, one directory per sandbox, and reach no later one.
		Cache: []string{"none"},
	}
	if in.TemplateID == "" {
		return req, unsupportedf("create: templateID is required")
	}
	if in.Timeout != nil {
		if *in.Timeout <= 0 {
			return req, unsupportedf("create: timeout %d: a sandbox's timeout is a positive number of seconds", *in.Timeout)
		}
		req.TTL = api.Duration(time.Duration(*in.Timeout) * time.Second)
	}
	for k, v := range in.EnvVars {
		req.Env[k] = v
	}
	for k, v := range in.Metadata {
		if strings.HasPrefix(k, labelPrefix) {
			return req, unsupportedf("metadata %q: keys starting with %q are jail's own", k, labelPrefix)
		}
		req.Labels[k] = v
	}
	if err := client.CheckLabels(req.Labels); err != nil {
		return req, unsupportedf("metadata: jail keeps an E2B sandbox's metadata as its labels: %s", strings.TrimPrefix(err.Error(), "jail: "))
	}
	switch {
	case len(in.MCP) > 0 && string(in.MCP) != "null":
		return req, unsupportedf("create: mcp: jail runs no MCP gateway in a sandbox")
	case len(in.VolumeMounts) > 0 && string(in.VolumeMounts) != "null" && string(in.VolumeMounts) != "[]":
		return req, unsupportedf("create: volumeMounts: jail has no E2B volumes (grant host directories with the template's profile)")
	case in.AutoResume != nil && in.AutoResume.Enabled:
		return req, unsupportedf("create: autoResume: jail does not pause sandboxes, so none resumes")
	}
	var err error
	req.Network, err = network(in.AllowInternetAccess, in.Network)
	return req, err
}

// network maps E2B's network options onto jail's: allowed host names go through jail's egress
// proxy, everything else stays unreachable; no options, or allow_internet_access alone, keep
// the profile's network (the Python SDK sends allow_internet_access: true by default).
func network(internet *bool, n *networkConfig) (api.Network, error) {
	var out api.Network
	if internet != nil && !*internet {
		out.Mode = "none"
	}
	if n == nil {
		return out, nil
	}
	switch {
	case len(n.EgressProxy) > 0 && string(n.EgressProxy) != "null":
		return out, unsupportedf("network.egressProxy: jail's own egress proxy is the only way out of a sandbox")
	case len(n.Rules) > 0 && string(n.Rules) != "null" && string(n.Rules) != "{}":
		return out, unsupportedf("network.rules: jail's egress proxy does not rewrite requests")
	case n.MaskRequestHost != "":
		return out, unsupportedf("network.maskRequestHost: jail exposes no sandbox port")
	}
	for _, d := range n.DenyOut {
		if d != "0.0.0.0/0" && d != "::/0" {
			return out, unsupportedf("network.denyOut %q: jail denies every destination but the allowed hosts; it cannot deny some and allow the rest (give denyOut [\"0.0.0.0/0\"] and allowOut host names)", d)
		}
		out.Mode = "none"
	}
	for _, a := range n.AllowOut {
		if net.ParseIP(a) != nil || strings.Contains(a, "/") {
			return out, unsupportedf("network.allowOut %q: jail's egress proxy allows host names, not addresses", a)
		}
		out.AllowHosts = append(out.AllowHosts, a)
	}
	if len(out.AllowHosts) > 0 {
		out.Mode = "proxy"
	}
	return out, nil
}
