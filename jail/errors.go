package jail

import "github.com/jail-sandbox/jail/jail/internal/fail"

// Error is one of jail's own failures, from the host or from inside the sandbox: one line naming
// the operation and the object, the errno when there is one, and a hint when the cause is known.
// Its Exit is the status jail exits with.
type Error = fail.Error

// Exit statuses of jail's own failures, as env, podman and docker use them.
const (
	ExitTimeout       = fail.ExitTimeout       // --timeout expired and the sandbox was killed
	ExitSetup         = fail.ExitSetup         // jail itself failed: bad plan, setup step refused
	ExitNotExecutable = fail.ExitNotExecutable // the command exists but cannot be executed
	ExitNotFound      = fail.ExitNotFound      // the command does not exist inside the sandbox
)
