package seccomp

import (
	"fmt"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// The kernel reads int-typed syscall arguments from the low 32 bits of the register, so every
// argument check here compares the low 32 bits under a mask. A plain 64-bit equality rule is a
// bypass: socket(0xffffffff00000010, …) is AF_NETLINK to the kernel but not equal to 16.
// libseccomp splits a 64-bit MASKED_EQ into a high-word and a low-word test; with a mask whose
// high word is zero the high-word test always holds, which is exactly "low 32 bits".

// cond is one comparison in an argument check.
type cond struct {
	arg  uint
	op   libseccomp.ScmpCompareOp
	a, b uint64 // MASKED_EQ: mask, value; other ops: value, unused
}

// low32 matches when the low 32 bits of arg equal v.
func low32(arg uint, v uint32) cond {
	return cond{arg: arg, op: libseccomp.CompareMaskedEqual, a: 0xffffffff, b: uint64(v)}
}

// masked matches when the low 32 bits of arg, masked with m, equal v.
func masked(arg uint, m, v uint32) cond {
	return cond{arg: arg, op: libseccomp.CompareMaskedEqual, a: uint64(m), b: uint64(v)}
}

// anyBit matches when arg has bit (one bit, low 32) set.
func anyBit(arg uint, bit uint32) cond { return masked(arg, bit, bit) }

// notEq64 matches when the whole 64-bit arg differs from v. Used only to exempt a value from a
// denial, so a value with stray high bits is denied: the safe side.
func notEq64(arg uint, v uint64) cond {
	return cond{arg: arg, op: libseccomp.CompareNotEqual, a: v}
}

// above64 matches when the whole 64-bit arg is greater than v; any high bit set matches too.
func above64(arg uint, v uint64) cond {
	return cond{arg: arg, op: libseccomp.CompareGreater, a: v}
}

// argCheck denies a syscall when any one of its matches holds (each match is a conjunction).
type argCheck struct {
	name    string
	why     string
	matches [][]cond
	// always keeps the check when the deny-list policy allows the syscall by name: it is
	// required by another layer (MPTCP next to Landlock's TCP rules), not a default.
	always bool
}

// Address families a sandboxed tool may open. AF_NETLINK is allowed only for NETLINK_ROUTE
// (glibc's getaddrinfo with AI_ADDRCONFIG, `ip addr`, Go's net.Interfaces): with every
// capability dropped it can only read the sandbox's own links, addresses and routes.
var allowedFamilies = []uint32{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}

// familyBits bounds the enumerated address families to [0, 64) (AF_MAX is 46 on Linux 6.x);
// above that everything, including every value with high bits, is denied.
const familyBits = 6

// cloneNamespaceFlags are the CLONE_NEW* bits clone(2) takes. CLONE_NEWTIME (0x80) is not one
// of them: in clone(2) that bit belongs to the exit signal.
var cloneNamespaceFlags = []uint32{
	unix.CLONE_NEWNS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC,
	unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_NEWNET,
}

// personality(2) values (linux/personality.h; x/sys does not carry them).
const (
	perLinux   = 0x0000
	perLinux32 = 0x0008
	uname26    = 0x0020000
	perQuery   = 0xffffffff // returns the current persona, changes nothing
)

// personalityFlags are the flags a personality(2) value glibc and common tools use may have over
// PER_LINUX (0), in any combination (Docker's list: PER_LINUX, PER_LINUX32, UNAME26, both); the
// query is allowed too.
const personalityFlags = perLinux32 | uname26

// argChecks returns the built-in argument checks; blockMPTCP adds the MPTCP one.
func argChecks(blockMPTCP bool) []argCheck {
	checks := append(socketChecks(), namespaceChecks()...)
	checks = append(checks, terminalCheck(), personalityCheck())
	if blockMPTCP {
		checks = append(checks, argCheck{
			name:    "socket",
			why:     "IPPROTO_MPTCP (Landlock's TCP rules do not cover it)",
			matches: [][]cond{{low32(2, unix.IPPROTO_MPTCP)}},
			always:  true,
		})
	}
	return checks
}

// socketChecks deny every address family but allowedFamilies (netlink only for NETLINK_ROUTE)
// and raw IPv4/IPv6 sockets, on socket and on socketpair: socketpair creates its sockets
// through the same family code (loading the family's module on demand) before it can fail.
func socketChecks() []argCheck {
	var matches [][]cond
	for _, block := range coverBlocks(allowedFamilies, familyBits) {
		matches = append(matches, []cond{masked(0, block.mask, block.value)})
	}
	matches = append(matches,
		[]cond{above64(0, 1<<familyBits-1)},
		[]cond{low32(0, unix.AF_NETLINK), notEq64(2, unix.NETLINK_ROUTE)},
	)
	for _, family := range []uint32{unix.AF_INET, unix.AF_INET6} {
		for _, typ := range []uint32{unix.SOCK_RAW, unix.SOCK_PACKET} {
			matches = append(matches, []cond{low32(0, family), masked(1, sockTypeMask, typ)})
		}
	}
	const why = "exotic address families, raw sockets, netlink other than NETLINK_ROUTE"
	return []argCheck{
		{name: "socket", why: why, matches: matches},
		{name: "socketpair", why: why, matches: matches},
	}
}

// namespaceChecks deny new namespaces through clone and unshare (clone3 answers ENOSYS).
func namespaceChecks() []argCheck {
	clone := argCheck{name: "clone", why: "CLONE_NEW* flags (new namespaces)"}
	unshare := argCheck{name: "unshare", why: "CLONE_NEW* flags (new namespaces)"}
	for _, flag := range cloneNamespaceFlags {
		clone.matches = append(clone.matches, []cond{anyBit(0, flag)})
		unshare.matches = append(unshare.matches, []cond{anyBit(0, flag)})
	}
	unshare.matches = append(unshare.matches, []cond{anyBit(0, unix.CLONE_NEWTIME)})
	return []argCheck{clone, unshare}
}

// terminalCheck denies the ioctls that push input into a terminal or talk to the console.
func terminalCheck() argCheck {
	return argCheck{
		name: "ioctl",
		why:  "TIOCSTI and TIOCLINUX (pushing input into a terminal)",
		matches: [][]cond{
			{low32(1, unix.TIOCSTI)},
			{low32(1, unix.TIOCLINUX)},
		},
	}
}

// personalityCheck denies every persona but PER_LINUX with personalityFlags and the query
// (ASLR off, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO… help exploits).
func personalityCheck() argCheck {
	c := argCheck{name: "personality", why: "values other than PER_LINUX, PER_LINUX32, UNAME26 and the query"}
	for _, block := range coverOtherBits(personalityFlags, 32) {
		c.matches = append(c.matches, []cond{masked(0, block.mask, block.value)})
	}
	c.matches = append(c.matches, []cond{above64(0, perQuery)})
	return c
}

// sockTypeMask selects the socket type from socket(2)'s type argument (SOCK_NONBLOCK and
// SOCK_CLOEXEC live above it).
const sockTypeMask = 0xf

// block is the 32-bit values whose bits under mask are value's: v is in it when v&mask == value.
type block struct{ mask, value uint32 }

// coverBlocks covers [0, 2^width) minus allowed with as few aligned blocks as possible. Each
// block becomes one masked comparison, so "any value but these" costs a handful of rules
// (libseccomp allows only one comparison per argument in a rule, so a range cannot be two).
func coverBlocks(allowed []uint32, width uint) []block {
	contains := func(lo, size uint64) bool {
		for _, a := range allowed {
			if uint64(a) >= lo && uint64(a) < lo+size {
				return true
			}
		}
		return false
	}
	var blocks []block
	var split func(lo, size uint64)
	split = func(lo, size uint64) {
		switch {
		case !contains(lo, size):
			blocks = append(blocks, block{mask: ^uint32(size - 1), value: uint32(lo)})
		case size > 1:
			split(lo, size/2)
			split(lo+size/2, size/2)
		}
	}
	split(0, 1<<width)
	return blocks
}

// coverOtherBits covers the values of [0, 2^width) with a bit outside flags (two such bits at
// least), all but the one with every bit set (perQuery, for width 32), with one block for each
// bit: none of the values with flags' bits alone. Aligned blocks (coverBlocks) would take up to width for each allowed value
// apart (83 for personality's, 215 of the default filter's 413 instructions); two bits each
// suffice here. Over the cycle of the other bits, o0 o1 … o0, a block each for "o(i) clear and
// o(i+1) set", and for each flag bit f "f clear and o0 set". A value with some other bit set and
// some clear has, along the cycle, a clear one followed by a set one; a value with every other
// bit set and some flag bit clear has that flag clear and o0 set. Every block needs an other bit
// set and some bit clear, which neither the allowed values nor the all-ones value have.
func coverOtherBits(flags uint32, width uint) []block {
	var other, flag []uint32
	for i := range width {
		if bit := uint32(1) << i; flags&bit != 0 {
			flag = append(flag, bit)
		} else {
			other = append(other, bit)
		}
	}
	var blocks []block
	for i, clear := range other {
		set := other[(i+1)%len(other)]
		blocks = append(blocks, block{mask: clear | set, value: set})
	}
	for _, clear := range flag {
		blocks = append(blocks, block{mask: clear | other[0], value: other[0]})
	}
	return blocks
}

// addArgCheck adds check's matches to prog with the deny action.
func addArgCheck(prog *libseccomp.ScmpFilter, check argCheck, deny libseccomp.ScmpAction) error {
	nr, ok := native()[check.name]
	if !ok {
		return unknownError(check.name)
	}
	for _, match := range check.matches {
		conds := make([]libseccomp.ScmpCondition, 0, len(match))
		for _, c := range match {
			values := []uint64{c.a}
			if c.op == libseccomp.CompareMaskedEqual {
				values = append(values, c.b)
			}
			sc, err := libseccomp.MakeCondition(c.arg, c.op, values...)
			if err != nil {
				return fmt.Errorf("seccomp rule %s: %w", check.name, err)
			}
			conds = append(conds, sc)
		}
		if err := prog.AddRuleConditionalExact(libseccomp.ScmpSyscall(nr), deny, conds); err != nil {
			return fmt.Errorf("seccomp rule %s (%s): %w", check.name, check.why, err)
		}
	}
	return nil
}
