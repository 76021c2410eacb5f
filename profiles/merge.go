package profiles

import (
	"maps"
	"slices"
)

// Merge returns base with over applied: over's set scalars win, lists append over's entries
// not already present (first occurrence keeps its place). Neither input is modified. The
// result keeps base's Source (an overlay does not rename the profile it refines) and both
// sides' origins; values over carries without a recorded line are attributed to over.Source.
func Merge(base, over *Profile) *Profile {
	out := base.clone(len(over.origins))
	out.apply(over)
	return out
}

// apply is Merge onto p itself, for a profile no one else holds (what load is merging): no copy.
func (p *Profile) apply(over *Profile) {
	out := p
	if out.origins == nil && len(over.origins) > 0 {
		out.origins = make(origins, len(over.origins))
	}
	if out.Source == "" {
		out.Source = over.Source
	}
	outLists, overLists := out.stringLists(), over.stringLists()
	for i, l := range overLists {
		for _, v := range *l.list {
			if !slices.Contains(*outLists[i].list, v) {
				*outLists[i].list = append(*outLists[i].list, v)
				out.setOrigin(l.key, v, over.origin(l.key, v))
			}
		}
	}
	outScalars, overScalars := out.stringScalars(), over.stringScalars()
	for i, s := range overScalars {
		if *s.val != "" {
			*outScalars[i].val = *s.val
			out.setOrigin(s.key, "", over.origin(s.key, ""))
			out.setOrigin(s.key, *s.val, over.origin(s.key, *s.val))
		}
	}
	outPorts := out.portLists()
	for i, l := range over.portLists() {
		if len(*l.val) > 0 {
			*outPorts[i].val = appendNew(*outPorts[i].val, *l.val)
			out.setOrigin(l.key, "", over.origin(l.key, ""))
		}
	}
	outNumbers := out.optionalNumbers()
	for i, n := range over.optionalNumbers() {
		if *n.val != nil {
			*outNumbers[i].val = *n.val
			out.setOrigin(n.key, "", over.origin(n.key, ""))
		}
	}
	if over.Cache.Tools != nil { // replaces, where other lists append
		out.Cache.Tools = slices.Clone(over.Cache.Tools)
		for _, v := range append(over.Cache.Tools, "") {
			out.setOrigin("cache.tools", v, over.origin("cache.tools", v))
		}
	}
	outFlags := out.optionalFlags()
	for i, f := range over.optionalFlags() {
		if *f.val != nil {
			*outFlags[i].val = *f.val
			out.setOrigin(f.key, "", over.origin(f.key, ""))
		}
	}
}

// clone returns a deep copy of p, with room in its origins for room more.
func (p *Profile) clone(room int) *Profile {
	out := *p
	lists := p.stringLists()
	for i, l := range out.stringLists() {
		*l.list = slices.Clone(*lists[i].list)
	}
	ports := p.portLists()
	for i, l := range out.portLists() {
		*l.val = slices.Clone(*ports[i].val)
	}
	out.Cache.Tools = slices.Clone(p.Cache.Tools)
	if p.origins != nil || room > 0 {
		out.origins = make(origins, len(p.origins)+room)
		maps.Copy(out.origins, p.origins)
	}
	return &out
}

// keyed is one key of a Profile: its TOML key and the field that holds it.
type keyed[T any] struct {
	key string
	val *T
}

// optionalNumbers returns p's optional numeric keys, in schema order.
func (p *Profile) optionalNumbers() [9]keyed[*uint64] {
	return [...]keyed[*uint64]{
		{"limits.cpu", &p.Limits.CPU},
		{"limits.address_space", &p.Limits.AddressSpace},
		{"limits.processes", &p.Limits.Processes},
		{"limits.open_files", &p.Limits.OpenFiles},
		{"limits.file_size", &p.Limits.FileSize},
		{"limits.core", &p.Limits.Core},
		{"limits.tmpfs", &p.Limits.Tmpfs},
		{"network.max_connections", &p.Network.MaxConnections},
		{"network.max_buffer", &p.Network.MaxBuffer},
	}
}

// optionalFlags returns p's optional boolean keys, in schema order.
func (p *Profile) optionalFlags() [3]keyed[*bool] {
	return [...]keyed[*bool]{
		{"network.allow_private", &p.Network.AllowPrivate},
		{"syscalls.log", &p.Syscalls.Log},
		{"sandbox.allow_weaker", &p.Sandbox.AllowWeaker},
	}
}

// portLists returns p's port lists, in schema order.
func (p *Profile) portLists() [2]keyed[[]uint16] {
	return [...]keyed[[]uint16]{
		{"network.tcp_connect", &p.Network.TCPConnect},
		{"network.tcp_bind", &p.Network.TCPBind},
	}
}

// appendNew appends the elements of add not already in list.
func appendNew[T comparable](list, add []T) []T {
	for _, v := range add {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}
