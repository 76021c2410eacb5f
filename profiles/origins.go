package profiles

// Origin is where a value was written: a file (or "builtin:NAME", or the Source of an overlay)
// and a 1-based line, 0 when unknown.
type Origin struct {
	File string
	Line int
}

// origins maps a TOML key and one of its values to where that value was written. Values are
// recorded under (key, value) and every key also under (key, "") with the line of the key
// itself, so scalars and non-string values resolve to their key's line.
type origins map[originKey]Origin

type originKey struct{ key, value string }

// origin reports where value of key was written, falling back to the key's line, then to the
// profile's Source.
func (p *Profile) origin(key, value string) Origin {
	if o, ok := p.origins[originKey{key, value}]; ok {
		return o
	}
	if o, ok := p.origins[originKey{key, ""}]; ok {
		return o
	}
	return Origin{File: p.Source}
}

// setOrigin records where value of key was written.
func (p *Profile) setOrigin(key, value string, o Origin) {
	if p.origins == nil {
		p.origins = origins{}
	}
	p.origins[originKey{key, value}] = o
}

// stringList is one list-of-strings key of a Profile, addressed by its TOML key.
type stringList struct {
	key  string
	list *[]string
}

// stringLists returns every list-of-strings key of p, in schema order: the one place Merge,
// Expand and origin bookkeeping learn the schema's lists from. An array, as the other key sets
// below: a slice or map of them was made on the heap at each call, and Merge calls them for
// every profile it merges, four times for the default one.
func (p *Profile) stringLists() [13]stringList {
	return [...]stringList{
		{"extends", &p.Extends},
		{"filesystem.read", &p.Filesystem.Read},
		{"filesystem.write", &p.Filesystem.Write},
		{"filesystem.hide", &p.Filesystem.Hide},
		{"filesystem.protect", &p.Filesystem.Protect},
		{"filesystem.tmpfs", &p.Filesystem.Tmpfs},
		{"network.allow", &p.Network.Allow},
		{"network.deny", &p.Network.Deny},
		{"process.env", &p.Process.Env},
		{"syscalls.deny", &p.Syscalls.Deny},
		{"syscalls.allow", &p.Syscalls.Allow},
		{"landlock.read", &p.Landlock.Read},
		{"landlock.write", &p.Landlock.Write},
	}
}

// stringScalar is one string key of a Profile.
type stringScalar struct {
	key string
	val *string
}

// stringScalars returns every string key of p, in schema order.
func (p *Profile) stringScalars() [11]stringScalar {
	return [...]stringScalar{
		{"description", &p.Description},
		{"filesystem.workspace", &p.Filesystem.Workspace},
		{"network.mode", &p.Network.Mode},
		{"process.hostname", &p.Process.Hostname},
		{"process.cwd", &p.Process.Cwd},
		{"limits.timeout", &p.Limits.Timeout},
		{"syscalls.default", &p.Syscalls.Default},
		{"syscalls.errno", &p.Syscalls.Errno},
		{"landlock.mode", &p.Landlock.Mode},
		{"sandbox.fallback", &p.Sandbox.Fallback},
		{"git.mode", &p.Git.Mode},
	}
}
