/* fileio.c - atomic saves (fileio.h): a unique temporary created O_EXCL in the folder of the
 * file being replaced, fsync, renameat, folder fsync; non-regular targets written in place;
 * temporaries removed on failure, interrupt or (for ones a killed process left) the next save
 * of the same target.
 *
 * Symlinks: nothing is resolved by hand from strings. The kernel follows the whole path once
 * (open O_PATH), which is where its protected_symlinks rule for sticky world-writable folders
 * is enforced (a refusal is reported as such); then the final component is examined with
 * AT_SYMLINK_NOFOLLOW and, while it is a link, the link's text is opened relative to the
 * link's own folder with openat (the kernel resolves every folder part), so the temporary and
 * the renameat land in the folder that holds the link's target, through a descriptor that no
 * later change of the links can redirect. The file reached that way must be the one the
 * kernel's own walk reached (same device and inode), else the save is refused. A link that
 * lives on /proc (/proc/self/fd/N, /dev/stdout -> /proc/self/fd/1, a memfd's fd) is a magic
 * link with no name to rename onto: its file is opened through the kernel and written in
 * place, as is every non-regular file (pipe, terminal, device, FIFO).
 *
 * Inputs: a loader opens its path more than once (the format sniffers read the first bytes,
 * then the reader starts again), which loses those bytes on a pipe. gwb_input_open reads a
 * non-seekable input whole into a memfd first and hands the loaders its /proc/self/fd path. */
#define _GNU_SOURCE
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "intr.h"

#define TMP_TAG ".gwbtmp-"          /* temporaries: .<name>.gwbtmp-<pid>-XXXXXX */
#define TMP_BASE_MAX 200            /* bytes of the name kept in a temporary's (NAME_MAX) */
#define IO_BLOCK ((size_t)4 << 20)  /* interrupt checks between blocks this big */
#define MAX_LINKS 40

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO" :
	       S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Split a path into its folder part ("." when none) and last component; both malloc'd. */
static int split_path(const char *p, char **dir, char **base)
{
	const char *slash = strrchr(p, '/');

	if (!slash) {
		*dir = strdup(".");
		*base = strdup(p);
	} else {
		*dir = slash == p ? strdup("/") : strndup(p, (size_t)(slash - p));
		*base = strdup(slash + 1);
	}
	if (!*dir || !*base) {
		free(*dir);
		free(*base);
		*dir = *base = NULL;
		return -1;
	}
	return 0;
}

/* The temporaries' prefix for base: ".<base>.gwbtmp-" with base cut to fit NAME_MAX. */
static int tmp_prefix(const char *base, char *out, size_t cap)
{
	return snprintf(out, cap, ".%.*s" TMP_TAG, TMP_BASE_MAX, base);
}

/* Remove temporaries of this base name whose process is gone (killed mid-save). */
static void sweep_stale(int dirfd, const char *base)
{
	char pre[TMP_BASE_MAX + 16];
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t pl = (size_t)tmp_prefix(base, pre, sizeof(pre));
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		char *end;
		long pid;
		if (strncmp(n, pre, pl))
			continue;
		pid = strtol(n + pl, &end, 10);
		if (end == n + pl || *end != '-' || pid <= 0 || pid > INT_MAX)
			continue;
		if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;   /* ours (in progress) or a live process's */
		unlinkat(dirfd, n, 0);
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
	if (a->dirfd >= 0)
		close(a->dirfd);
	free(a->target);
	free(a->tmp);
	free(a->base);
	a->target = a->tmp = a->base = NULL;
	a->fp = NULL;
	a->fd = -1;
	a->dirfd = -1;
}

static bool on_proc(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/* Where a save of path lands: a->dirfd + a->base (links followed as said at the top),
 * st and exists for the file there; magic when a /proc link was met (write in place). */
static gwb_status locate(gwb_afile *a, const char *path, struct stat *st, bool *exists,
			 bool *magic)
{
	const char *what = a->what;
	char *dir = NULL, *base = NULL;
	struct stat kst;
	int kfd = -1, hops, dfd;
	gwb_status rc;

	*exists = *magic = false;
	if (split_path(path, &dir, &base))
		return gwb_error(GWB_ENOMEM, "%s: out of memory", what);
	if (!*base) {
		rc = gwb_error(GWB_EIO, "%s: %s names a folder; give a file name", what, path);
		goto out;
	}
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		rc = gwb_error(GWB_EIO, "%s: cannot create %s: its folder %s: %s", what, path, dir,
			       strerror(errno));
		goto out;
	}
	for (hops = 0;; hops++) {
		char link[PATH_MAX], *ndir = NULL, *nbase = NULL;
		ssize_t n;
		int nfd;
		if (fstatat(dfd, base, st, AT_SYMLINK_NOFOLLOW)) {
			if (errno == ENOENT)
				break;
			rc = gwb_error(GWB_EIO, "%s: %s: %s", what, path, strerror(errno));
			goto out_close;
		}
		if (!S_ISLNK(st->st_mode)) {
			*exists = true;
			break;
		}
		if (hops == 0) {
			/* the kernel's own walk: its link rules (protected_symlinks, loops) apply */
			kfd = open(path, O_PATH | O_CLOEXEC);
			if (kfd < 0 && errno == EACCES) {
				rc = gwb_error(GWB_EIO, "%s: %s is a symbolic link the kernel refuses to "
					       "follow (permission denied: in a sticky world-writable "
					       "folder, fs.protected_symlinks allows only links of "
					       "your own or the folder owner's); save under another "
					       "name", what, path);
				goto out_close;
			}
			if (kfd < 0 && errno == ELOOP)
				goto out_loop;
			if (kfd < 0 && errno != ENOENT) {
				rc = gwb_error(GWB_EIO, "%s: %s: %s", what, path, strerror(errno));
				goto out_close;
			}
		}
		if (on_proc(dfd)) {
			*magic = true;
			break;
		}
		if (hops >= MAX_LINKS)
			goto out_loop;
		n = readlinkat(dfd, base, link, sizeof(link) - 1);
		if (n < 0) {
			rc = gwb_error(GWB_EIO, "%s: %s: cannot read the link: %s", what, path,
				       strerror(errno));
			goto out_close;
		}
		link[n] = 0;
		if (split_path(link, &ndir, &nbase)) {
			rc = gwb_error(GWB_ENOMEM, "%s: out of memory", what);
			goto out_close;
		}
		/* relative link text is relative to the link's folder: openat on dfd */
		nfd = *nbase ? openat(dfd, ndir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		if (nfd < 0) {
			rc = gwb_error(GWB_EIO, "%s: %s links to %s, whose folder cannot be opened: "
				       "%s", what, path, link, *nbase ? strerror(errno) :
				       "it names a folder");
			free(ndir);
			free(nbase);
			goto out_close;
		}
		close(dfd);
		dfd = nfd;
		free(ndir);
		free(base);
		base = nbase;
	}
	if (kfd >= 0 && !*magic) {
		/* our walk must reach the file the kernel's did */
		if (fstat(kfd, &kst) || !*exists || kst.st_dev != st->st_dev ||
		    kst.st_ino != st->st_ino) {
			rc = gwb_error(GWB_EIO, "%s: the links of %s changed during the save; try "
				       "again", what, path);
			goto out_close;
		}
	}
	if (kfd >= 0)
		close(kfd);
	a->dirfd = dfd;
	a->base = base;
	free(dir);
	return GWB_OK;
out_loop:
	rc = gwb_error(GWB_EIO, "%s: %s: too many levels of symbolic links", what, path);
out_close:
	if (kfd >= 0)
		close(kfd);
	close(dfd);
out:
	free(dir);
	free(base);
	return rc;
}

/* A non-regular target (or one behind a /proc magic link): open it through the kernel and
 * write in place. A FIFO with no reader yet is waited for (Ctrl-C stops the wait). */
static gwb_status open_inplace(gwb_afile *a, const char *path)
{
	struct stat st;
	int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK;
	const struct timespec nap = {0, 20 * 1000 * 1000};

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		flags |= O_TRUNC;
	if (stat(path, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode)))
		return gwb_error(GWB_EIO, "%s: %s is %s, which cannot be written; give a file name",
				 a->what, path, kind_of(st.st_mode));
	for (;;) {
		a->fd = open(path, flags);
		if (a->fd >= 0)
			break;
		if (errno == ENXIO && S_ISFIFO(st.st_mode)) {
			/* a FIFO no process reads yet */
			if (gwb_intr_pending())
				return gwb_error(GWB_EINTR, "%s: interrupted while waiting for a reader "
						 "of the FIFO %s", a->what, path);
			nanosleep(&nap, NULL);
			continue;
		}
		if (errno == EINTR)
			continue;
		return gwb_error(GWB_EIO, "%s: cannot open %s for writing: %s", a->what, path,
				 strerror(errno));
	}
	/* writes block as a file's would (a full pipe waits for its reader) */
	fcntl(a->fd, F_SETFL, fcntl(a->fd, F_GETFL) & ~O_NONBLOCK);
	a->inplace = true;
	a->fp = fdopen(a->fd, "wb");
	if (!a->fp) {
		close(a->fd);
		a->fd = -1;
		return gwb_error(GWB_ENOMEM, "%s: out of memory", a->what);
	}
	return GWB_OK;
}

/* Create the temporary in a->dirfd: O_EXCL, a name no other saver picks (pid + random). */
static gwb_status make_temp(gwb_afile *a, const char *path)
{
	static unsigned long counter;
	const char *digits = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char pre[TMP_BASE_MAX + 16], name[TMP_BASE_MAX + 64];
	struct timespec ts;
	uint64_t x;
	int tries, i;

	tmp_prefix(a->base, pre, sizeof(pre));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ts.tv_sec ^
	    ((uint64_t)__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) << 32) ^
	    (uint64_t)(uintptr_t)a;
	for (tries = 0; tries < 1000; tries++) {
		char r[7];
		for (i = 0; i < 6; i++) {
			x ^= x >> 31;
			x *= 0xbf58476d1ce4e5b9ULL;
			x ^= x >> 27;
			r[i] = digits[x % 62];
		}
		r[6] = 0;
		snprintf(name, sizeof(name), "%s%ld-%s", pre, (long)getpid(), r);
		a->fd = openat(a->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			       O_CLOEXEC, 0600);
		if (a->fd >= 0) {
			a->tmp = strdup(name);
			if (!a->tmp) {
				close(a->fd);
				unlinkat(a->dirfd, name, 0);
				a->fd = -1;
				return gwb_error(GWB_ENOMEM, "%s: out of memory", a->what);
			}
			return GWB_OK;
		}
		if (errno != EEXIST)
			break;
		x += (uint64_t)tries + 1;
	}
	return gwb_error(GWB_EIO, "%s: cannot create a file beside %s to write it: %s", a->what,
			 path, strerror(errno));
}

gwb_status gwb_afile_open(gwb_afile *a, const char *path, const char *what)
{
	struct stat st;
	bool exists = false, magic = false;
	mode_t mode;
	gwb_status rc;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->dirfd = -1;
	a->what = what ? what : "save";
	what = a->what;
	if (!path || !*path)
		return gwb_error(GWB_EINVAL, "%s: the file name is empty", what);
	a->target = strdup(path);
	if (!a->target)
		return gwb_error(GWB_ENOMEM, "%s: out of memory", what);
	if ((rc = locate(a, path, &st, &exists, &magic)))
		goto out_release;
	if (exists && S_ISDIR(st.st_mode)) {
		rc = gwb_error(GWB_EIO, "%s: %s is a directory, not a regular file: refusing to "
			       "replace it; give a file name", what, path);
		goto out_release;
	}
	if (magic || (exists && !S_ISREG(st.st_mode))) {
		if ((rc = open_inplace(a, path)))
			goto out_release;
		close(a->dirfd);
		a->dirfd = -1;
		return GWB_OK;
	}
	sweep_stale(a->dirfd, a->base);
	if ((rc = make_temp(a, path)))
		goto out_release;
	mode = exists ? st.st_mode & 07777 : 0666 & ~current_umask();
	if (exists && fchown(a->fd, st.st_uid, st.st_gid)) {
		/* keep the owner where we may (root, or a group of ours); else the file is ours */
	}
	if (fchmod(a->fd, mode)) {
		rc = gwb_error(GWB_EIO, "%s: %s: %s", what, path, strerror(errno));
		goto out_unlink;
	}
	a->fp = fdopen(a->fd, "wb");
	if (!a->fp) {
		rc = gwb_error(GWB_ENOMEM, "%s: out of memory", what);
		goto out_unlink;
	}
	return GWB_OK;
out_unlink:
	close(a->fd);
	unlinkat(a->dirfd, a->tmp, 0);
out_release:
	release(a);
	return rc;
}

/* How an unfinished save left its target, for messages. */
static const char *left_as(const gwb_afile *a)
{
	return a->inplace ? "was partly written" : "was left as it was";
}

gwb_status gwb_afile_write(gwb_afile *a, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		size_t want = n > IO_BLOCK ? IO_BLOCK : n;
		ssize_t k;
		if (gwb_intr_pending())
			return gwb_error(GWB_EINTR, "%s: interrupted; %s %s", a->what, a->target,
					 left_as(a));
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
	if (a->tmp && a->dirfd >= 0)
		unlinkat(a->dirfd, a->tmp, 0);
	release(a);
}

gwb_status gwb_afile_commit(gwb_afile *a)
{
	gwb_status rc = GWB_OK;
	int e = 0, dfd;

	if (!a->tmp && !a->inplace)
		return gwb_error(GWB_EINVAL, "%s: nothing to save (already finished)", a->what);
	if (fflush(a->fp) || ferror(a->fp))
		e = errno ? errno : EIO;
	else if (fsync(a->fd) && !(a->inplace && (errno == EINVAL || errno == EROFS)))
		e = errno;   /* (pipes, terminals and devices cannot be synced: not an error) */
	if (e) {
		rc = gwb_error(GWB_EIO, "%s: writing %s failed: %s; it %s", a->what, a->target,
			       strerror(e), left_as(a));
		goto out_abort;
	}
	if (gwb_intr_pending() && !a->inplace) {
		rc = gwb_error(GWB_EINTR, "%s: interrupted; %s was left as it was", a->what,
			       a->target);
		goto out_abort;
	}
	e = fclose(a->fp) ? errno : 0;
	a->fp = NULL;
	a->fd = -1;
	if (e) {
		rc = gwb_error(GWB_EIO, "%s: writing %s failed: %s; it %s", a->what, a->target,
			       strerror(e), left_as(a));
		goto out_abort;
	}
	if (a->inplace) {
		release(a);
		return GWB_OK;
	}
	if (renameat(a->dirfd, a->tmp, a->dirfd, a->base)) {
		rc = gwb_error(GWB_EIO, "%s: cannot put %s in place: %s; it was left as it was",
			       a->what, a->target, strerror(errno));
		goto out_abort;
	}
	/* the rename itself reaches the disk with the folder */
	dfd = openat(a->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
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

/* Cut an unfinished last line (no newline) off the regular file fd of size *size. */
static void cut_partial_line(int fd, off_t *size)
{
	char buf[4096];
	off_t end = *size;

	while (end > 0) {
		off_t from = end > (off_t)sizeof(buf) ? end - (off_t)sizeof(buf) : 0;
		ssize_t k = pread(fd, buf, (size_t)(end - from), from);
		if (k != end - from)
			return;   /* unreadable: leave it */
		if (end == *size && buf[k - 1] == '\n')
			return;   /* ends whole */
		while (k > 0 && buf[k - 1] != '\n')
			k--;
		if (k > 0) {
			end = from + k;
			break;
		}
		end = from;
	}
	if (!ftruncate(fd, end))
		*size = end;
}

gwb_status gwb_file_append_line(const char *path, const char *line, size_t n)
{
	struct stat st;
	off_t size = 0;
	ssize_t k;
	int fd, e = 0;
	bool reg;

	if (!n || line[n - 1] != '\n' || n > GWB_APPEND_MAX)
		return gwb_error(GWB_EINVAL, "%s: a line to append must end in a newline and hold "
				 "at most %d bytes (got %zu)", path, GWB_APPEND_MAX, n);
	fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOCTTY | O_CLOEXEC, 0666);
	if (fd < 0)
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_CLOEXEC, 0666);
	if (fd < 0)
		return gwb_error(GWB_EIO, "cannot append to %s: %s", path, strerror(errno));
	while (flock(fd, LOCK_EX) && errno == EINTR)
		;
	reg = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (reg) {
		size = st.st_size;
		cut_partial_line(fd, &size);
	}
	do
		k = write(fd, line, n);
	while (k < 0 && errno == EINTR);
	if (k != (ssize_t)n) {
		e = k < 0 ? errno : ENOSPC;   /* a short write: the disk or the size limit is full */
		if (reg && ftruncate(fd, size)) {
			/* nothing more to do: the next append cuts the partial line */
		}
	}
	if (close(fd) && !e)
		e = errno;   /* (closing releases the lock) */
	if (e)
		return gwb_error(GWB_EIO, "cannot append to %s: %s", path, strerror(e));
	return GWB_OK;
}

/* --- inputs: pipes, FIFOs and terminals read whole ------------------------------------------ */

/* Wait until fd (O_NONBLOCK) has bytes or its end, looking at Ctrl-C every 100 ms. */
static gwb_status wait_readable(int fd, const char *what, const char *path, bool started)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};

	for (;;) {
		int k = poll(&pf, 1, 100);
		if (k > 0)
			return GWB_OK;
		if (k < 0 && errno != EINTR)
			return gwb_error(GWB_EIO, "%s: cannot read %s: %s", what, path,
					 strerror(errno));
		if (gwb_intr_pending())
			return gwb_error(GWB_EINTR, started ? "%s: interrupted while reading %s"
						: "%s: interrupted while waiting for input on %s "
						  "(a FIFO waits for a writer)", what, path);
	}
}

static gwb_status copy_input(gwb_input *in, int fd, const char *path, const char *what)
{
	char *buf = malloc(1 << 16);
	bool started = false;
	size_t total = 0;
	int mfd;

	if (!buf)
		return gwb_error(GWB_ENOMEM, "%s: out of memory reading %s", what, path);
	mfd = memfd_create("gwb-input", MFD_CLOEXEC);
	if (mfd < 0) {
		free(buf);
		return gwb_error(GWB_EIO, "%s: cannot hold a copy of %s (memfd_create: %s); save it "
				 "to a file first", what, path, strerror(errno));
	}
	/* progress by the bytes read: the size is unknown until the end */
	gwb_progress_begin("read input", 0);
	for (;;) {
		ssize_t n, w;
		gwb_status st = wait_readable(fd, what, path, started);
		if (st) {
			gwb_progress_end();
			close(mfd);
			free(buf);
			return st;
		}
		n = read(fd, buf, 1 << 16);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			int e = errno;
			gwb_progress_end();
			close(mfd);
			free(buf);
			return gwb_error(GWB_EIO, "%s: cannot read %s: %s", what, path, strerror(e));
		}
		if (n == 0)
			break;
		started = true;
		total += (size_t)n;
		gwb_progress_update((double)total, NULL, 0);
		for (w = 0; w < n;) {
			ssize_t k = write(mfd, buf + w, (size_t)(n - w));
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0) {
				int e = errno;
				gwb_progress_end();
				close(mfd);
				free(buf);
				return gwb_error(GWB_EIO, "%s: cannot hold a copy of %s in memory: %s",
						 what, path, strerror(e));
			}
			w += k;
		}
	}
	gwb_progress_end();
	free(buf);
	in->fd = mfd;
	snprintf(in->copy_path, sizeof(in->copy_path), "/proc/self/fd/%d", mfd);
	in->path = in->copy_path;
	return GWB_OK;
}

gwb_status gwb_input_open(gwb_input *in, const char *path, const char *what)
{
	struct stat st;
	gwb_status rc;
	int fd;

	in->path = path;
	in->fd = -1;
	in->copy_path[0] = '\0';
	if (!strcmp(path, "-")) {
		/* stdin: a pipe or terminal is copied as any stream; a file given with < is read
		 * through /dev/stdin (the file again, from its start) */
		if (fstat(0, &st))
			return gwb_error(GWB_EIO, "%s: cannot read stdin: %s", what, strerror(errno));
		if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
			in->path = "/dev/stdin";
			return GWB_OK;
		}
		fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return gwb_error(GWB_EIO, "%s: cannot read stdin: %s", what, strerror(errno));
		rc = copy_input(in, fd, "stdin", what);
		close(fd);
		return rc;
	}
	/* O_NONBLOCK: opening a FIFO no process writes to returns at once (Ctrl-C can stop the
	 * wait that follows); a path that cannot be opened is the loader's to report */
	do
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return GWB_OK;
	if (fstat(fd, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode)) {
		close(fd);
		return GWB_OK;
	}
	rc = copy_input(in, fd, path, what);
	close(fd);
	return rc;
}

void gwb_input_close(gwb_input *in)
{
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
}
