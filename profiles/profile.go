package profiles

// Profile is one profile as written in TOML, before resolution. CLI flags produce a Profile too
// (an overlay applied last), so files and flags share one schema and cannot drift. Every field's
// zero value means "not set here; inherit from what this profile extends".
type Profile struct {
	Description string   `toml:"description,omitempty"`
	Extends     []string `toml:"extends,omitempty"` // applied first, in order

	Filesystem Filesystem    `toml:"filesystem,omitempty"`
	Network    NetworkRules  `toml:"network,omitempty"`
	Process    Process       `toml:"process,omitempty"`
	Limits     LimitRules    `toml:"limits,omitempty"`
	Syscalls   SyscallRules  `toml:"syscalls,omitempty"`
	Landlock   LandlockRules `toml:"landlock,omitempty"`
	Sandbox    SandboxRules  `toml:"sandbox,omitempty"`
	Git        GitRules      `toml:"git,omitempty"`
	Cache      CacheRules    `toml:"cache,omitempty"` // cache.go

	// Source names where the profile came from: a file path, "builtin:NAME", or what the caller
	// sets (e.g. "command line" for the flags overlay). Errors about a value whose line is not
	// known name this instead. Not part of the TOML.
	Source string `toml:"-"`

	// origins records where each value was written (file and line), keyed by TOML key and value,
	// so that errors found after Merge and Expand still point at the line that caused them.
	origins origins
}

// Filesystem lists path grants. Paths take ~, $HOME, $CWD, $TMPDIR, and for the git repository
// the working directory belongs to (see GitRules) $GIT_WORK_TREE (its top level), $GIT_DIR (its
// git directory) and $GIT_COMMON_DIR (the shared git directory, which holds $GIT_DIR; they
// differ in a linked worktree), all unset outside a repository; a trailing ? marks an optional
// path (dropped when missing, or when a variable in it is unset, instead of an error). For
// protect, a trailing / (before any ?) marks a directory, as the plan says (Mount.IsDir); a
// missing protected path gets a placeholder, a socket, either way.
//
// Paths are compared physically: every path is resolved on the host (symlinks followed) before
// anything is compared, and every mount sits at its physical path; a symlink a grant was named
// through is recreated inside, pointing there. A file grant whose final name is a symlink on the
// sandbox's own tmpfs sits at the link's place.
//
// Where grants meet (decided here, applied by Resolve):
//   - a path both read and written is writable, silently: a profile widens what it extends
//     (agent is readonly plus write $CWD);
//   - a read grant inside a read grant of the same tree is dropped: it shows nothing new;
//   - a tmpfs at the path of a bind: the bind wins, with a warning;
//   - hide of a path granted read: the mask wins, with a warning; hide of a path granted write
//     or tmpfs: an error (the two readings differ too much to guess); the same for grants
//     beneath a hidden path, or of a file it names through a symlink;
//   - hide of a missing path, or of one beneath no bind, is dropped: nothing to mask; a hide
//     whose final name is a symlink hides what the link names;
//   - protect beneath a read-only grant is dropped (already read-only); outside any writable
//     grant it is a warning (silent with ?); a write grant at or beneath a protected path is
//     an error;
//   - a protect path whose final name is a symlink is an error (the mask could be redirected);
//   - a write grant built from $CWD that is the home directory or holds it is an error: the
//     home's start-up files would be writable (homewrite.go); a home named otherwise is granted.
type Filesystem struct {
	Read    []string `toml:"read,omitempty"`    // read + execute
	Write   []string `toml:"write,omitempty"`   // read + write + execute
	Hide    []string `toml:"hide,omitempty"`    // masked, even beneath a grant
	Protect []string `toml:"protect,omitempty"` // read-only inside a writable grant, masked if missing
	Tmpfs   []string `toml:"tmpfs,omitempty"`   // empty writable tmpfs
	// Workspace is how the working directory's write grant is made: "bind" (the default: the
	// directory itself, writes land in it at once) or "overlay" (an overlayfs over it: writes
	// land in a change set that `jail diff` shows and `jail apply` brings in; see
	// profiles/workspace.go).
	Workspace string `toml:"workspace,omitempty"`
}

// NetworkRules is the [network] table.
type NetworkRules struct {
	Mode       string   `toml:"mode,omitempty"`        // "none" (default), "host" or "proxy"
	TCPConnect []uint16 `toml:"tcp_connect,omitempty"` // with mode "host": Landlock allows only these
	TCPBind    []uint16 `toml:"tcp_bind,omitempty"`
	// With mode "proxy": host patterns reachable through jail's proxy ("example.com",
	// "*.example.com" = subdomains only, optional ":port", default ports 80 and 443), patterns
	// refused even when allowed (deny wins; without port every port), and whether allowed names
	// may resolve to loopback/private addresses (default false).
	Allow        []string `toml:"allow,omitempty"`
	Deny         []string `toml:"deny,omitempty"`
	AllowPrivate *bool    `toml:"allow_private,omitempty"`
	// The proxy runs on the host: what a sandbox makes it hold is host memory. MaxConnections
	// bounds the connections open through it at once (default proxy.DefaultMaxConnections,
	// 512, and at most [limits] open_files when that is set), MaxBuffer the bytes it holds in
	// buffers for them (default proxy.DefaultMaxBuffer, 16 MiB).
	MaxConnections *uint64 `toml:"max_connections,omitempty"`
	MaxBuffer      *uint64 `toml:"max_buffer,omitempty"`
}

// Process is the [process] table.
type Process struct {
	// Env lists variables passed through (NAME, or a NAME_* / LC_* glob) or set (NAME=VALUE);
	// nothing else passes. HOME is the home directory inside unless set here.
	Env      []string `toml:"env,omitempty"`
	Hostname string   `toml:"hostname,omitempty"` // default "jail"
	// Cwd is the working directory inside; default the host's, when a grant makes it visible,
	// else /.
	Cwd string `toml:"cwd,omitempty"`
}

// LimitRules is the [limits] table. Unset rlimits are inherited, except core (default 0).
type LimitRules struct {
	Timeout      string  `toml:"timeout,omitempty"`       // wall clock, a Go duration ("10m"); default none
	CPU          *uint64 `toml:"cpu,omitempty"`           // RLIMIT_CPU, seconds
	AddressSpace *uint64 `toml:"address_space,omitempty"` // RLIMIT_AS, bytes
	Processes    *uint64 `toml:"processes,omitempty"`     // RLIMIT_NPROC
	OpenFiles    *uint64 `toml:"open_files,omitempty"`    // RLIMIT_NOFILE
	FileSize     *uint64 `toml:"file_size,omitempty"`     // RLIMIT_FSIZE, bytes
	Core         *uint64 `toml:"core,omitempty"`          // RLIMIT_CORE, bytes; default 0
	// Tmpfs bounds, in bytes, the sandbox's private tmpfs mounts together (/tmp, the home, /dev,
	// /dev/shm, tmpfs grants): host memory. Default: an eighth of the host's RAM.
	Tmpfs *uint64 `toml:"tmpfs,omitempty"`
}

// SyscallRules is the [syscalls] table (the seccomp policy).
type SyscallRules struct {
	Default string   `toml:"default,omitempty"` // "allow" (default) or "deny"
	Deny    []string `toml:"deny,omitempty"`
	Allow   []string `toml:"allow,omitempty"`
	Errno   string   `toml:"errno,omitempty"` // default "EPERM"
	Log     *bool    `toml:"log,omitempty"`   // SECCOMP_RET_LOG for denied calls; default false
}

// LandlockRules is the [landlock] table.
type LandlockRules struct {
	Mode string `toml:"mode,omitempty"` // "required", "best-effort" (default) or "off"
	// Read and Write, when set, replace the rules mirrored from [filesystem] (paths as the
	// sandbox sees them; variables allowed). For tests and debugging: they let the mount view
	// and Landlock disagree, to show that each layer holds on its own. `profile show` flags them.
	Read  []string `toml:"read,omitempty"`
	Write []string `toml:"write,omitempty"`
}

// SandboxRules is the [sandbox] table.
type SandboxRules struct {
	Fallback    string `toml:"fallback,omitempty"`     // "" or "landlock"
	AllowWeaker *bool  `toml:"allow_weaker,omitempty"` // default false: a weaker sandbox fails closed
}

// GitRules is the [git] table: how the metadata of the repository the working directory belongs
// to may change. The repository is found as git finds it (the nearest .git upwards) and its
// pointers (.git files, commondir) are followed only where they have the shape git creates
// (linked worktrees, submodules), never to a directory holding the home.
type GitRules struct {
	// Mode is "read-only" (default): the git directory and common directory are never
	// writable, whatever [filesystem] grants, and a .git that would take over from the
	// repository (in the working directory, each directory up to the top level, and each
	// submodule path in the index) is protected; "commit": the same, but the common directory is
	// a private overlay inside, whose new objects and refs jail imports at exit as
	// refs/jail/RUN/... (never config, hooks or the index); "off": no git rules (the metadata is
	// as writable as [filesystem] makes it).
	Mode string `toml:"mode,omitempty"`
}
