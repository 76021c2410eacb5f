package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

var eperm = retErrno(unix.EPERM)

func TestDefaultFilter(t *testing.T) {
	const high = 0xffffffff00000000
	checkVerdicts(t, Policy{}, []verdictCase{
		{"read", native64(unix.SYS_READ, 0, 0, 10), retAllow},
		{"getpid", native64(unix.SYS_GETPID), retAllow},
		{"bpf", native64(unix.SYS_BPF), eperm},
		{"ptrace", native64(unix.SYS_PTRACE), eperm},
		{"io_uring_setup", native64(unix.SYS_IO_URING_SETUP), eperm},
		{"clone3", native64(unix.SYS_CLONE3), retErrno(unix.ENOSYS)},
		{"socket inet stream", native64(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC), retAllow},
		{"socket inet6 dgram", native64(unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_DGRAM), retAllow},
		{"socket unix", native64(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM), retAllow},
		{"socket netlink route", native64(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE), retAllow},
		{"socket netlink audit", native64(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT), eperm},
		{"socket netlink route high proto", native64(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, high|unix.NETLINK_ROUTE), eperm},
		{"socket netlink high family", native64(unix.SYS_SOCKET, high|unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT), eperm},
		{"socket packet", native64(unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW), eperm},
		{"socket packet high", native64(unix.SYS_SOCKET, high|unix.AF_PACKET, unix.SOCK_RAW), eperm},
		{"socket vsock", native64(unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_STREAM), eperm},
		{"socket key", native64(unix.SYS_SOCKET, unix.AF_KEY, unix.SOCK_RAW), eperm},
		{"socket bluetooth", native64(unix.SYS_SOCKET, unix.AF_BLUETOOTH, unix.SOCK_STREAM), eperm},
		{"socket alg", native64(unix.SYS_SOCKET, unix.AF_ALG, unix.SOCK_SEQPACKET), eperm},
		{"socket unspec", native64(unix.SYS_SOCKET, unix.AF_UNSPEC, unix.SOCK_STREAM), eperm},
		{"socket family 63", native64(unix.SYS_SOCKET, 63, unix.SOCK_STREAM), eperm},
		{"socket family 200", native64(unix.SYS_SOCKET, 200, unix.SOCK_STREAM), eperm},
		{"socket inet high", native64(unix.SYS_SOCKET, high|unix.AF_INET, unix.SOCK_STREAM), eperm},
		{"socket inet raw", native64(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP), eperm},
		{"socket inet raw cloexec", native64(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC), eperm},
		{"socket inet6 raw high type", native64(unix.SYS_SOCKET, unix.AF_INET6, high|unix.SOCK_RAW), eperm},
		{"socket inet packet", native64(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_PACKET), eperm},
		{"socketpair unix", native64(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_STREAM), retAllow},
		{"socketpair tipc", native64(unix.SYS_SOCKETPAIR, unix.AF_TIPC, unix.SOCK_STREAM), eperm},
		{"socketpair tipc high", native64(unix.SYS_SOCKETPAIR, high|unix.AF_TIPC, unix.SOCK_STREAM), eperm},
		{"socketpair netlink audit", native64(unix.SYS_SOCKETPAIR, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT), eperm},
		{"socket mptcp allowed by default", native64(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), retAllow},
		{"clone thread", native64(unix.SYS_CLONE, unix.CLONE_VM|unix.CLONE_FS|unix.CLONE_FILES|unix.CLONE_SIGHAND|unix.CLONE_THREAD|unix.CLONE_SYSVSEM), retAllow},
		{"clone fork", native64(unix.SYS_CLONE, unix.CLONE_CHILD_SETTID|unix.CLONE_CHILD_CLEARTID|uint64(unix.SIGCHLD)), retAllow},
		{"clone vfork pidfd", native64(unix.SYS_CLONE, unix.CLONE_VM|unix.CLONE_VFORK|unix.CLONE_PIDFD|uint64(unix.SIGCHLD)), retAllow},
		{"clone exit signal 0x80 bit", native64(unix.SYS_CLONE, 0x80|uint64(unix.SIGCHLD)), retAllow},
		{"clone newuser", native64(unix.SYS_CLONE, unix.CLONE_NEWUSER|uint64(unix.SIGCHLD)), eperm},
		{"clone newnet high", native64(unix.SYS_CLONE, high|unix.CLONE_NEWNET), eperm},
		{"clone newns", native64(unix.SYS_CLONE, unix.CLONE_NEWNS), eperm},
		{"clone newcgroup", native64(unix.SYS_CLONE, unix.CLONE_NEWCGROUP), eperm},
		{"unshare files", native64(unix.SYS_UNSHARE, unix.CLONE_FILES), retAllow},
		{"unshare newuser", native64(unix.SYS_UNSHARE, unix.CLONE_NEWUSER), eperm},
		{"unshare newtime", native64(unix.SYS_UNSHARE, unix.CLONE_NEWTIME), eperm},
		{"unshare newpid|newns", native64(unix.SYS_UNSHARE, unix.CLONE_NEWPID|unix.CLONE_NEWNS), eperm},
		{"ioctl TCGETS", native64(unix.SYS_IOCTL, 0, unix.TCGETS), retAllow},
		{"ioctl TIOCSTI", native64(unix.SYS_IOCTL, 0, unix.TIOCSTI), eperm},
		{"ioctl TIOCSTI high", native64(unix.SYS_IOCTL, 0, high|unix.TIOCSTI), eperm},
		{"ioctl TIOCLINUX", native64(unix.SYS_IOCTL, 0, unix.TIOCLINUX), eperm},
		{"personality linux", native64(unix.SYS_PERSONALITY, perLinux), retAllow},
		{"personality linux32", native64(unix.SYS_PERSONALITY, perLinux32), retAllow},
		{"personality uname26", native64(unix.SYS_PERSONALITY, uname26), retAllow},
		{"personality uname26|linux32", native64(unix.SYS_PERSONALITY, uname26|perLinux32), retAllow},
		{"personality query", native64(unix.SYS_PERSONALITY, perQuery), retAllow},
		{"personality addr_no_randomize", native64(unix.SYS_PERSONALITY, 0x0040000), eperm},
		{"personality read_implies_exec", native64(unix.SYS_PERSONALITY, 0x0400000), eperm},
		{"personality high bits", native64(unix.SYS_PERSONALITY, high), eperm},
		{"personality query high", native64(unix.SYS_PERSONALITY, high|perQuery), eperm},
	})
}

func TestForeignArchitectures(t *testing.T) {
	checkVerdicts(t, Policy{}, []verdictCase{
		{"i386 getpid", call{arch: auditArchI386, nr: 20}, retKillProcess},
		{"i386 socketcall", call{arch: auditArchI386, nr: 102, args: [6]uint64{1}}, retKillProcess},
		{"x32 getpid", native64(x32SyscallBit | 39), retKillProcess},
		{"x32 bpf", native64(x32SyscallBit | unix.SYS_BPF), retKillProcess},
		{"unknown arch", call{arch: 0xdeadbeef, nr: 0}, retKillProcess},
	})
}
