package jail

import (
	"fmt"
	"os"

	"github.com/jail-sandbox/jail/profiles"
)

// logf writes one "jail: " line to this process's stderr when the Spec asks for a verbose run.
// In the sandbox that is the command's stderr, and jail's CLI gives the command its own, so the
// host's and init's steps interleave in order on one stream.
func logf(spec *profiles.Spec, format string, args ...any) {
	if spec.Verbose {
		fmt.Fprintf(os.Stderr, "jail: "+format+"\n", args...)
	}
}
