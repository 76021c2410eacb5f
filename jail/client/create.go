package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/api"
)

// Create creates a sandbox as req asks and returns it once it is ready. It runs `jail create`
// with req as that command's flags (CreateArgs), in req.Workdir: the command line and the API
// are one way in, and jail's constructor starts the sandbox's keeper and init before its Go
// runtime, which a library call could not.
func (c *Client) Create(ctx context.Context, req api.CreateRequest) (*api.Sandbox, error) {
	args, err := CreateArgs(req)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(req.Workdir); err != nil || !fi.IsDir() {
		return nil, api.Errorf(api.InvalidArgument, "workdir %q: not a directory", req.Workdir)
	}
	bin, err := c.binary()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = req.Workdir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	if runErr == nil {
		sb := &api.Sandbox{}
		if err := json.Unmarshal(out.Bytes(), sb); err != nil {
			return nil, api.Errorf(api.Internal, "jail create: its answer: %s", err)
		}
		return sb, nil
	}
	var body api.ErrorBody
	if json.Unmarshal(out.Bytes(), &body) == nil && body.Error != nil {
		return nil, body.Error
	}
	msg := strings.TrimSpace(errOut.String())
	if msg == "" {
		msg = runErr.Error()
	}
	return nil, api.Errorf(api.Internal, "jail create: %s", strings.TrimPrefix(msg, "jail: "))
}

// binary is the jail binary Create runs.
func (c *Client) binary() (string, error) {
	if c.Binary != "" {
		return c.Binary, nil
	}
	if self, err := os.Executable(); err == nil && filepath.Base(self) == "jail" {
		return self, nil
	}
	bin, err := exec.LookPath("jail")
	if err != nil {
		return "", api.Errorf(api.Internal, "create: no jail binary on PATH (set Client.Binary)")
	}
	return bin, nil
}

// CreateArgs turns a create request into the arguments of `jail create --json`, one flag for
// each field (docs/api.md's table).
func CreateArgs(req api.CreateRequest) ([]string, error) {
	if req.Workdir == "" || !filepath.IsAbs(req.Workdir) {
		return nil, api.Errorf(api.InvalidArgument, "workdir %q: an absolute host directory is required", req.Workdir)
	}
	args := []string{"create", "--json"}
	flag := func(name, value string) { args = append(args, "--"+name+"="+value) }
	if req.Profile != "" {
		flag("profile", req.Profile)
	}
	if req.Cwd != "" {
		flag("cwd", req.Cwd)
	}
	for _, g := range []struct {
		name  string
		paths []string
	}{{"ro", req.Grants.Read}, {"rw", req.Grants.Write}, {"hide", req.Grants.Hide}, {"tmpfs", req.Grants.Tmpfs}} {
		for _, p := range g.paths {
			if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "$") {
				return nil, api.Errorf(api.InvalidArgument, "grant %q: paths are absolute (or start with ~ or a variable)", p)
			}
			flag(g.name, p)
		}
	}
	if req.Network.Mode != "" {
		flag("net", req.Network.Mode)
	}
	for _, h := range req.Network.AllowHosts {
		flag("allow-host", h)
	}
	if req.Network.AllowPrivate {
		args = append(args, "--allow-private")
	}
	for _, kv := range sortedPairs(req.Env) {
		if strings.HasPrefix(kv, "=") {
			return nil, api.Errorf(api.InvalidArgument, "env: a variable needs a name")
		}
		flag("env", kv)
	}
	if len(req.Cache) > 0 {
		for _, tool := range req.Cache {
			if tool == "" || strings.Contains(tool, ",") {
				return nil, api.Errorf(api.InvalidArgument, "cache: %q is no tool's name", tool)
			}
		}
		flag("cache", strings.Join(req.Cache, ","))
	}
	for _, d := range []struct {
		name string
		v    api.Duration
	}{{"timeout", req.Timeout}, {"idle-timeout", req.IdleTimeout}, {"ttl", req.TTL}} {
		if d.v > 0 {
			flag(d.name, time.Duration(d.v).String())
		}
	}
	if req.Workspace != "" {
		flag("workspace", req.Workspace)
	}
	if req.Name != "" {
		flag("name", req.Name)
	}
	if err := CheckLabels(req.Labels); err != nil {
		return nil, err
	}
	for _, kv := range sortedPairs(req.Labels) {
		flag("label", kv)
	}
	return args, nil
}

func sortedPairs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// CheckLabels refuses labels that are not 1–63 characters of A-Za-z0-9_.-/ as keys, values up to
// 256 bytes, 32 of them at most.
func CheckLabels(labels map[string]string) error {
	if len(labels) > 32 {
		return api.Errorf(api.InvalidArgument, "labels: %d of them, at most 32", len(labels))
	}
	for k, v := range labels {
		ok := len(k) > 0 && len(k) <= 63
		for _, c := range k {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("_.-/", c)) {
				ok = false
			}
		}
		if !ok {
			return api.Errorf(api.InvalidArgument, "label %q: a key is 1 to 63 of A-Z a-z 0-9 _ . - /", k)
		}
		if len(v) > 256 || strings.ContainsRune(v, 0) {
			return api.Errorf(api.InvalidArgument, "label %q: a value is at most 256 bytes, without NUL", k)
		}
	}
	return nil
}

// ParseLabel splits a KEY=VALUE label.
func ParseLabel(s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("label %q: want KEY=VALUE", s)
	}
	return k, v, nil
}
