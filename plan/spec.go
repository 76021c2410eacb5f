package plan

import "strings"

// Spec is the resolved plan: one plain, JSON-able value holding everything the launcher needs to
// build the sandbox. Every path in it is absolute and already resolved on the host; every variable
// is expanded; every optional path that does not exist is gone. The launcher executes a Spec, it
// decides nothing: `jail --dry-run` prints exactly this value.
type Spec struct {
	Profile string   `json:"profile"` // name or file the plan was resolved from
	Argv    []string `json:"argv"`    // the command and its arguments, as given
	Cwd     string   `json:"cwd"`     // working directory inside the sandbox
	Env     []string `json:"env"`     // the command's whole environment, KEY=VALUE
	// Hostname is the sandbox's UTS name.
	Hostname string `json:"hostname"`

	// Mounts are the filesystem setup operations, run in this order inside the new root
	// (bubblewrap's SetupOp list). Later operations may sit beneath earlier ones.
	Mounts []Mount `json:"mounts"`

	Namespaces Namespaces `json:"namespaces"`
	Network    Network    `json:"network"`
	Limits     Limits     `json:"limits"`
	Landlock   Landlock   `json:"landlock"`
	Syscalls   Syscalls   `json:"syscalls"`
	// Git is the working directory's git repository and what the mounts do with its metadata;
	// nil outside a repository, or when the profile's [git] mode is "off".
	Git *Git `json:"git,omitempty"`

	// Caches keep tools' caches between runs of one project; nil: none.
	Caches *Caches `json:"caches,omitempty"`

	// Fallback is "" (fail when namespaces are unavailable) or "landlock" (run with Landlock,
	// seccomp, no_new_privs and a new session alone).
	Fallback string `json:"fallback,omitempty"`
	// AllowWeaker lets a run start although some protections cannot hold: a fallback run, or a
	// sandbox whose /proc must be the container's (the kernel refuses a new one under a
	// container's masked /proc).
	AllowWeaker bool `json:"allow_weaker,omitempty"`

	// Warnings are the profile's questionable but harmless parts, one line each, located like
	// errors ("FILE:LINE: KEY: msg"); the CLI prints them before running.
	Warnings []string `json:"warnings,omitempty"`
}

// Caches is where the tools named keep their caches between runs of one project: Dir, a
// jail-owned directory on the host, bound on itself in Mounts, holds one directory per tool,
// which the command's environment points the tool at. jail creates Dir (0700) before the sandbox.
type Caches struct {
	Dir   string   `json:"dir"`
	Tools []string `json:"tools"`
}

// MountKind names one filesystem setup operation.
type MountKind string

const (
	MountROBind   MountKind = "ro-bind"   // bind Source at Target, read-only on every submount
	MountBind     MountKind = "bind"      // bind Source at Target, writable
	MountProtect  MountKind = "protect"   // Source inside a writable grant, rebound read-only
	MountTmpfs    MountKind = "tmpfs"     // an empty writable tmpfs at Target
	MountHideDir  MountKind = "hide-dir"  // an empty read-only directory over Target
	MountHideFile MountKind = "hide-file" // /dev/null over Target
	MountProc     MountKind = "proc"      // a fresh /proc for the sandbox's pid namespace
	MountDev      MountKind = "dev"       // a minimal /dev: null zero full random urandom tty, pts, shm
	MountSymlink  MountKind = "symlink"   // a symlink at Target pointing to Source (merged-/usr links)
	MountDir      MountKind = "dir"       // an empty directory at Target (e.g. $HOME inside)
	// MountOverlay is an overlayfs at Target whose lower layer is the host's Source, read-only,
	// and whose upper layer and work directory are the host's Upper and Work: every write lands
	// there, none in Source. The overlay workspace (Target the working directory, Upper a change
	// set's) and git commit mode (Target the git directory, Upper Git.Import.Dir's) use it.
	MountOverlay MountKind = "overlay"
	// MountPin binds Target, as the sandbox sees it at that point, onto itself, writable: a
	// mountpoint cannot be renamed or removed, so a protected path beneath it stays in place.
	// Beneath an overlay it pins the overlay's directory, where a bind of the host's would
	// uncover the real tree.
	MountPin MountKind = "pin"
)

// Mount is one setup operation. Source is a host path (or a link text for symlinks); Target is
// the path inside the sandbox.
type Mount struct {
	Kind   MountKind `json:"kind"`
	Source string    `json:"source,omitempty"`
	Target string    `json:"target"`
	// Create says Target was missing at resolution: a protected path that does not exist yet must
	// still be masked, and a mount needs something to sit on. Inside a writable bind the host
	// makes an empty placeholder there before setup (package placeholder makes one for every
	// protected path missing by then) and removes it once no sandbox uses it; beneath an overlay,
	// setup makes it in a layer of the overlay's own above the tree, so that it is written
	// neither to the tree nor to the change set. IsDir says which kind of placeholder, and for
	// hides which mask; for binds it says what Source is.
	Create bool `json:"create,omitempty"`
	IsDir  bool `json:"is_dir,omitempty"`
	// Upper and Work are an overlay's writable layer and overlayfs's work directory: host
	// directories on one filesystem, made by the run before the sandbox starts (a change set
	// holds them, or Git.Import.Dir).
	Upper string `json:"upper,omitempty"`
	Work  string `json:"work,omitempty"`
}

// OnPlaceholder says the host makes mounts[i]'s target before the setup mounts there, whenever it
// is missing then: a protected path, or a directory pinned above one, outside every overlay (the
// setup makes those in the overlay's own layer). The host holds them for the run, and makes them
// while the setup builds what comes before (package placeholder).
func OnPlaceholder(mounts []Mount, i int) bool {
	m := mounts[i]
	if m.Kind != MountProtect && !(m.Kind == MountBind && m.Create) {
		return false
	}
	for _, o := range mounts {
		if o.Kind == MountOverlay && strings.HasPrefix(m.Target, o.Target+"/") {
			return false
		}
	}
	return true
}

// WorkspaceOverlay returns the overlay workspace's mount, the overlay at the working directory
// (git commit mode's is the git directory's), if the plan has one.
func (s *Spec) WorkspaceOverlay() (Mount, bool) {
	for _, m := range s.Mounts {
		commitMode := s.Git != nil && s.Git.Import != nil && m.Target == s.Git.CommonDir
		if m.Kind == MountOverlay && m.Target == s.Cwd && !commitMode {
			return m, true
		}
	}
	return Mount{}, false
}

// Namespaces says which namespaces the sandbox gets. The profile cannot switch off user, mount
// or pid; the fields exist so the plan shows exactly what was asked of the kernel.
type Namespaces struct {
	User   bool `json:"user"`
	Mount  bool `json:"mount"`
	PID    bool `json:"pid"`
	IPC    bool `json:"ipc"`
	UTS    bool `json:"uts"`
	Net    bool `json:"net"`
	Cgroup bool `json:"cgroup"`
}

// NamespacesFor returns the namespaces of a plan whose network mode is mode: every one, the
// network's only unless the mode is "host".
func NamespacesFor(mode string) Namespaces {
	return Namespaces{User: true, Mount: true, PID: true, IPC: true, UTS: true, Net: mode != "host", Cgroup: true}
}

// Network is the sandbox's network grant.
type Network struct {
	// Mode is "none" (own namespace, only lo), "host" (the host's network) or "proxy" (own
	// namespace; egress only through jail's host-side proxy, see Proxy).
	Mode string `json:"mode"`
	// TCPConnect and TCPBind are ports Landlock allows when Mode is "host"; empty means no
	// Landlock network rule at all.
	TCPConnect []uint16 `json:"tcp_connect,omitempty"`
	TCPBind    []uint16 `json:"tcp_bind,omitempty"`
	// Proxy is the egress grant when Mode is "proxy".
	Proxy *Proxy `json:"proxy,omitempty"`
}

// Proxy is the egress proxy's plan: the host runs the proxy (package proxy) for this policy, and
// init serves HTTPPort and SOCKSPort on the sandbox's 127.0.0.1, passing each connection to it.
// A run's init passes them over a socketpair whose end it gets with the plan: nothing of it is
// on disk. Env already points the command at those ports.
type Proxy struct {
	Allow        []string `json:"allow"`
	Deny         []string `json:"deny,omitempty"`
	AllowPrivate bool     `json:"allow_private,omitempty"`
	// HostSocket and Socket are set for a persistent sandbox alone (jail create), whose keeper
	// runs the proxy on the unix socket HostSocket in the sandbox's state directory, bound at
	// Socket (the plan's last ro-bind) for init to pass the connections over.
	HostSocket string `json:"host_socket,omitempty"`
	Socket     string `json:"socket,omitempty"`
	HTTPPort   uint16 `json:"http_port"`
	SOCKSPort  uint16 `json:"socks_port"`
	// MaxConnections and MaxBuffer bound what the proxy holds for the sandbox: connections
	// open at once, and bytes in buffers.
	MaxConnections int   `json:"max_connections"`
	MaxBuffer      int64 `json:"max_buffer"`
}

// Limits are resource limits applied to the command.
type Limits struct {
	// TimeoutSeconds kills the whole sandbox after that many seconds; 0 means none.
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
	// The rlimits below are set soft = hard (CPU: hard one second above, so SIGXCPU comes
	// first); 0 means inherited (except Core).
	CPUSeconds   uint64 `json:"cpu_seconds,omitempty"`
	AddressSpace uint64 `json:"address_space,omitempty"`
	Processes    uint64 `json:"processes,omitempty"`
	OpenFiles    uint64 `json:"open_files,omitempty"`
	FileSize     uint64 `json:"file_size,omitempty"`
	// Core is the core-dump size limit; 0 (the default) disables core dumps.
	Core uint64 `json:"core"`
	// Tmpfs is the size, in bytes, of the one tmpfs that holds every private writable tmpfs
	// mount of the sandbox (/tmp, the home, /dev, /dev/shm, tmpfs grants) as a directory: host
	// memory, bounded as a whole. Full, it gives the command ENOSPC.
	Tmpfs uint64 `json:"tmpfs"`
}

// Landlock mirrors the filesystem grants as Landlock rules, with paths as the sandbox sees them.
type Landlock struct {
	// Mode is "required", "best-effort" or "off".
	Mode  string   `json:"mode"`
	Read  []string `json:"read,omitempty"`  // read + execute
	Write []string `json:"write,omitempty"` // every filesystem right
	List  []string `json:"list,omitempty"`  // directory listing only
	// Truncate are the Read paths that also get the truncate right: read-only binds with no
	// writable mount beneath, whose mount refuses a truncate itself (EROFS). Landlock checks
	// truncate at every open, so without it the check of each open beneath walked on past the
	// grant to the root.
	Truncate []string `json:"truncate,omitempty"`
}

// Syscalls is the seccomp policy.
type Syscalls struct {
	// Default is "allow" (deny-list: the built-in set plus Deny, minus Allow) or "deny"
	// (allow-list built from Allow).
	Default string   `json:"default"`
	Deny    []string `json:"deny,omitempty"`
	Allow   []string `json:"allow,omitempty"`
	Errno   string   `json:"errno"`
	Log     bool     `json:"log,omitempty"`
}

// Git is the repository the working directory belongs to, as resolution found and validated it
// on the host. The mounts already hold what Mode means; the fields say why, for --explain and
// for what happens at exit.
type Git struct {
	// Mode is "read-only" (CommonDir, which holds GitDir, is never writable) or "commit"
	// (CommonDir is a private overlay; see Import).
	Mode      string `json:"mode"`
	WorkTree  string `json:"work_tree,omitempty"` // the top level, "" inside a git directory
	GitDir    string `json:"git_dir"`
	CommonDir string `json:"common_dir"`
	// Import is commit mode's: CommonDir is an overlay inside, and what the command committed
	// there is imported at exit.
	Import *GitImport `json:"import,omitempty"`
}

// GitImport is how commit mode brings commits out of the sandbox. The run makes Dir (it must
// not exist) with the overlay's upper and work directories; once every sandboxed process is
// gone, the host takes from the upper directory only new objects and refs, checks the new
// commits with the host's git, fetches them into CommonDir under Refs, and removes Dir. Config,
// hooks, the index and every other file the command wrote there are dropped.
type GitImport struct {
	Dir  string `json:"dir"`
	Refs string `json:"refs"` // the prefix a ref R/NAME is imported under: "refs/jail/RUN/" + NAME
	// Protected are names (.envrc, .vscode, ...) that the profile protects in the work tree: a
	// commit that adds or changes a path through one of them is not imported, nor one that adds
	// a gitlink (a submodule), since the host's git would enter a repository at that path.
	Protected []string `json:"protected,omitempty"`
}
