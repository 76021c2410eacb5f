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

	// Source names where the profile came from: a file path, "builtin:NAME", or what the caller
	// sets (e.g. "command line" for the flags overlay). Errors about a value whose line is not
	// known name this instead. Not part of the TOML.
	Source string `toml:"-"`

	// origins records where each value was written (file and line), keyed by TOML key and value,
	// so that errors found after Merge and Expand still point at the line that caused them.
	origins origins
}

// Filesystem lists path grants. Paths take ~, $HOME, $CWD, $TMPDIR, and for a git worktree
// (whose $CWD/.git is a "gitdir:" file) $GIT_FILE (that file), $GIT_DIR (where it points) and
// $GIT_COMMON_DIR (the repository's shared git directory; unset outside a worktree); a
// trailing ? marks an optional path (dropped when missing, or when a variable in it is unset,
// instead of an error). For protect, a trailing / (before any ?) marks a directory: a missing
// protected path gets a placeholder of that kind.
type Filesystem struct {
	Read    []string `toml:"read,omitempty"`    // read + execute
	Write   []string `toml:"write,omitempty"`   // read + write + execute
	Hide    []string `toml:"hide,omitempty"`    // masked, even beneath a grant
	Protect []string `toml:"protect,omitempty"` // read-only inside a writable grant, masked if missing
	Tmpfs   []string `toml:"tmpfs,omitempty"`   // empty writable tmpfs
}

// NetworkRules is the [network] table.
type NetworkRules struct {
	Mode       string   `toml:"mode,omitempty"`        // "none" (default) or "host"
	TCPConnect []uint16 `toml:"tcp_connect,omitempty"` // with mode "host": Landlock allows only these
	TCPBind    []uint16 `toml:"tcp_bind,omitempty"`
}

// Process is the [process] table.
type Process struct {
	// Env lists variables passed through (NAME, or a NAME_* / LC_* glob) or set (NAME=VALUE).
	Env      []string `toml:"env,omitempty"`
	Hostname string   `toml:"hostname,omitempty"`
	Cwd      string   `toml:"cwd,omitempty"`
}

// LimitRules is the [limits] table.
type LimitRules struct {
	Timeout      string  `toml:"timeout,omitempty"` // Go duration, e.g. "10m"
	CPU          *uint64 `toml:"cpu,omitempty"`     // seconds
	AddressSpace *uint64 `toml:"address_space,omitempty"`
	Processes    *uint64 `toml:"processes,omitempty"`
	OpenFiles    *uint64 `toml:"open_files,omitempty"`
	FileSize     *uint64 `toml:"file_size,omitempty"`
	Core         *uint64 `toml:"core,omitempty"`
}

// SyscallRules is the [syscalls] table (the seccomp policy).
type SyscallRules struct {
	Default string   `toml:"default,omitempty"` // "allow" (default) or "deny"
	Deny    []string `toml:"deny,omitempty"`
	Allow   []string `toml:"allow,omitempty"`
	Errno   string   `toml:"errno,omitempty"` // default "EPERM"
	Log     *bool    `toml:"log,omitempty"`
}

// LandlockRules is the [landlock] table.
type LandlockRules struct {
	Mode string `toml:"mode,omitempty"` // "required", "best-effort" (default) or "off"
}

// SandboxRules is the [sandbox] table.
type SandboxRules struct {
	Fallback    string `toml:"fallback,omitempty"` // "" or "landlock"
	AllowWeaker *bool  `toml:"allow_weaker,omitempty"`
}
