/* fileio.c - atomic saves (fileio.h): temporary + fsync + rename, symlinks written through,
 * non-regular targets refused, temporaries removed on failure, interrupt or (for ones a killed
 * process left) the next save of the same target. */
#define _GNU_SOURCE
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "intr.h"

#define TMP_TAG ".gwbtmp-"          /* temporaries: .<name>.gwbtmp-<pid>-XXXXXX */
#define IO_BLOCK ((size_t)4 << 20)  /* interrupt checks between blocks this big */
#define MAX_LINKS 40

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO" :
	       S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* The file a save of path replaces: path itself, or the end of its chain of symlinks (which
 * may not exist yet). Sets *st_out / *exists for that file. Returns a malloc'd path or NULL
 * (gwb_error set). */
static char *resolve_target(const char *path, const char *what, struct stat *st_out,
			    bool *exists)
{
	char *cur = strdup(path);
	int hops;

	if (!cur) {
		gwb_error(GWB_ENOMEM, "%s: out of memory", what);
		return NULL;
	}
	for (hops = 0; hops < MAX_LINKS; hops++) {
		char link[PATH_MAX], *next;
		ssize_t n;
		if (lstat(cur, st_out)) {
			if (errno == ENOENT) {
				*exists = false;
				return cur;
			}
			gwb_error(GWB_EIO, "%s: %s: %s", what, cur, strerror(errno));
			free(cur);
			return NULL;
		}
		if (!S_ISLNK(st_out->st_mode)) {
			*exists = true;
			return cur;
		}
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0) {
			gwb_error(GWB_EIO, "%s: %s: cannot read the link: %s", what, cur,
				  strerror(errno));
			free(cur);
			return NULL;
		}
		link[n] = 0;
		if (link[0] == '/') {
			next = strdup(link);
		} else {
			/* relative to the link's own folder */
			const char *slash = strrchr(cur, '/');
			int dl = slash ? (int)(slash - cur) + 1 : 0;
			next = NULL;
			if (asprintf(&next, "%.*s%s", dl, cur, link) < 0)
				next = NULL;
		}
		free(cur);
		if (!next) {
			gwb_error(GWB_ENOMEM, "%s: out of memory", what);
			return NULL;
		}
		cur = next;
	}
	gwb_error(GWB_EIO, "%s: %s: too many levels of symbolic links", what, path);
	free(cur);
	return NULL;
}

/* Split target into folder ("." when none) and base name; both malloc'd. */
static int split_path(const char *target, char **dir, char **base)
{
	const char *slash = strrchr(target, '/');

	if (!slash) {
		*dir = strdup(".");
		*base = strdup(target);
	} else {
		*dir = slash == target ? strdup("/") : strndup(target, (size_t)(slash - target));
		*base = strdup(slash + 1);
	}
	if (!*dir || !*base) {
		free(*dir);
		free(*base);
		return -1;
	}
	return 0;
}

/* Remove temporaries of this base name whose process is gone (killed mid-save). */
static void sweep_stale(const char *dir, const char *base)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t bl = strlen(base), tl = strlen(TMP_TAG);

	if (!d)
		return;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		char *end;
		long pid;
		if (n[0] != '.' || strncmp(n + 1, base, bl) || strncmp(n + 1 + bl, TMP_TAG, tl))
			continue;
		pid = strtol(n + 1 + bl + tl, &end, 10);
		if (end == n + 1 + bl + tl || *end != '-' || pid <= 0 || pid > INT_MAX)
			continue;
		if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;   /* ours (in progress) or a live process's */
		unlinkat(dirfd(d), n, 0);
	}
	closedir(d);
}

/* The process's umask, read without changing it where the kernel says it (/proc, Linux 4.7+):
 * umask() can only be read by setting it, which would race with other threads' files. */
static mode_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	unsigned int m;
	mode_t um;

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Umask: %o", &m) == 1) {
				fclose(f);
				return (mode_t)m;
			}
		fclose(f);
	}
	um = umask(022);
	umask(um);
	return um;
}

static void release(gwb_afile *a)
{
	free(a->target);
	free(a->tmp);
	a->target = a->tmp = NULL;
	a->fp = NULL;
	a->fd = -1;
}

gwb_status gwb_afile_open(gwb_afile *a, const char *path, const char *what)
{
	struct stat st;
	bool exists = false;
	char *dir = NULL, *base = NULL;
	mode_t mode;
	gwb_status rc;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->what = what ? what : "save";
	what = a->what;
	if (!path || !*path)
		return gwb_error(GWB_EINVAL, "%s: the file name is empty", what);
	a->target = resolve_target(path, what, &st, &exists);
	if (!a->target)
		return GWB_EIO;
	if (exists && !S_ISREG(st.st_mode)) {
		rc = gwb_error(GWB_EIO, "%s: %s is %s, not a regular file: refusing to replace it; "
			       "give a file name", what, path, kind_of(st.st_mode));
		goto out_release;
	}
	if (split_path(a->target, &dir, &base)) {
		rc = gwb_error(GWB_ENOMEM, "%s: out of memory", what);
		goto out_release;
	}
	sweep_stale(dir, base);
	if (asprintf(&a->tmp, "%s/.%s" TMP_TAG "%ld-XXXXXX", dir, base, (long)getpid()) < 0) {
		a->tmp = NULL;
		rc = gwb_error(GWB_ENOMEM, "%s: out of memory", what);
		goto out_free;
	}
	a->fd = mkostemp(a->tmp, O_CLOEXEC);
	if (a->fd < 0) {
		rc = gwb_error(GWB_EIO, "%s: cannot create a file in %s to write %s: %s", what, dir,
			       path, strerror(errno));
		goto out_free;
	}
	mode = exists ? st.st_mode & 07777 : 0666 & ~current_umask();
	if (exists && fchown(a->fd, st.st_uid, st.st_gid)) {
		/* keep the owner where we may (root, or a group of ours); else the file is ours */
	}
	if (fchmod(a->fd, mode)) {
		rc = gwb_error(GWB_EIO, "%s: %s: %s", what, a->tmp, strerror(errno));
		goto out_unlink;
	}
	a->fp = fdopen(a->fd, "wb");
	if (!a->fp) {
		rc = gwb_error(GWB_ENOMEM, "%s: out of memory", what);
		goto out_unlink;
	}
	free(dir);
	free(base);
	return GWB_OK;
out_unlink:
	close(a->fd);
	unlink(a->tmp);
out_free:
	free(dir);
	free(base);
out_release:
	release(a);
	return rc;
}

gwb_status gwb_afile_write(gwb_afile *a, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		size_t want = n > IO_BLOCK ? IO_BLOCK : n;
		ssize_t k;
		if (gwb_intr_pending())
			return gwb_error(GWB_EINTR, "%s: interrupted; %s was left as it was", a->what,
					 a->target);
		k = write(a->fd, c, want);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return gwb_error(GWB_EIO, "%s: writing %s failed: %s", a->what, a->target,
					 k < 0 ? strerror(errno) : "no progress");
		c += k;
		n -= (size_t)k;
	}
	return GWB_OK;
}

void gwb_afile_abort(gwb_afile *a)
{
	if (a->fp)
		fclose(a->fp);
	else if (a->fd >= 0)
		close(a->fd);
	if (a->tmp)
		unlink(a->tmp);
	release(a);
}

gwb_status gwb_afile_commit(gwb_afile *a)
{
	gwb_status rc = GWB_OK;
	int e = 0, dfd;
	char *dir = NULL, *base = NULL;

	if (!a->tmp)
		return gwb_error(GWB_EINVAL, "%s: nothing to save (already finished)", a->what);
	if (fflush(a->fp) || ferror(a->fp))
		e = errno ? errno : EIO;
	else if (fsync(a->fd))
		e = errno;
	if (e) {
		rc = gwb_error(GWB_EIO, "%s: writing %s failed: %s; it was left as it was",
			       a->what, a->target, strerror(e));
		goto out_abort;
	}
	if (gwb_intr_pending()) {
		rc = gwb_error(GWB_EINTR, "%s: interrupted; %s was left as it was", a->what,
			       a->target);
		goto out_abort;
	}
	e = fclose(a->fp) ? errno : 0;
	a->fp = NULL;
	a->fd = -1;
	if (e) {
		rc = gwb_error(GWB_EIO, "%s: writing %s failed: %s; it was left as it was",
			       a->what, a->target, strerror(e));
		goto out_abort;
	}
	if (rename(a->tmp, a->target)) {
		rc = gwb_error(GWB_EIO, "%s: cannot put %s in place: %s; it was left as it was",
			       a->what, a->target, strerror(errno));
		goto out_abort;
	}
	/* the rename itself reaches the disk with the folder */
	if (!split_path(a->target, &dir, &base)) {
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		free(dir);
		free(base);
	}
	release(a);
	return GWB_OK;
out_abort:
	gwb_afile_abort(a);
	return rc;
}

gwb_status gwb_file_save(const char *path, const void *p, size_t n, const char *what)
{
	gwb_afile a;
	gwb_status rc;

	if ((rc = gwb_afile_open(&a, path, what)))
		return rc;
	if ((rc = gwb_afile_write(&a, p, n))) {
		gwb_afile_abort(&a);
		return rc;
	}
	return gwb_afile_commit(&a);
}
