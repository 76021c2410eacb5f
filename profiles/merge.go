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
	out := base.clone()
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
	for key, ports := range over.portLists() {
		if len(*ports) > 0 {
			*out.portLists()[key] = appendNew(*out.portLists()[key], *ports)
			out.setOrigin(key, "", over.origin(key, ""))
		}
	}
	for key, ptr := range over.optionalNumbers() {
		if *ptr != nil {
			*out.optionalNumbers()[key] = *ptr
			out.setOrigin(key, "", over.origin(key, ""))
		}
	}
	if over.Cache.Tools != nil { // replaces, where other lists append
		out.Cache.Tools = slices.Clone(over.Cache.Tools)
		for _, v := range append(over.Cache.Tools, "") {
			out.setOrigin("cache.tools", v, over.origin("cache.tools", v))
		}
	}
	for key, ptr := range over.optionalFlags() {
		if *ptr != nil {
			*out.optionalFlags()[key] = *ptr
			out.setOrigin(key, "", over.origin(key, ""))
		}
	}
	return out
}

// clone returns a deep copy of p.
func (p *Profile) clone() *Profile {
	out := *p
	for i, l := range out.stringLists() {
		*l.list = slices.Clone(*p.stringLists()[i].list)
	}
	for key, ports := range out.portLists() {
		*ports = slices.Clone(*p.portLists()[key])
	}
	out.Cache.Tools = slices.Clone(p.Cache.Tools)
	out.origins = maps.Clone(p.origins)
	return &out
}

// optionalNumbers returns the addresses of p's optional numeric keys by TOML key.
func (p *Profile) optionalNumbers() map[string]**uint64 {
	return map[string]**uint64{
		"limits.cpu":              &p.Limits.CPU,
		"limits.address_space":    &p.Limits.AddressSpace,
		"limits.processes":        &p.Limits.Processes,
		"limits.open_files":       &p.Limits.OpenFiles,
		"limits.file_size":        &p.Limits.FileSize,
		"limits.core":             &p.Limits.Core,
		"limits.tmpfs":            &p.Limits.Tmpfs,
		"network.max_connections": &p.Network.MaxConnections,
		"network.max_buffer":      &p.Network.MaxBuffer,
	}
}

// optionalFlags returns the addresses of p's optional boolean keys by TOML key.
func (p *Profile) optionalFlags() map[string]**bool {
	return map[string]**bool{
		"network.allow_private": &p.Network.AllowPrivate,
		"syscalls.log":          &p.Syscalls.Log,
		"sandbox.allow_weaker":  &p.Sandbox.AllowWeaker,
	}
}

// portLists returns the addresses of p's port lists by TOML key.
func (p *Profile) portLists() map[string]*[]uint16 {
	return map[string]*[]uint16{
		"network.tcp_connect": &p.Network.TCPConnect,
		"network.tcp_bind":    &p.Network.TCPBind,
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
