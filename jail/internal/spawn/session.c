// Sending and receiving session.h's messages, for the keeper and the spawner.
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "session.h"

const char *const jail_spawner_arg0 = "jail-spawner";
const char *const jail_keeper_arg0 = "jail-keeper";
const char *const jail_api_arg0 = "jail-api";
const char *const jail_egress_arg0 = "jail-egress";

int jail_send(int sock, struct jail_msg *m, const void *payload, size_t n, const int *fds, int nfds) {
	m->len = n;
	struct iovec iov[2] = {{m, sizeof *m}, {(void *)payload, n}};
	union {
		char buf[CMSG_SPACE(JAIL_MSG_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} c;
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = n > 0 ? 2 : 1};
	if (nfds > 0) {
		if (nfds > JAIL_MSG_MAX_FDS) {
			errno = EINVAL;
			return -1;
		}
		memset(&c, 0, sizeof c);
		msg.msg_control = c.buf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *h = CMSG_FIRSTHDR(&msg);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(h), fds, nfds * sizeof(int));
	}
	ssize_t sent;
	while ((sent = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return sent < 0 ? -1 : 0;
}

void jail_close_fds(const int *fds, int n) {
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

ssize_t jail_recv(int sock, void *buf, size_t size, int *fds, int *nfds) {
	union {
		char buf[CMSG_SPACE(JAIL_MSG_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov = {buf, size};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof c.buf};
	ssize_t n;
	while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	*nfds = 0;
	if (n < 0)
		return -1;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&msg); h != NULL; h = CMSG_NXTHDR(&msg, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (int i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
			if (*nfds < JAIL_MSG_MAX_FDS)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	const struct jail_msg *m = buf;
	if (n > 0 && ((size_t)n < sizeof *m || msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC) || m->len != (size_t)n - sizeof *m)) {
		jail_close_fds(fds, *nfds);
		*nfds = 0;
		errno = EBADMSG;
		return -1;
	}
	return n;
}
