// A process of jail that stays for a run (the host with a report or an egress proxy) maps most of
// jail's binary by then: starting Go's runtime, resolving the profile and compiling the filter
// touch code and constants all over it, and the kernel maps up to 64 KB of cached file around
// each page fault. Those pages are the file's, shared with the page cache, but they count in the
// process's resident set (5-6 MB of a 7 MB binary) for as long as it lives. MADV_DONTNEED on the
// read-only segments drops the mappings, not the pages: what the process uses from then on is
// faulted back from the page cache, the rest is no longer counted. The writable segment (data,
// bss, and the relocations made read-only after start-up, which are the process's own copies) is
// left alone: dropping it would lose what was written there. The C parents (the waiter, pid 1)
// shed the same way once their run has gone on a moment: they map about 1.4 and 0.8 MB of it by
// then, and use a few pages of it while they wait.
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shed.h"

// shed_program drops the read-only PT_LOAD segments of the first object listed, the program,
// whole pages only (a segment's first and last page may hold another's bytes).
static int shed_program(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	(void)data;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || ph->p_flags & PF_W)
			continue;
		uintptr_t start = (info->dlpi_addr + ph->p_vaddr + page - 1) & ~(page - 1);
		uintptr_t end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
		if (end > start)
			madvise((void *)start, end - start, MADV_DONTNEED);
	}
	return 1; // the program only
}

void jail_shed_binary(void) {
	dl_iterate_phdr(shed_program, NULL);
}

int jail_poll_idle(struct pollfd *fds, nfds_t n, const struct timespec *until) {
	static int shed;
	static const struct timespec after = {.tv_nsec = JAIL_SHED_AFTER_MS * 1000000L};
	if (shed || (until != NULL && (until->tv_sec < after.tv_sec ||
	                               (until->tv_sec == after.tv_sec && until->tv_nsec <= after.tv_nsec))))
		return ppoll(fds, n, until, NULL);
	int ready = ppoll(fds, n, &after, NULL);
	if (ready == 0) {
		jail_shed_binary();
		shed = 1;
	}
	return ready;
}
