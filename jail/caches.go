package jail

import (
	"os"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/plan"
)

// makeCaches creates the plan's cache directory on its first use, private to the user: the plan
// binds it into the sandbox, and a bind needs its source. Nothing beneath it is touched.
func makeCaches(spec *plan.Spec) error {
	if spec.Caches == nil {
		return nil
	}
	if err := os.MkdirAll(spec.Caches.Dir, 0o700); err != nil {
		return fail.New("create the caches", spec.Caches.Dir, err)
	}
	return nil
}
