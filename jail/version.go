package jail

import "runtime/debug"

// Version is jail's version as --version prints it: "jail (devel)" and the commit it was built
// from, when the build knows it.
func Version() string {
	v := "jail (devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " " + s.Value[:12]
			}
		}
	}
	return v
}
