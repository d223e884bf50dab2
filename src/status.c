/* status.c - status names and the per-thread error message buffer. */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char errbuf[1024];

static const char *const names[GWB_STATUS_COUNT] = {
	[GWB_OK] = "ok",
	[GWB_ENOMEM] = "out of memory",
	[GWB_EIO] = "input/output error",
	[GWB_EPARSE] = "parse error",
	[GWB_EINVAL] = "invalid argument",
	[GWB_ECUDA] = "CUDA error",
	[GWB_ENODEV] = "no GPU available",
	[GWB_EINTR] = "interrupted",
	[GWB_ENOCONV] = "did not converge",
	[GWB_ECORRUPT] = "corrupt or truncated file",
};

const char *gwb_status_str(gwb_status st)
{
	if ((unsigned)st >= GWB_STATUS_COUNT)
		return "unknown status";
	return names[st];
}

gwb_status gwb_error(gwb_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return st;
}

const char *gwb_errmsg(void)
{
	return errbuf;
}

void gwb_error_clear(void)
{
	errbuf[0] = '\0';
}
