/* status.h - one status enum shared by C and CUDA code, plus a per-thread message buffer.
 * Library code returns a gwb_status and never exits; detail (file:line:column, parameter,
 * bytes needed/free) goes into the message buffer, which the Lua layer turns into an error. */
#ifndef GWB_STATUS_H
#define GWB_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gwb_status {
	GWB_OK = 0,
	GWB_ENOMEM,   /* host or device allocation failed */
	GWB_EIO,      /* file could not be opened, read or written */
	GWB_EPARSE,   /* malformed input (CSV, Matrix Market, binary file) */
	GWB_EINVAL,   /* bad parameter */
	GWB_ECUDA,    /* a CUDA runtime or library call failed */
	GWB_ENODEV,   /* no usable GPU (CPU-only build, no driver, no device) */
	GWB_EINTR,    /* interrupted by the user (Ctrl-C) */
	GWB_ENOCONV,  /* an iterative method did not converge */
	GWB_ECORRUPT, /* a saved file failed its checksum or is truncated */
	GWB_STATUS_COUNT
} gwb_status;

/* Short English name of a status ("out of memory", ...). Never NULL. */
const char *gwb_status_str(gwb_status st);

/* Record a detail message for the calling thread and return st, so a caller can write
 * `return gwb_error(GWB_EINVAL, "trees must be >= 1 (got %d)", n);`. */
gwb_status gwb_error(gwb_status st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The calling thread's last detail message ("" if none). Valid until the next gwb_error. */
const char *gwb_errmsg(void);

/* Forget the calling thread's detail message. */
void gwb_error_clear(void);

#ifdef __cplusplus
}
#endif
#endif
