/* fileio.h - the one atomic-save helper every writer uses: a unique temporary (O_EXCL) in the
 * folder of the file being replaced, written, flushed and fsync'ed, then renamed over it, so a
 * crash or kill at any instant leaves the old file or the new one, never a truncated one.
 * Targets that are not regular files (a pipe, a terminal, /dev/null, /proc/self/fd/N,
 * /dev/stdout, a memfd) are written in place instead. The gwb_afile is the caller's (on its
 * stack); commit or abort releases what it holds. The read side: gwb_input_open gives the
 * loaders (which open a path, sniff its first bytes, then read it) a seekable copy of a pipe,
 * FIFO, socket or terminal, so what they sniff is not lost. */
#ifndef GWB_FILEIO_H
#define GWB_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "status.h"

typedef struct gwb_afile {
	FILE *fp;       /* write through this (buffered)... */
	int fd;         /* ...or this (then leave fp alone): the temporary, or the target in place */
	char *target;   /* the path as the caller gave it (for messages) */
	char *tmp;      /* the temporary's name inside dirfd; NULL when writing in place */
	char *base;     /* the name the rename replaces inside dirfd (links followed) */
	int dirfd;      /* the folder holding base (the last link's target folder); -1 in place */
	bool inplace;   /* a non-regular target: written directly, no temporary, no rename */
	const char *what;  /* the caller's name for errors ("save", "write_csv") */
} gwb_afile;

/* Begin saving to path. A regular file (or a new name) is replaced atomically; a symlink is
 * followed by the kernel (the link stays, its target is replaced in the target's own folder;
 * the kernel's protected_symlinks rule applies); a character or block device, a FIFO, and any
 * file reached through a /proc magic link (/proc/self/fd/N, /dev/stdout, a memfd) is written
 * in place, a regular one among them truncated first. Refused (GWB_EIO, the message says why):
 * a directory, a socket, a folder that cannot hold a new file. The new file keeps the old
 * one's permission bits (a new one gets 0666 less the umask). Temporaries that an earlier save
 * of the same target left when its process was killed are removed. what names the operation
 * in messages. On error nothing is left behind and a needs no release. */
gwb_status gwb_afile_open(gwb_afile *a, const char *path, const char *what);

/* Write n bytes through fd in blocks, stopping with GWB_EINTR on Ctrl-C (gwb_intr_pending);
 * errors name the file. For writers that use fd; fp users write with stdio. */
gwb_status gwb_afile_write(gwb_afile *a, const void *p, size_t n);

/* Finish: flush fp, fsync, close, rename over the target, fsync the folder. An interrupt that
 * is pending (Ctrl-C during the save) or any failure aborts instead, leaving the old file (or
 * none) in place; the status says which. In place, the bytes are already there: commit
 * flushes and closes. a is released either way. */
gwb_status gwb_afile_commit(gwb_afile *a);

/* Give up: close and remove the temporary; the target is untouched (in place: what was
 * written stays). a is released. Safe on an afile that was already committed or aborted. */
void gwb_afile_abort(gwb_afile *a);

/* Save n bytes at p to path atomically (open + write + commit). */
gwb_status gwb_file_save(const char *path, const void *p, size_t n, const char *what);

/* The longest line gwb_file_append_line writes: one write() of at most PIPE_BUF bytes. */
#define GWB_APPEND_MAX 4096

/* Append one line (n bytes ending in '\n', at most GWB_APPEND_MAX) to path, created 0666 less
 * the umask when missing (its folder must exist), with one write() under an exclusive flock,
 * so concurrent appenders never interleave. An unfinished line that an earlier failed write
 * left at the end is cut off first, and a failed or short write (full disk, file-size limit)
 * is truncated back to the last whole line: the file only ever holds whole lines. GWB_EIO (or
 * GWB_EINVAL for a line too long or not ending in a newline), the message naming path. */
gwb_status gwb_file_append_line(const char *path, const char *line, size_t n);

/* An input a loader may open by path, sniff and read again. For a regular file (or a path
 * that cannot be opened: the loader reports that) path is the caller's own; a pipe, FIFO,
 * socket or character device (/dev/stdin, <(cmd), a named pipe) is read whole, in blocks
 * (Ctrl-C stops the wait for a FIFO's writer and the reading: GWB_EINTR), into an anonymous
 * memory file, and path is "/proc/self/fd/N" of that copy. Release with gwb_input_close. */
typedef struct gwb_input {
	const char *path;   /* what the loaders open: the caller's path or copy_path */
	int fd;             /* the copy (a memfd), or -1 */
	char copy_path[32];
} gwb_input;

/* Open path for the loaders (see gwb_input); what names the caller in messages. */
gwb_status gwb_input_open(gwb_input *in, const char *path, const char *what);

/* Release the copy (if any). Safe to call twice. */
void gwb_input_close(gwb_input *in);

#endif
