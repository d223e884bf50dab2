/* fileio.h - the one atomic-save helper every writer uses: a unique temporary in the target's
 * folder (mkstemp), written, flushed and fsync'ed, then renamed over the target, so a crash or
 * kill at any instant leaves the old file or the new one, never a truncated one.
 * The gwb_afile is the caller's (on its stack); commit or abort releases what it holds. */
#ifndef GWB_FILEIO_H
#define GWB_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "status.h"

typedef struct gwb_afile {
	FILE *fp;       /* write through this (buffered)... */
	int fd;         /* ...or this (then leave fp alone); both are the temporary */
	char *target;   /* the file the rename replaces: path, or a symlink's final target */
	char *tmp;      /* the temporary's path */
	const char *what;  /* the caller's name for errors ("save", "write_csv") */
} gwb_afile;

/* Begin saving to path. Refused (GWB_EIO, the message says why): a path that exists and is not
 * a regular file (a directory, a device node, a FIFO), a folder that cannot hold a new file. A
 * symlink is written through: the link stays, its target is replaced. The new file keeps the
 * old one's permission bits (a new one gets 0666 less the umask). Temporaries that an earlier
 * save of the same target left when its process was killed are removed. what names the
 * operation in messages. On error nothing is left behind and a needs no release. */
gwb_status gwb_afile_open(gwb_afile *a, const char *path, const char *what);

/* Write n bytes through fd in blocks, stopping with GWB_EINTR on Ctrl-C (gwb_intr_pending);
 * errors name the file. For writers that use fd; fp users write with stdio. */
gwb_status gwb_afile_write(gwb_afile *a, const void *p, size_t n);

/* Finish: flush fp, fsync, close, rename over the target, fsync the folder. An interrupt that
 * is pending (Ctrl-C during the save) or any failure aborts instead, leaving the old file (or
 * none) in place; the status says which. a is released either way. */
gwb_status gwb_afile_commit(gwb_afile *a);

/* Give up: close and remove the temporary; the target is untouched. a is released. Safe on
 * an afile that was already committed or aborted. */
void gwb_afile_abort(gwb_afile *a);

/* Save n bytes at p to path atomically (open + write + commit). */
gwb_status gwb_file_save(const char *path, const void *p, size_t n, const char *what);

#endif
