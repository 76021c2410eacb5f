// pid 1's watch on the protections' mountpoints (watch.h).
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "watch.h"

void jail_watch_take(struct jail_watch *w, int wd, const char *path, size_t len) {
	struct jail_watched *list = realloc(w->list, (w->n + 1) * sizeof *list);
	char *copy = malloc(len + 1);
	if (list == NULL || copy == NULL) {
		free(copy);
		if (list != NULL)
			w->list = list;
		return; // the setup checks the list came through (JAIL_LINK_WATCH's count)
	}
	memcpy(copy, path, len);
	copy[len] = 0;
	const char *slash = strrchr(copy, '/');
	w->list = list;
	w->list[w->n++] = (struct jail_watched){.wd = wd, .path = copy, .name = slash ? slash + 1 : copy};
}

// watched returns the mountpoint named name in the directory watched as wd, or NULL.
static const struct jail_watched *watched(const struct jail_watch *w, int wd, const char *name) {
	for (int i = 0; i < w->n; i++)
		if (w->list[i].wd == wd && strcmp(w->list[i].name, name) == 0)
			return &w->list[i];
	return NULL;
}

const char *jail_watch_breach(struct jail_watch *w, const char **what) {
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(w->fd, buf, sizeof buf)) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			p += sizeof *e + e->len;
			if (e->mask & IN_Q_OVERFLOW) {
				*what = "too many changes on the host to follow";
				return "";
			}
			const struct jail_watched *m = e->len ? watched(w, e->wd, e->name) : NULL;
			if (m == NULL)
				continue;
			*what = e->mask & IN_MOVED_TO     ? "replaced on the host (another file renamed over it)"
			        : e->mask & IN_MOVED_FROM ? "renamed away on the host"
			                                  : "removed on the host";
			return m->path;
		}
	}
	return NULL;
}

// describe says what is at path now, in out.
static void describe(const char *path, char *out, size_t size) {
	struct stat st;
	if (lstat(path, &st) < 0) {
		snprintf(out, size, "nothing is there now");
	} else if (S_ISDIR(st.st_mode)) {
		int entries = 0;
		DIR *d = opendir(path);
		for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
			entries += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
		if (d != NULL)
			closedir(d);
		snprintf(out, size, "a directory of %d entries is there now: check it before you use it", entries);
	} else if (S_ISREG(st.st_mode)) {
		snprintf(out, size, "a file of %lld bytes is there now: check it before you use it", (long long)st.st_size);
	} else {
		snprintf(out, size, "%s is there now: check it before you use it", S_ISLNK(st.st_mode) ? "a symlink" : "a special file");
	}
}

// json_string appends s to out (at most size bytes, *len used so far) as a JSON string.
static void json_string(char *out, size_t size, size_t *len, const char *s) {
	*len += snprintf(out + *len, size - *len, "\"");
	for (; *s && *len + 8 < size; s++) {
		unsigned char c = *s;
		if (c == '"' || c == '\\')
			*len += snprintf(out + *len, size - *len, "\\%c", c);
		else if (c < 0x20)
			*len += snprintf(out + *len, size - *len, "\\u%04x", c);
		else
			out[(*len)++] = c;
	}
	*len += snprintf(out + *len, size - *len, "\"");
}

void jail_watch_report(int report_fd, int err_fd, const char *path, const char *what) {
	char now[256] = "", detail[512], msg[3072];
	if (path[0] != 0)
		describe(path, now, sizeof now);
	snprintf(detail, sizeof detail, "%s during the run, so its protection no longer held: the sandbox was stopped%s%s", what,
	         now[0] ? "; " : "", now);
	// fail.Error as wire.Message carries it; the host prints it as jail's error.
	size_t len = snprintf(msg, sizeof msg, "{\"error\":{\"op\":\"protect\",\"path\":");
	json_string(msg, sizeof msg - 64, &len, path);
	len += snprintf(msg + len, sizeof msg - len, ",\"detail\":");
	json_string(msg, sizeof msg - 32, &len, detail);
	len += snprintf(msg + len, sizeof msg - len, ",\"exit\":125}}\n");
	if (report_fd >= 0 && write(report_fd, msg, len) == (ssize_t)len)
		return;
	dprintf(err_fd, "jail: protect%s%s: %s\n", path[0] ? " " : "", path, detail);
}
