/* mgpu.c - the devices of this host, the gpus option's device sets, dealing and the runner. */
#include "mgpu.h"

#include "gpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GWB_HAVE_CUDA
gwb_status gwb_gpu_count(int *n)
{
	gwb_status rc;

	*n = 0;
	if ((rc = gwb_gpu_init()))
		return rc;
	if ((rc = CUDA_CHECK(cudaGetDeviceCount(n))))
		return rc;
	if (*n > GWB_GPU_MAX)
		*n = GWB_GPU_MAX;
	return GWB_OK;
}

gwb_status gwb_gpu_use(int dev)
{
	gwb_status rc;
	int n;

	if ((rc = gwb_gpu_count(&n)))
		return rc;
	if (dev < 0 || dev >= n)
		return gwb_error(GWB_EINVAL, "GPU %d does not exist (this machine has %d)", dev, n);
	if ((rc = CUDA_CHECK(cudaSetDevice(dev))))
		return rc;
	gwb_gpu_set_current(dev);
	return GWB_OK;
}

gwb_status gwb_gpu_dev_get(int dev, gwb_gpu_dev *out)
{
	struct cudaDeviceProp p;
	int prev = gwb_gpu_current(), n;
	gwb_status rc;

	memset(out, 0, sizeof(*out));
	if ((rc = gwb_gpu_count(&n)))
		return rc;
	if (dev < 0 || dev >= n)
		return gwb_error(GWB_EINVAL, "GPU %d does not exist (this machine has %d)", dev, n);
	if ((rc = CUDA_CHECK(cudaGetDeviceProperties(&p, dev))))
		return rc;
	out->index = dev;
	snprintf(out->name, sizeof(out->name), "%s", p.name);
	out->mem_total = p.totalGlobalMem;
	out->sms = p.multiProcessorCount;
	if (cudaDeviceGetPCIBusId(out->pci, (int)sizeof(out->pci), dev) != cudaSuccess)
		snprintf(out->pci, sizeof(out->pci), "?");
	/* free memory is a question to that device's context */
	if (!(rc = gwb_gpu_use(dev))) {
		size_t fr = 0, tot = 0;
		if (cudaMemGetInfo(&fr, &tot) == cudaSuccess)
			out->mem_free = fr;
	}
	cudaGetLastError();
	gwb_gpu_use(prev);
	return rc;
}

bool gwb_gpu_can_peer(int a, int b)
{
	int n = 0, ok = 0;

	if (a == b || gwb_gpu_count(&n) || a < 0 || b < 0 || a >= n || b >= n)
		return false;
	if (cudaDeviceCanAccessPeer(&ok, a, b) != cudaSuccess) {
		cudaGetLastError();
		return false;
	}
	return ok != 0;
}
#else
gwb_status gwb_gpu_count(int *n)
{
	*n = 0;
	return gwb_gpu_init();
}

gwb_status gwb_gpu_use(int dev)
{
	(void)dev;
	return gwb_gpu_init();
}

gwb_status gwb_gpu_dev_get(int dev, gwb_gpu_dev *out)
{
	(void)dev;
	memset(out, 0, sizeof(*out));
	return gwb_gpu_init();
}

bool gwb_gpu_can_peer(int a, int b)
{
	(void)a;
	(void)b;
	return false;
}
#endif

void gwb_gpu_set_default(gwb_gpu_set *s)
{
	memset(s, 0, sizeof(*s));
	s->n = 1;
}

/* "2 devices (0 NVIDIA H200, 1 NVIDIA H200)", "no devices" */
static void avail_str(char *buf, size_t n, int avail, const char *const *names)
{
	size_t len;
	int i;

	if (avail > 0)
		snprintf(buf, n, "%d device%s", avail, avail == 1 ? "" : "s");
	else
		snprintf(buf, n, "no devices");
	len = strlen(buf);
	for (i = 0; i < avail && len + 8 < n; i++) {
		int w = snprintf(buf + len, n - len, "%s%d%s%s", i ? ", " : " (", i,
				 names && names[i] ? " " : "", names && names[i] ? names[i] : "");
		if (w < 0)
			break;
		len += (size_t)w < n - len ? (size_t)w : n - len - 1;
	}
	if (avail > 0 && len + 2 < n)
		snprintf(buf + len, n - len, ")");
}

gwb_status gwb_gpu_set_check(const char *fn, long count, const long *ids, int nids, int avail,
			     const char *const *names, gwb_gpu_set *out)
{
	char have[512];
	int i, j;

	gwb_gpu_set_default(out);
	avail_str(have, sizeof(have), avail, names);
	if (!ids) {
		if (count < 1)
			return gwb_error(GWB_EINVAL, "%s: gpus must be a device count >= 1 or a list of "
					 "device ids (got %ld); this machine has %s; use gpus = 1 (the "
					 "default) or up to %d", fn, count, have, avail > 0 ? avail : 1);
		if (count > avail)
			return gwb_error(GWB_EINVAL, "%s: gpus = %ld, but this machine has %s%s; "
					 "use gpus = %d or fewer (gwb.gpus() lists them)", fn, count,
					 avail ? "only " : "", have, avail > 0 ? avail : 1);
		if (count > GWB_GPU_MAX)
			return gwb_error(GWB_EINVAL, "%s: gpus = %ld: gwb drives at most %d devices",
					 fn, count, GWB_GPU_MAX);
		out->n = (int)count;
		for (i = 0; i < out->n; i++)
			out->ids[i] = i;
		return GWB_OK;
	}
	if (nids < 1)
		return gwb_error(GWB_EINVAL, "%s: gpus = {} lists no device; this machine has %s; give a "
				 "count (gpus = 1) or ids such as {0}", fn, have);
	if (nids > GWB_GPU_MAX)
		return gwb_error(GWB_EINVAL, "%s: gpus lists %d devices: gwb drives at most %d", fn,
				 nids, GWB_GPU_MAX);
	for (i = 0; i < nids; i++) {
		if (ids[i] < 0 || ids[i] >= avail)
			return gwb_error(GWB_EINVAL, "%s: gpus[%d] = %ld is not a device here: this "
					 "machine has %s, ids 0 to %d (gwb.gpus() lists them)", fn, i + 1,
					 ids[i], have, avail - 1);
		for (j = 0; j < i; j++)
			if (ids[j] == ids[i])
				return gwb_error(GWB_EINVAL, "%s: gpus lists device %ld twice (entries %d "
						 "and %d); name each device once", fn, ids[i], j + 1,
						 i + 1);
		out->ids[i] = (int)ids[i];
	}
	out->n = nids;
	return GWB_OK;
}

/* What is wrong with a request whatever the machine (no GPU here to compare with). */
static gwb_status shape_check(const char *fn, long count, const long *ids, int nids)
{
	int i, j;

	if (!ids && count < 1)
		return gwb_error(GWB_EINVAL, "%s: gpus must be a device count >= 1 or a list of "
				 "device ids (got %ld); use gpus = 1 (the default)", fn, count);
	if (ids && nids < 1)
		return gwb_error(GWB_EINVAL, "%s: gpus = {} lists no device; give a count (gpus = 1) "
				 "or ids such as {0}", fn);
	for (i = 0; ids && i < nids && i < GWB_GPU_MAX; i++) {
		if (ids[i] < 0)
			return gwb_error(GWB_EINVAL, "%s: gpus[%d] = %ld is not a device id (ids start "
					 "at 0; gwb.gpus() lists them)", fn, i + 1, ids[i]);
		for (j = 0; j < i; j++)
			if (ids[j] == ids[i])
				return gwb_error(GWB_EINVAL, "%s: gpus lists device %ld twice (entries %d "
						 "and %d); name each device once", fn, ids[i], j + 1,
						 i + 1);
	}
	return GWB_OK;
}

gwb_status gwb_gpu_set_resolve(const char *fn, long count, const long *ids, int nids,
			       gwb_gpu_set *out)
{
	gwb_gpu_dev dv[GWB_GPU_MAX];
	const char *names[GWB_GPU_MAX] = {0};
	gwb_status rc;
	int n = 0, i;

	gwb_gpu_set_default(out);
	if (!gwb_gpu_available()) {
		if ((rc = shape_check(fn, count, ids, nids)))
			return rc;
		if ((!ids && count == 1) || (ids && nids == 1 && ids[0] == 0))
			return GWB_OK;  /* the default: means "as today" everywhere */
		return gwb_error(GWB_ENODEV, "%s: gpus applies to GPU backends, and there is no GPU "
				 "here: %s; drop gpus (or use gpus = 1)", fn,
				 gwb_gpu_unavailable_reason());
	}
	if ((rc = gwb_gpu_count(&n)))
		return rc;
	if (!gwb_gpu_set_check(fn, count, ids, nids, n, NULL, out))
		return GWB_OK;  /* valid: no device is asked anything (no context made) */
	for (i = 0; i < n; i++) {  /* the message names the devices */
		names[i] = NULL;
		if (!gwb_gpu_dev_get(i, &dv[i]))
			names[i] = dv[i].name;
	}
	gwb_error_clear();
	return gwb_gpu_set_check(fn, count, ids, nids, n, names, out);
}

void gwb_gpu_set_str(const gwb_gpu_set *s, char *buf, size_t n)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	if (s->cpu && n > 4)
		len = (size_t)snprintf(buf, n, "cpu:");
	for (i = 0; i < s->n && len + 4 < n; i++) {
		int w = snprintf(buf + len, n - len, "%s%d", i ? "," : "", s->ids[i]);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

void gwb_deal(size_t total, int n, int slot, size_t *lo, size_t *hi)
{
	size_t q, r, k;

	if (n < 1)
		n = 1;
	q = total / (size_t)n;
	r = total % (size_t)n;
	k = (size_t)slot;
	*lo = k * q + (k < r ? k : r);
	*hi = *lo + q + (k < r ? 1 : 0);
}

/* --- the runner ------------------------------------------------------------------------------ */

typedef struct run_slot {
	const gwb_gpu_set *s;
	gwb_gpu_work_fn fn;
	void *ctx;
	int slot;
	gwb_status rc;
	char msg[1024];
} run_slot;

static gwb_status enter(const gwb_gpu_set *s, int dev)
{
	if (s->cpu) {
		gwb_gpu_set_current(dev);
		return GWB_OK;
	}
	return gwb_gpu_use(dev);
}

static void *slot_main(void *a)
{
	run_slot *r = a;
	int dev = r->s->ids[r->slot];

	r->rc = enter(r->s, dev);
	if (!r->rc)
		r->rc = r->fn(r->ctx, r->slot, dev);
	if (r->rc)
		snprintf(r->msg, sizeof(r->msg), "%s", gwb_errmsg());
	return NULL;
}

gwb_status gwb_gpu_run(const gwb_gpu_set *s, gwb_gpu_work_fn fn, void *ctx)
{
	run_slot slots[GWB_GPU_MAX];
	pthread_t th[GWB_GPU_MAX];
	bool started[GWB_GPU_MAX];
	gwb_status rc = GWB_OK;
	int i, prev = gwb_gpu_current();

	if (s->n < 1 || s->n > GWB_GPU_MAX)
		return gwb_error(GWB_EINVAL, "internal: a device set of %d devices", s->n);
	if (s->n == 1) {
		/* one device: on the calling thread (no thread, no switch for device 0) */
		int dev = s->ids[0];
		if (dev != prev && (rc = enter(s, dev)))
			return rc;
		rc = fn(ctx, 0, dev);
		if (dev != prev) {
			if (s->cpu)
				gwb_gpu_set_current(prev);
			else
				gwb_gpu_use(prev);
		}
		return rc;
	}
	/* One host thread of its own per device, not the pool: each is made current on its
	 * device for the whole call (the pool's workers keep device 0 and run parallel loops
	 * inside fn). */
	for (i = 0; i < s->n; i++) {
		slots[i] = (run_slot){.s = s, .fn = fn, .ctx = ctx, .slot = i};
		started[i] = pthread_create(&th[i], NULL, slot_main, &slots[i]) == 0;
		if (!started[i]) {
			slots[i].rc = GWB_ENOMEM;
			snprintf(slots[i].msg, sizeof(slots[i].msg), "could not start the host thread "
				 "for device %d", s->ids[i]);
		}
	}
	for (i = 0; i < s->n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	for (i = 0; i < s->n; i++)
		if (slots[i].rc) {
			/* Ctrl-C first: it stops every device, and is what the user did */
			int j, pick = i;
			for (j = i; j < s->n; j++)
				if (slots[j].rc == GWB_EINTR) {
					pick = j;
					break;
				}
			return gwb_error(slots[pick].rc, "%s", slots[pick].msg);
		}
	return GWB_OK;
}
