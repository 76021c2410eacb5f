package profiles

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/proxy"
)

// Defaults of the keys a profile may leave unset.
const (
	defaultHostname     = "jail"
	defaultNetworkMode  = "none"
	defaultLandlockMode = "best-effort"
	defaultSyscalls     = "allow"
	defaultErrno        = "EPERM"
)

// Resolve turns a loaded profile into the plan the launcher executes: variables expanded,
// values validated, paths resolved on the host into the ordered mount list, the environment
// filtered, defaults filled in. Errors point at the line of the offending value; warnings go to
// Spec.Warnings. Every error is found in one call: what is wrong is left out and the rest is
// checked, and more than one comes as an ErrorList.
func Resolve(p *Profile, host Host, argv []string) (*plan.Spec, error) {
	paths := newResolver()
	repo, refused := host.repository(paths)
	var errs ErrorList
	vars := host.variables(repo)
	e, err := expand(p, vars)
	errs.add(err)
	warnings, err := validate(e)
	errs.add(err)
	pl := &planner{p: e, host: host, repo: repo, selfBinds: map[string]bool{}, named: map[string]string{}, paths: paths,
		cwdWrites: cwdWrites(p, vars), creatableIn: map[string]bool{}}
	mounts, err := pl.plan()
	if errs.add(err); len(errs) > 0 {
		return nil, errs.err()
	}
	caches, cacheMounts, err := pl.caches() // cache.go
	if err != nil {
		return nil, err
	}
	pl.mounts = sortMounts(append(mounts, cacheMounts...))
	home, err := pl.paths.physical(filepath.Clean(host.Home))
	if err != nil {
		return nil, fmt.Errorf("resolve home %s: %w", host.Home, err)
	}
	cwd, err := workingDir(e, host, pl.mounts, pl.paths)
	if err != nil {
		return nil, err
	}
	if err := pl.workspace(cwd); err != nil {
		return nil, err
	}
	mounts = pl.mounts
	spec := &plan.Spec{
		Profile:    strings.TrimPrefix(p.Source, builtinPrefix),
		Argv:       argv,
		Cwd:        cwd,
		Env:        environment(e.Process.Env, host.Environ, home, noNetworkEnv(e.Network), append(proxyEnv(e.Network), cacheVars(caches)...)),
		Hostname:   cmp.Or(e.Process.Hostname, defaultHostname),
		Mounts:     mounts,
		Namespaces: plan.NamespacesFor(e.Network.Mode),
		Network: plan.Network{Mode: cmp.Or(e.Network.Mode, defaultNetworkMode),
			TCPConnect: e.Network.TCPConnect, TCPBind: e.Network.TCPBind, Proxy: proxyPlan(e.Network, e.Limits)},
		Limits:   limits(e.Limits, host.RAM),
		Landlock: landlockRules(e.Landlock, mounts),
		Syscalls: plan.Syscalls{Default: cmp.Or(e.Syscalls.Default, defaultSyscalls),
			Deny: e.Syscalls.Deny, Allow: e.Syscalls.Allow,
			Errno: cmp.Or(e.Syscalls.Errno, defaultErrno), Log: deref(e.Syscalls.Log)},
		Git:         pl.gitPlan,
		Caches:      caches,
		Fallback:    e.Sandbox.Fallback,
		AllowWeaker: deref(e.Sandbox.AllowWeaker),
	}
	if refused != nil {
		spec.Warnings = append(spec.Warnings, "git: "+refused.Error()+"; the repository is not granted")
	}
	for _, w := range append(warnings, pl.warnings...) {
		spec.Warnings = append(spec.Warnings, w.Error())
	}
	return spec, nil
}

// workingDir is process.cwd, else the host's working directory when a grant makes it visible,
// else /; its physical path, like every target.
func workingDir(p *Profile, host Host, mounts []plan.Mount, paths *resolver) (string, error) {
	dir := p.Process.Cwd
	if dir == "" {
		dir = host.Cwd
	}
	if !filepath.IsAbs(dir) {
		return "", p.errorAt("process.cwd", dir, "%s: not an absolute path", dir)
	}
	target, err := paths.physical(filepath.Clean(dir))
	if err != nil {
		return "", p.errorAt("process.cwd", dir, "resolve %s: %w", dir, err)
	}
	visible := slices.ContainsFunc(mounts, func(m plan.Mount) bool {
		return (m.Kind == plan.MountBind || m.Kind == plan.MountROBind || m.Kind == plan.MountOverlay) && within(target, m.Target) ||
			(m.Kind == plan.MountTmpfs || m.Kind == plan.MountDir) && m.Target == target
	})
	if !visible && p.Process.Cwd == "" {
		return "/", nil
	}
	return target, nil
}

// environment builds the command's environment, deny by default: defaults first (a host
// variable passed through wins), host variables whose name matches a NAME or glob entry pass
// through, then what jail's features need (the egress proxy's, the caches' settings, over the
// host's), NAME=VALUE entries set (and win), and HOME is the home directory inside unless the
// profile sets it. Sorted by name.
func environment(rules, hostEnv []string, home string, defaults, jailVars []string) []string {
	env := map[string]string{}
	setAll(env, defaults)
	for _, kv := range hostEnv {
		name, value, _ := strings.Cut(kv, "=")
		if slices.ContainsFunc(rules, func(rule string) bool {
			ok, _ := path.Match(rule, name) // patterns were checked by checkEnv
			return !strings.Contains(rule, "=") && ok
		}) {
			env[name] = value
		}
	}
	env["HOME"] = home
	setAll(env, jailVars)
	for _, rule := range rules {
		if name, value, ok := strings.Cut(rule, "="); ok {
			env[name] = value
		}
	}
	out := make([]string, 0, len(env))
	for _, name := range slices.Sorted(maps.Keys(env)) {
		out = append(out, name+"="+env[name])
	}
	return out
}

// setAll sets each NAME=VALUE of kvs in env.
func setAll(env map[string]string, kvs []string) {
	for _, kv := range kvs {
		name, value, _ := strings.Cut(kv, "=")
		env[name] = value
	}
}

// proxyPlan is the egress proxy's plan for network mode "proxy", else nil. Each connection
// through the proxy is an open file of the sandbox's on the host: [limits] open_files, when
// set, bounds them too.
func proxyPlan(n NetworkRules, l LimitRules) *plan.Proxy {
	if n.Mode != "proxy" {
		return nil
	}
	conns := uint64(proxy.DefaultMaxConnections)
	if n.MaxConnections != nil {
		conns = *n.MaxConnections
	}
	if l.OpenFiles != nil && *l.OpenFiles > 0 {
		conns = min(conns, *l.OpenFiles)
	}
	buf := uint64(proxy.DefaultMaxBuffer)
	if n.MaxBuffer != nil {
		buf = *n.MaxBuffer
	}
	return &plan.Proxy{Allow: n.Allow, Deny: n.Deny, AllowPrivate: deref(n.AllowPrivate),
		HTTPPort: proxy.HTTPPort, SOCKSPort: proxy.SOCKSPort,
		MaxConnections: int(conns), MaxBuffer: int64(buf)}
}

// tempDir is the host's temporary directory ($TMPDIR, else /tmp) with its symlinks resolved, as
// os.TempDir would name it; as written when it cannot be resolved (then the run fails to create
// the directory there, and says so).
func tempDir(host Host, paths *resolver) string {
	dir := cmp.Or(host.TmpDir, "/tmp")
	if !filepath.IsAbs(dir) {
		return dir
	}
	if w := paths.walk(filepath.Clean(dir)); w.exists && w.err == nil {
		return w.physical
	}
	return dir
}

// proxyEnv points the command's tools at the proxy ports, in mode "proxy".
func proxyEnv(n NetworkRules) []string {
	if n.Mode != "proxy" {
		return nil
	}
	return proxy.SandboxEnv()
}

// limits converts [limits]; the timeout was checked by checkLimits. ram is the host's memory, of
// which the private tmpfs mounts get an eighth unless the profile says otherwise.
func limits(l LimitRules, ram uint64) plan.Limits {
	var timeout time.Duration
	if l.Timeout != "" {
		timeout, _ = time.ParseDuration(l.Timeout)
	}
	return plan.Limits{
		TimeoutSeconds: timeout.Seconds(),
		CPUSeconds:     deref(l.CPU),
		AddressSpace:   deref(l.AddressSpace),
		Processes:      deref(l.Processes),
		OpenFiles:      deref(l.OpenFiles),
		FileSize:       deref(l.FileSize),
		Core:           deref(l.Core),
		Tmpfs:          cmp.Or(deref(l.Tmpfs), defaultTmpfs(ram)),
	}
}

// defaultTmpfs is limits.tmpfs when a profile leaves it unset: an eighth of the host's RAM,
// which no ordinary build fills (a cold Go build cache of a large project is a few hundred MB)
// and which keeps a runaway command to half of a quarter of the host's memory (the files' inodes
// add at most a quarter of that again: mount.storeInodes). 1 GiB when the RAM is not known.
func defaultTmpfs(ram uint64) uint64 {
	if ram == 0 {
		return 1 << 30
	}
	return ram / 8
}

// landlockRules mirrors the mounts: read-only grants (and /proc, and the empty home
// directory) may be read and executed; writable binds, tmpfs mounts and /dev get every right.
// Masks add nothing: Landlock rights only add up down a hierarchy, so the mounts enforce them.
// Every directory may be listed: the new root holds only the grants, so listing reveals no more
// than the mounts already show, and `ls /` or os.listdir("..") keep working.
// [landlock] read or write, when set, replace the mirrored list. Read grants that read-only binds
// back get truncate too (readOnlyBinds).
func landlockRules(rules LandlockRules, mounts []plan.Mount) plan.Landlock {
	l := plan.Landlock{Mode: cmp.Or(rules.Mode, defaultLandlockMode), List: []string{"/"}}
	for _, m := range mounts {
		switch m.Kind {
		case plan.MountROBind, plan.MountProc, plan.MountDir:
			l.Read = append(l.Read, m.Target)
		case plan.MountBind, plan.MountTmpfs, plan.MountDev, plan.MountOverlay:
			l.Write = append(l.Write, m.Target)
		}
	}
	if rules.Read != nil {
		l.Read = cleanPaths(rules.Read)
	}
	if rules.Write != nil {
		l.Write = cleanPaths(rules.Write)
	}
	robinds := readOnlyBinds(mounts)
	for _, r := range l.Read {
		if robinds[r] {
			l.Truncate = append(l.Truncate, r)
		}
	}
	return l
}

// readOnlyBinds are the targets of read-only binds that the mount namespace alone keeps
// read-only, truncate included (EROFS): no writable mount (bind, tmpfs, /dev, overlay, pin) lies
// at or beneath one, nor covers it from above later in the order. Landlock asks for truncate at
// every open (to allow ftruncate later), and an open's check walks up from the file until the
// rules met grant all it asks, so a read grant without truncate sent the check of every open
// beneath it on to the root: 0.5 µs an open under /usr here (docs/performance.md). Granting
// truncate there moves nothing the mounts do not already refuse; the fallback, which has no
// mounts, does not use it.
func readOnlyBinds(mounts []plan.Mount) map[string]bool {
	ro := map[string]bool{}
	for i, m := range mounts {
		if m.Kind != plan.MountROBind {
			continue
		}
		ro[m.Target] = true
		for j, w := range mounts {
			if writable(w.Kind) && (within(w.Target, m.Target) || j > i && within(m.Target, w.Target)) {
				delete(ro, m.Target)
			}
		}
	}
	return ro
}

// writable reports whether a mount of kind k can be written through.
func writable(k plan.MountKind) bool {
	switch k {
	case plan.MountBind, plan.MountTmpfs, plan.MountDev, plan.MountOverlay, plan.MountPin:
		return true
	}
	return false
}

// cleanPaths cleans absolute paths (checked by checkLandlock) and drops a trailing ?.
func cleanPaths(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, filepath.Clean(strings.TrimSuffix(p, "?")))
	}
	return out
}

// deref returns *v, or the zero value when v is nil.
func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}
