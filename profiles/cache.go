package profiles

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/internal/suggest"
	"github.com/jail-sandbox/jail/plan"
)

// CacheRules is the [cache] table: the tools whose caches persist from one run to the next.
type CacheRules struct {
	// Tools lists them ("go", "npm", "pip", "cargo"). Set, it replaces the list of the profile
	// it extends (an empty list turns caching off); unlike other lists, it does not append.
	Tools []string `toml:"tools"`
}

// A project's caches are a directory jail owns, $XDG_CACHE_HOME/jail/PROJECT (default
// ~/.cache/jail; PROJECT names the working directory), created on first use and bound writable
// into every sandbox of that project at its own path, with a directory per tool inside, at which
// the tool's environment points it. One bind serves every tool: the host creates and touches
// nothing beneath it, where the sandbox may have planted symlinks. The host's own caches
// (~/.cache/go-build, ~/go/pkg/mod, ~/.npm, ...) are never granted: a sandbox that poisons its
// cache poisons only what later sandboxes of the same project read, as it could through the
// project's own files, and the host's builds never read it.

// cacheEnv says how each tool is pointed at its cache directory dir.
var cacheEnv = map[string]func(dir string) []string{
	"go": func(dir string) []string {
		return []string{"GOCACHE=" + filepath.Join(dir, "build"), "GOMODCACHE=" + filepath.Join(dir, "mod")}
	},
	"npm":   func(dir string) []string { return []string{"npm_config_cache=" + dir} },
	"pip":   func(dir string) []string { return []string{"PIP_CACHE_DIR=" + dir} },
	"cargo": func(dir string) []string { return []string{"CARGO_HOME=" + dir} }, // registry, git checkouts, installs
}

// cacheTools lists the tools jail keeps caches for, sorted.
func cacheTools() []string {
	var tools []string
	for tool := range cacheEnv {
		tools = append(tools, tool)
	}
	slices.Sort(tools)
	return tools
}

// checkCache accepts the tools jail keeps caches for.
func checkCache(p *Profile, _ func(*Error)) error {
	var errs ErrorList
	for _, tool := range p.Cache.Tools {
		if _, ok := cacheEnv[tool]; ok {
			continue
		}
		hint := ""
		if near := suggest.Closest(tool, cacheTools(), 1); near != "" {
			hint = "did you mean " + near + "? "
		}
		errs.add(p.errorAt("cache.tools", tool, "unknown tool %q (%svalid: %s)", tool, hint, strings.Join(cacheTools(), ", ")))
	}
	return errs.err()
}

// caches plans this project's caches for p's [cache] tools: the directory, bound on itself (in
// the host's home, the sandbox's home too) unless a grant there exists already.
func (pl *planner) caches() (*plan.Caches, []plan.Mount, error) {
	if len(pl.p.Cache.Tools) == 0 {
		return nil, nil, nil
	}
	root := cmp.Or(pl.host.getenv("XDG_CACHE_HOME"), filepath.Join(pl.host.Home, ".cache"))
	project, err := pl.paths.physical(filepath.Clean(pl.host.Cwd))
	if err != nil {
		return nil, nil, fmt.Errorf("resolve %s: %w", pl.host.Cwd, err)
	}
	dir, err := pl.paths.physical(filepath.Join(root, "jail", projectKey(project)))
	if err != nil {
		return nil, nil, fmt.Errorf("resolve %s: %w", root, err)
	}
	if !pl.paths.isDir(dir) && !pl.creatable(dir) {
		// Inside an outer sandbox that keeps the cache home read-only (an agent harness's own),
		// the run goes without caches rather than not at all.
		pl.warnings = append(pl.warnings, pl.p.errorAt("cache.tools", "", "%s cannot be created here (its parent is not writable): this run keeps no caches", dir))
		return nil, nil, nil
	}
	c := &plan.Caches{Dir: dir, Tools: pl.p.Cache.Tools}
	if pl.at(dir) != nil {
		return c, nil, nil
	}
	return c, []plan.Mount{{Kind: plan.MountBind, Source: dir, Target: dir, IsDir: true}}, nil
}

// cacheVars point each tool at its directory among the caches.
func cacheVars(c *plan.Caches) []string {
	if c == nil {
		return nil
	}
	var env []string
	for _, tool := range c.Tools {
		env = append(env, cacheEnv[tool](filepath.Join(c.Dir, tool))...)
	}
	return env
}

// projectKey names a project's caches: the working directory's base name, readable, and a hash
// of its whole path, so that two projects never share one.
func projectKey(dir string) string {
	h := fnv.New128a()
	h.Write([]byte(dir))
	name := filepath.Base(dir)
	if name == "/" {
		name = "root"
	}
	return name + "-" + hex.EncodeToString(h.Sum(nil))[:24]
}
