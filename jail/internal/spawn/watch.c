// pid 1's watch on the protections' mountpoints (watch.h).
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "watch.h"

void jail_watch_take(struct jail_watch *w, uint32_t mnt_id, const char *path, size_t len) {
	struct jail_watched *list = realloc(w->list, (w->n + 1) * sizeof *list);
	char *copy = malloc(len + 1);
	if (list == NULL || copy == NULL) {
		free(copy);
		if (list != NULL)
			w->list = list;
		return;
	}
	memcpy(copy, path, len);
	copy[len] = 0;
	w->list = list;
	w->list[w->n++] = (struct jail_watched){.mnt_id = mnt_id, .path = copy};
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

const char *jail_watch_breach(const struct jail_watch *w, int present) {
	for (int i = 0; i < w->n; i++) {
		struct statx st;
		int found = statx(AT_FDCWD, w->list[i].path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &st) == 0;
		if (found ? st.stx_mnt_id != w->list[i].mnt_id : !present)
			return w->list[i].path;
	}
	return NULL;
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

void jail_watch_report(int report_fd, int err_fd, const char *path) {
	char now[256], what[512], msg[3072];
	describe(path, now, sizeof now);
	snprintf(what, sizeof what,
	         "removed, replaced or moved away on the host during the run, so its protection no longer held: the "
	         "sandbox was stopped; %s",
	         now);
	// fail.Error as wire.Message carries it; the host prints it as jail's error.
	size_t len = snprintf(msg, sizeof msg, "{\"error\":{\"op\":\"protect\",\"path\":");
	json_string(msg, sizeof msg - 64, &len, path);
	len += snprintf(msg + len, sizeof msg - len, ",\"detail\":");
	json_string(msg, sizeof msg - 32, &len, what);
	len += snprintf(msg + len, sizeof msg - len, ",\"exit\":125}}\n");
	if (report_fd >= 0 && write(report_fd, msg, len) == (ssize_t)len)
		return;
	dprintf(err_fd, "jail: protect %s: %s\n", path, what);
}
