package main

import (
	"strings"
	"testing"
)

// TestAttacksThroughExec runs one-shot runs' attack tests again with every run of theirs turned
// into `jail create [OPTIONS]`, `jail exec -i ID -- COMMAND` and `jail rm -f ID`: a command a
// persistent sandbox's spawner starts must meet every restriction a run's command meets, and
// each of these tests checks the effect of its attack on the host.
func TestAttacksThroughExec(t *testing.T) {
	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"WriteOutsideGrantRefused", TestWriteOutsideGrantRefused},
		{"WriteInWorkingDirectoryWorks", TestWriteInWorkingDirectoryWorks},
		{"HomeAsWorkingDirectoryRefused", TestHomeAsWorkingDirectoryRefused},
		{"HomeNamedIsWritable", TestHomeNamedIsWritable},
		{"ProtectedPathsRefused", TestProtectedPathsRefused},
		{"EnvrcNotYetExistingRefused", TestEnvrcNotYetExistingRefused},
		{"SecretsUnderHomeHidden", TestSecretsUnderHomeHidden},
		{"HostProcessesInvisibleAndUnsignalable", TestHostProcessesInvisibleAndUnsignalable},
		{"HostLoopbackUnreachable", TestHostLoopbackUnreachable},
		{"SymlinkOutOfWorkingDirectoryRefused", TestSymlinkOutOfWorkingDirectoryRefused},
		{"MountRefused", TestMountRefused},
		{"NoCapabilitiesAndNoNewPrivs", TestNoCapabilitiesAndNoNewPrivs},
		{"SeccompFilterOnUnlessTurnedOff", TestSeccompFilterOnUnlessTurnedOff},
		{"HostAbstractSocketUnreachable", TestHostAbstractSocketUnreachable},
		{"SeccompBlocksKernelAttackSurface", TestSeccompBlocksKernelAttackSurface},
		{"SeccompUnshareCommandRefused", TestSeccompUnshareCommandRefused},
		{"LandlockStandsAlone", TestLandlockStandsAlone},
		{"LandlockInheritedDescriptorsClosed", TestLandlockInheritedDescriptorsClosed},
		{"LandlockScopesAbstractSockets", TestLandlockScopesAbstractSockets},
		{"NoDescriptorAboveTwoInherited", TestNoDescriptorAboveTwoInherited},
		{"ExitStatusIsTheCommands", TestExitStatusIsTheCommands},
		{"CommandNotFoundOrNotExecutable", TestCommandNotFoundOrNotExecutable},
	} {
		t.Run(tc.name, tc.test)
	}
}

// subcommands are the first arguments that make jail not run a command.
var subcommands = map[string]bool{
	"profile": true, "doctor": true, "seccomp": true, "hook": true, "shell": true, "create": true,
	"exec": true, "ls": true, "inspect": true, "rm": true, "prune": true, "cp": true, "serve": true,
}

// throughExec says a run of a test under TestAttacksThroughExec goes through a persistent
// sandbox: `jail [OPTIONS] [--] COMMAND`, started by jail itself (not a wrapper).
func throughExec(t *testing.T, o runOpts, args []string) bool {
	return strings.HasPrefix(t.Name(), "TestAttacksThroughExec/") && len(o.wrap) == 0 && len(args) > 0 && !subcommands[args[0]]
}

// runThroughExec is a run of args as create + exec + rm: the options go to create (one that only
// a run takes fails the test, naming it), the command to exec, with the run's stdin.
func runThroughExec(t *testing.T, o runOpts, args []string) (stdout, stderr string, code int) {
	t.Helper()
	fs, _ := newRunFlagSet()
	if err := parseFlags(fs, "", args); err != nil || fs.NArg() == 0 {
		return runJailDirect(t, o, args...) // not a run: as it is (its test checks the refusal)
	}
	options := args[:len(args)-fs.NArg()]
	if n := len(options); n > 0 && options[n-1] == "--" {
		options = options[:n-1]
	}
	out, errOut, code := runJailDirect(t, o, append([]string{"create"}, options...)...)
	if code != 0 {
		if strings.Contains(errOut, "unknown option") {
			t.Fatalf("TestAttacksThroughExec: %q has an option jail create does not take: drop this test from the list", args)
		}
		return out, errOut, code
	}
	id := strings.TrimSpace(out)
	defer runJailDirect(t, runOpts{dir: o.dir}, "rm", "-f", id)
	return runJailDirect(t, o, append([]string{"exec", "-i", id, "--"}, fs.Args()...)...)
}
