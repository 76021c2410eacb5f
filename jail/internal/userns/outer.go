package userns

import (
	"os"
	"strconv"
	"strings"
)

// The agent harnesses whose own sandbox jail recognizes, to name it in what it says.
const (
	HarnessCodex      = "Codex"
	HarnessClaudeCode = "Claude Code"
)

// OuterHarness names the agent harness whose own sandbox this process runs in, or "" for none:
// Codex's when the sandbox's pid 1 is its helper, codex-linux-sandbox (pid1Comm is
// /proc/1/comm, which the kernel cuts to 15 bytes), or Codex set CODEX_SANDBOX_NETWORK_DISABLED=1
// (Linux, network off) or CODEX_SANDBOX in the environment; Claude Code's when its sandbox
// runtime set SANDBOX_RUNTIME=1. getenv is os.Getenv. What jail says depends on it, and whether
// a refused setup step counts as a refused sandbox (RefusesSteps), which matters only where the
// profile asks for the Landlock fallback.
func OuterHarness(getenv func(string) string, pid1Comm string) string {
	switch {
	case pid1Comm == "codex-linux-sandbox"[:commLen],
		getenv("CODEX_SANDBOX_NETWORK_DISABLED") == "1", getenv("CODEX_SANDBOX") != "":
		return HarnessCodex
	case getenv("SANDBOX_RUNTIME") == "1":
		return HarnessClaudeCode
	}
	return ""
}

// outerHarness is OuterHarness for this process.
func outerHarness() string {
	return OuterHarness(os.Getenv, pid1Comm())
}

// commLen is how much of a process's name the kernel keeps (TASK_COMM_LEN, less the NUL).
const commLen = 15

// pid1Comm is the name of this pid namespace's pid 1 (/proc/1/comm), or "".
func pid1Comm() string {
	b, err := os.ReadFile("/proc/1/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// fallbackFix is the way out that works inside any harness's sandbox.
const fallbackFix = `or a profile with fallback = "landlock" in [sandbox] (it lists what it loses)`

// Inside an agent harness's own sandbox, what refuses jail is the harness's, and so is the fix.
const (
	claudeCodeRefusal     = "jail runs inside Claude Code's sandbox, which allows no user namespace in it"
	claudeCodeFix         = `set "allowNestedUserNamespaces": true in Claude Code's "sandbox" settings (both sandboxes then apply), ` + fallbackFix
	claudeCodeProcRefusal = "jail runs inside Claude Code's sandbox in a pid namespace that its /proc does not show (as it does for root), so jail cannot reach the id maps of the sandbox it starts"
	claudeCodeProcFix     = "run Claude Code as an ordinary user (jail then nests, with allowNestedUserNamespaces), or turn its sandbox off, " + fallbackFix
	codexRootRefusal      = "jail runs as root inside Codex's sandbox, which drops every capability, and the kernel maps root into a new user namespace only with CAP_SETFCAP"
	codexRootFix          = `run Codex as an ordinary user, or set sandbox_mode = "danger-full-access" in Codex's config.toml (jail is then the sandbox), ` + fallbackFix
	codexStepRefusal      = "jail runs inside Codex's sandbox, whose seccomp filter refuses the sockets jail sets up while Codex's network is off"
	codexStepFix          = "set network_access = true in [sandbox_workspace_write] of Codex's config.toml (jail's profile still decides the command's network), " +
		`or sandbox_mode = "danger-full-access" (jail is then the sandbox), ` + fallbackFix
)

// RefusesSteps reports whether a setup step refused with EPERM means the namespace sandbox
// cannot be built here, so that a Landlock fallback may take over: Ubuntu's AppArmor strips the
// namespace's capabilities, or jail runs in Codex's sandbox, whose seccomp filter refuses what
// the steps need (sockets, while its network is off).
func RefusesSteps() bool {
	return CapsStripped() || (UnderSeccomp() && outerHarness() == HarnessCodex)
}

// procForeign reports whether /proc shows another pid namespace than this process's own: its
// /proc/self is not its pid (Claude Code's sandbox, as root, runs commands so).
func procForeign() bool {
	self, err := os.Readlink("/proc/self")
	return err == nil && self != strconv.Itoa(os.Getpid())
}
