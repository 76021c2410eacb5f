package jail

import (
	"fmt"
	"os"

	"github.com/jail-sandbox/jail/profiles"
)

// logf writes one "jail: " line to stderr when the Spec asks for a verbose run. In the sandbox,
// stderr is the command's, so the setup steps interleave with the host's in order.
func logf(spec *profiles.Spec, format string, args ...any) {
	if spec.Verbose {
		fmt.Fprintf(os.Stderr, "jail: "+format+"\n", args...)
	}
}
