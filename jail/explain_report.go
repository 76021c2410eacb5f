package jail

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jail-sandbox/jail/jail/internal/explain"
)

// Denial is one call of the command that --explain predicts the sandbox refused, with the line
// that explains it.
type Denial = explain.Denial

// explanations are the denials init sent for --explain, in the order it found them.
type explanations struct {
	list      []explain.Denial
	truncated bool // init stopped at explain.MaxDenials
}

// denied records a denial init predicted, with the line that explains it; nil means init
// stopped sending them.
func (o *observer) denied(d *explain.Denial) {
	if d == nil {
		o.explain.truncated = true
		return
	}
	if d.Rule == "not-in-sandbox" && !hostHasDir(d.Path) {
		return // missing on the host too: the call fails there as well
	}
	d.Message = d.Explain(o.spec)
	o.explain.list = append(o.explain.list, *d)
}

// fill puts the denials into r: a list, empty when none was found, under --explain only.
func (e *explanations) fill(r *Report, opts Options) {
	if opts.Explain {
		r.Denials = append([]explain.Denial{}, e.list...)
		r.DenialsTruncated = e.truncated
	}
}

// WriteDenials prints r's denials, one line each, as `jail --explain` does after the command.
func WriteDenials(w io.Writer, r *Report) {
	if r.Sandbox == "landlock-fallback" {
		fmt.Fprintln(w, "jail: --explain: not available in the Landlock fallback (there is no sandbox init to watch from)")
		return
	}
	for _, d := range r.Denials {
		fmt.Fprintf(w, "jail: %s\n", d.Message)
	}
	if r.DenialsTruncated {
		fmt.Fprintf(w, "jail: more denials not listed (the first %d are)\n", explain.MaxDenials)
	}
}

// hostHasDir reports whether path's directory exists on the host (a stat, nothing more).
func hostHasDir(path string) bool {
	fi, err := os.Stat(filepath.Dir(path))
	return err == nil && fi.IsDir()
}
