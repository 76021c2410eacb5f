// Package container tells which container engine, if any, jail runs under, and the options of
// that engine that lift what keeps jail's sandbox from being built there: a seccomp policy that
// refuses user namespaces, a masked /proc, an AppArmor profile that refuses mounts.
package container

import (
	"bufio"
	"io"
	"os"
	"strings"

	"github.com/jail-sandbox/jail/jail/internal/userns"
)

// Engine is the container engine jail runs under.
type Engine struct {
	// Name is "docker", "podman", "kubernetes", another engine's own name (from the container
	// environment variable: "lxc", "systemd-nspawn", …), or "" outside a container.
	Name string
	// Rootless says the engine runs the container in a user namespace of an ordinary user's
	// (Podman's rootless mode): root inside holds only the ids that user was granted.
	Rootless bool
	// Evidence is what told it, for jail doctor.
	Evidence string
}

// Detect reads what the engines leave in a container. A file alone that anyone can create is not
// enough: /.dockerenv counts only with a Docker path in the mount table beside it.
func Detect() Engine {
	return detect(osFiles{})
}

// files is what detect reads: the real filesystem, or a test's.
type files interface {
	ReadFile(path string) ([]byte, error)
	Exists(path string) bool
	Getenv(name string) string
}

type osFiles struct{}

func (osFiles) ReadFile(p string) ([]byte, error) { return os.ReadFile(p) }
func (osFiles) Getenv(name string) string         { return os.Getenv(name) }
func (osFiles) Exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func detect(f files) Engine {
	mounts, _ := f.ReadFile("/proc/self/mountinfo")
	cgroup, _ := f.ReadFile("/proc/1/cgroup")
	switch {
	case f.Getenv("KUBERNETES_SERVICE_HOST") != "" || f.Exists("/var/run/secrets/kubernetes.io/serviceaccount"):
		return Engine{Name: "kubernetes", Evidence: "a Kubernetes service environment or service account"}
	case strings.Contains(string(cgroup), "kubepods"):
		return Engine{Name: "kubernetes", Evidence: "pid 1's cgroup is a pod's (kubepods)"}
	case f.Exists("/run/.containerenv"):
		env, _ := f.ReadFile("/run/.containerenv")
		_, all := userns.OwnUIDs()
		return Engine{Name: "podman", Rootless: strings.Contains(string(env), "rootless=1") || !all, Evidence: "/run/.containerenv"}
	case f.Exists("/.dockerenv") && (strings.Contains(string(mounts), "/docker/") || strings.Contains(string(cgroup), "docker")):
		return Engine{Name: "docker", Evidence: "/.dockerenv and Docker's paths in the mount table"}
	}
	if name := envOfPid1(f); name != "" {
		return Engine{Name: name, Evidence: "container=" + name + " in pid 1's environment"}
	}
	return Engine{}
}

// envOfPid1 is the value of "container" in this process's environment or pid 1's, which
// systemd's container interface asks every engine to set.
func envOfPid1(f files) string {
	if v := f.Getenv("container"); v != "" {
		return v
	}
	b, _ := f.ReadFile("/proc/1/environ")
	for kv := range strings.SplitSeq(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, "container="); ok {
			return v
		}
	}
	return ""
}

// MaskedProc lists the mounts that cover parts of /proc in this mount namespace (a container's
// masked paths: /proc/kcore, /proc/keys, … and read-only /proc/sys), as mountinfo shows them. The
// kernel refuses a user namespace a new procfs while any of them covers something.
func MaskedProc() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	return maskedProc(f)
}

func maskedProc(r io.Reader) []string {
	var masked []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		if p := fields[4]; strings.HasPrefix(p, "/proc/") {
			masked = append(masked, p)
		}
	}
	return masked
}

// Fixes are the options of an engine that let jail build its sandbox, each for one obstacle.
type Fixes struct {
	UserNS   string // what refuses user namespaces: the seccomp policy
	Proc     string // the masked /proc
	AppArmor string // an AppArmor profile that refuses mounts
	All      string // the one switch that lifts them all, where there is one
}

// FixesFor returns engine's options. Engines jail does not know get a description of the same.
func FixesFor(engine string) Fixes {
	switch engine {
	case "docker":
		return Fixes{
			UserNS:   "docker run --security-opt seccomp=unconfined",
			Proc:     "docker run --security-opt systempaths=unconfined",
			AppArmor: "docker run --security-opt apparmor=unconfined",
			All:      "docker run --privileged",
		}
	case "podman":
		return Fixes{
			UserNS:   "podman run --security-opt seccomp=unconfined",
			Proc:     "podman run --security-opt unmask=ALL",
			AppArmor: "podman run --security-opt apparmor=unconfined",
			All:      "podman run --privileged",
		}
	case "kubernetes":
		return Fixes{
			UserNS:   "securityContext.seccompProfile: {type: Unconfined} (or a Localhost profile allowing unshare and clone with CLONE_NEWUSER)",
			Proc:     "securityContext.procMount: Unmasked, which needs hostUsers: false in the Pod spec",
			AppArmor: "securityContext.appArmorProfile: {type: Unconfined}",
		}
	}
	return Fixes{
		UserNS:   "run the container without a seccomp policy that refuses user namespaces",
		Proc:     "run the container with its /proc unmasked (no masked paths)",
		AppArmor: "run the container without an AppArmor profile that refuses mounts",
	}
}
