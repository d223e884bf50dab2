/* mpi.c - the only file that calls MPI (mpi.h). Collectives on bytes move in pieces of at most
 * 1 GiB (MPI counts are ints); gathers go through point-to-point messages to the root, in rank
 * order, so any total size works. Without GWB_HAVE_MPI, or before gwb_mpi_start, every
 * function is the one-rank case. */
#define _GNU_SOURCE
#include "mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef GWB_HAVE_MPI
#include <mpi.h>
#endif

#define PIECE ((size_t)1 << 30)
#define TAG_GATHER 0x6757

static int g_rank, g_size = 1, g_active;
static char g_host[256];
static uint64_t g_sent, g_recv;

bool gwb_mpi_built(void)
{
#ifdef GWB_HAVE_MPI
	return true;
#else
	return false;
#endif
}

bool gwb_mpi_launched(int *size)
{
	const char *s = getenv("OMPI_COMM_WORLD_SIZE");
	bool yes = s || getenv("PMIX_RANK") || getenv("PMI_RANK");

	if (size)
		*size = s ? atoi(s) : (getenv("PMI_SIZE") ? atoi(getenv("PMI_SIZE")) : 0);
	return yes;
}

static void host_init(void)
{
	if (!g_host[0] && gethostname(g_host, sizeof(g_host) - 1) != 0)
		snprintf(g_host, sizeof(g_host), "?");
}

gwb_status gwb_mpi_start(int *argc, char ***argv)
{
	int n = 0;

	host_init();
	if (g_active || !gwb_mpi_launched(&n))
		return GWB_OK;
#ifdef GWB_HAVE_MPI
	{
		int provided, len = 0, inited = 0;
		char name[MPI_MAX_PROCESSOR_NAME];

		MPI_Initialized(&inited);
		if (!inited && MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
		    MPI_SUCCESS)
			return gwb_error(GWB_EIO, "MPI_Init failed: mpirun started gwb, but MPI "
					 "could not start; check the launcher's messages above");
		/* errors come back as return codes; a rank that dies still ends the job (mpirun) */
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
		MPI_Comm_size(MPI_COMM_WORLD, &g_size);
		if (MPI_Get_processor_name(name, &len) == MPI_SUCCESS && len > 0)
			snprintf(g_host, sizeof(g_host), "%.*s", len, name);
		g_active = 1;
	}
	return GWB_OK;
#else
	(void)argc;
	(void)argv;
	if (n == 1)
		return GWB_OK;  /* mpirun -np 1: one process is what it asked for */
	return gwb_error(GWB_EINVAL, "started by mpirun (%d ranks), but this gwb was built "
			 "without MPI support: install libopenmpi-dev (scripts/install-deps) and "
			 "rebuild (make MPI=1), or run gwb without mpirun", n);
#endif
}

void gwb_mpi_stop(void)
{
#ifdef GWB_HAVE_MPI
	if (g_active) {
		int fin = 0;
		MPI_Finalized(&fin);
		if (!fin)
			MPI_Finalize();
		g_active = 0;
	}
#endif
}

bool gwb_mpi_active(void) { return g_active != 0; }
int gwb_mpi_rank(void) { return g_rank; }
int gwb_mpi_size(void) { return g_size; }

const char *gwb_mpi_host(void)
{
	host_init();
	return g_host;
}

void gwb_mpi_traffic(uint64_t *sent, uint64_t *received)
{
	if (sent)
		*sent = g_sent;
	if (received)
		*received = g_recv;
}

#ifdef GWB_HAVE_MPI
static gwb_status fail(int err, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(err, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof(msg), "error %d", err);
	return gwb_error(GWB_EIO, "%s failed on rank %d (%s): %s", what, g_rank, g_host, msg);
}
#endif

gwb_status gwb_mpi_barrier(void)
{
#ifdef GWB_HAVE_MPI
	int err;
	if (g_active && g_size > 1 && (err = MPI_Barrier(MPI_COMM_WORLD)))
		return fail(err, "MPI_Barrier");
#endif
	return GWB_OK;
}

gwb_status gwb_mpi_bcast(void *buf, size_t n, int root)
{
	if (root < 0 || root >= g_size)
		return gwb_error(GWB_EINVAL, "bcast: root %d is not a rank (0..%d)", root,
				 g_size - 1);
#ifdef GWB_HAVE_MPI
	if (g_active && g_size > 1) {
		size_t at;
		int err;
		for (at = 0; at < n; at += PIECE) {
			size_t m = n - at < PIECE ? n - at : PIECE;
			if ((err = MPI_Bcast((char *)buf + at, (int)m, MPI_BYTE, root,
					     MPI_COMM_WORLD)))
				return fail(err, "MPI_Bcast");
		}
		if (g_rank == root)
			g_sent += (uint64_t)n * (uint64_t)(g_size - 1);
		else
			g_recv += n;
	}
#else
	(void)buf;
	(void)n;
#endif
	return GWB_OK;
}

gwb_status gwb_mpi_bcast_bytes(void **buf, size_t *n, int root)
{
	uint64_t len = g_rank == root ? (uint64_t)*n : 0;
	gwb_status st;

	if ((st = gwb_mpi_bcast(&len, sizeof(len), root)))
		return st;
	if (g_rank == root)
		return len ? gwb_mpi_bcast(*buf, (size_t)len, root) : GWB_OK;
	*buf = NULL;
	*n = (size_t)len;
	if (!len)
		return GWB_OK;
	if (!(*buf = malloc((size_t)len)))
		return gwb_error(GWB_ENOMEM, "bcast: out of host memory for %llu bytes on rank %d",
				 (unsigned long long)len, g_rank);
	if ((st = gwb_mpi_bcast(*buf, (size_t)len, root))) {
		free(*buf);
		*buf = NULL;
	}
	return st;
}

gwb_status gwb_mpi_bcast_bytes_idle(void **buf, size_t *n, int root)
{
#ifdef GWB_HAVE_MPI
	if (g_active && g_size > 1 && g_rank != root) {
		uint64_t len = 0;
		MPI_Request req;
		int err, done = 0;
		struct timespec ms = {0, 1000000};
		if ((err = MPI_Ibcast(&len, 1, MPI_UINT64_T, root, MPI_COMM_WORLD, &req)))
			return fail(err, "MPI_Ibcast");
		while (!done) {
			if ((err = MPI_Test(&req, &done, MPI_STATUS_IGNORE)))
				return fail(err, "MPI_Test");
			if (!done)
				nanosleep(&ms, NULL);
		}
		*buf = NULL;
		*n = (size_t)len;
		if (!len)
			return GWB_OK;
		if (!(*buf = malloc((size_t)len)))
			return gwb_error(GWB_ENOMEM, "bcast: out of host memory for %llu bytes on "
					 "rank %d", (unsigned long long)len, g_rank);
		return gwb_mpi_bcast(*buf, (size_t)len, root);
	}
	if (g_active && g_size > 1) {  /* the root: its length as the others' Ibcast expects */
		uint64_t len = *n;
		MPI_Request req;
		int err;
		if ((err = MPI_Ibcast(&len, 1, MPI_UINT64_T, root, MPI_COMM_WORLD, &req)) ||
		    (err = MPI_Wait(&req, MPI_STATUS_IGNORE)))
			return fail(err, "MPI_Ibcast");
		return len ? gwb_mpi_bcast(*buf, (size_t)len, root) : GWB_OK;
	}
#endif
	return gwb_mpi_bcast_bytes(buf, n, root);
}

gwb_status gwb_mpi_gather(const void *buf, size_t n, int root, bool all, void **out,
			  size_t *lens)
{
	uint64_t *len = NULL, total = 0;
	char *dst = NULL;
	gwb_status st = GWB_OK;
	int r;

	*out = NULL;
	if (root < 0 || root >= g_size)
		return gwb_error(GWB_EINVAL, "gather: root %d is not a rank (0..%d)", root,
				 g_size - 1);
	if (!(len = calloc((size_t)g_size, sizeof(*len))))
		return gwb_error(GWB_ENOMEM, "gather: out of host memory");
	len[g_rank] = n;
#ifdef GWB_HAVE_MPI
	if (g_active && g_size > 1) {
		uint64_t mine = n;
		int err = MPI_Allgather(&mine, 1, MPI_UINT64_T, len, 1, MPI_UINT64_T,
					MPI_COMM_WORLD);
		if (err) {
			st = fail(err, "MPI_Allgather");
			goto out_free_len;
		}
	}
#endif
	for (r = 0; r < g_size; r++)
		total += len[r];
	if (lens)
		for (r = 0; r < g_size; r++)
			lens[r] = (size_t)len[r];
	if (total && (g_rank == root || all) && !(dst = malloc((size_t)total))) {
		st = gwb_error(GWB_ENOMEM, "gather: out of host memory for %llu bytes on rank %d",
			       (unsigned long long)total, g_rank);
		goto out_free_len;  /* the others then fail or wait: the front end aborts */
	}
	if (g_size == 1 || !g_active) {
		if (n)
			memcpy(dst, buf, n);
		goto out_done;
	}
#ifdef GWB_HAVE_MPI
	if (g_rank == root) {
		uint64_t at = 0;
		for (r = 0; r < g_size; r++) {
			size_t k;
			if (r == root) {
				if (n)
					memcpy(dst + at, buf, n);
			} else {
				for (k = 0; k < len[r]; k += PIECE) {
					size_t m = len[r] - k < PIECE ? len[r] - k : PIECE;
					int err = MPI_Recv(dst + at + k, (int)m, MPI_BYTE, r, TAG_GATHER,
							   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					if (err) {
						st = fail(err, "MPI_Recv (gather)");
						goto out_free_dst;
					}
				}
				g_recv += len[r];
			}
			at += len[r];
		}
	} else {
		size_t k;
		for (k = 0; k < n; k += PIECE) {
			size_t m = n - k < PIECE ? n - k : PIECE;
			int err = MPI_Send((const char *)buf + k, (int)m, MPI_BYTE, root, TAG_GATHER,
					   MPI_COMM_WORLD);
			if (err) {
				st = fail(err, "MPI_Send (gather)");
				goto out_free_dst;
			}
		}
		g_sent += n;
	}
	if (all && total && (st = gwb_mpi_bcast(dst, (size_t)total, root)))
		goto out_free_dst;
#endif
out_done:
	*out = dst;
	dst = NULL;
#ifdef GWB_HAVE_MPI
out_free_dst:
#endif
	free(dst);
out_free_len:
	free(len);
	return st;
}

gwb_status gwb_mpi_scatter(const void *buf, const size_t *lens, int root, void **out,
			   size_t *n)
{
	uint64_t len = 0;
	size_t at = 0;
	char *dst = NULL;
	int r;

	*out = NULL;
	*n = 0;
	if (root < 0 || root >= g_size)
		return gwb_error(GWB_EINVAL, "scatter: root %d is not a rank (0..%d)", root,
				 g_size - 1);
	if (g_rank == root) {
		for (r = 0; r < g_rank; r++)
			at += lens[r];
		len = lens[g_rank];
		if (len && !(dst = malloc((size_t)len)))
			return gwb_error(GWB_ENOMEM, "scatter: out of host memory");
		if (len)
			memcpy(dst, (const char *)buf + at, (size_t)len);
	}
#ifdef GWB_HAVE_MPI
	if (g_active && g_size > 1) {
		size_t k;
		int err;
		if (g_rank == root) {
			at = 0;
			for (r = 0; r < g_size; r++) {
				uint64_t m = lens[r];
				if (r != root) {
					if ((err = MPI_Send(&m, 1, MPI_UINT64_T, r, TAG_GATHER,
							    MPI_COMM_WORLD)))
						goto fail;
					for (k = 0; k < m; k += PIECE) {
						size_t p = m - k < PIECE ? m - k : PIECE;
						if ((err = MPI_Send((const char *)buf + at + k, (int)p,
								    MPI_BYTE, r, TAG_GATHER,
								    MPI_COMM_WORLD)))
							goto fail;
					}
					g_sent += m;
				}
				at += m;
			}
		} else {
			if ((err = MPI_Recv(&len, 1, MPI_UINT64_T, root, TAG_GATHER, MPI_COMM_WORLD,
					    MPI_STATUS_IGNORE)))
				goto fail;
			if (len && !(dst = malloc((size_t)len)))
				return gwb_error(GWB_ENOMEM, "scatter: out of host memory for %llu "
						 "bytes on rank %d", (unsigned long long)len, g_rank);
			for (k = 0; k < len; k += PIECE) {
				size_t p = len - k < PIECE ? len - k : PIECE;
				if ((err = MPI_Recv(dst + k, (int)p, MPI_BYTE, root, TAG_GATHER,
						    MPI_COMM_WORLD, MPI_STATUS_IGNORE)))
					goto fail;
			}
			g_recv += len;
		}
		goto done;
fail:
		free(dst);
		return fail(err, "scatter");
	}
done:
#endif
	*out = dst;
	*n = (size_t)len;
	return GWB_OK;
}

gwb_status gwb_mpi_op_parse(const char *s, gwb_mpi_op *op)
{
	static const char *const names[] = {"sum", "min", "max", "prod"};
	int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*op = (gwb_mpi_op)i;
			return GWB_OK;
		}
	return gwb_error(GWB_EINVAL, "allreduce: op must be \"sum\", \"min\", \"max\" or "
			 "\"prod\" (got \"%s\")", s);
}

gwb_status gwb_mpi_allreduce(double *x, size_t n, gwb_mpi_op op)
{
#ifdef GWB_HAVE_MPI
	if (g_active && g_size > 1 && n) {
		MPI_Op mop = op == GWB_MPI_MIN ? MPI_MIN : op == GWB_MPI_MAX ? MPI_MAX :
			     op == GWB_MPI_PROD ? MPI_PROD : MPI_SUM;
		size_t at, piece = PIECE / sizeof(double);
		int err;
		for (at = 0; at < n; at += piece) {
			size_t m = n - at < piece ? n - at : piece;
			if ((err = MPI_Allreduce(MPI_IN_PLACE, x + at, (int)m, MPI_DOUBLE, mop,
						 MPI_COMM_WORLD)))
				return fail(err, "MPI_Allreduce");
		}
		g_sent += n * sizeof(double);
		g_recv += n * sizeof(double);
	}
#else
	(void)x;
	(void)n;
	(void)op;
#endif
	return GWB_OK;
}

#define TAG_XCHG 0x6758

struct gwb_mpi_xchg {
	int cap, nreq;
#ifdef GWB_HAVE_MPI
	MPI_Request *req;
#endif
};

gwb_status gwb_mpi_xchg_new(int cap, gwb_mpi_xchg **out)
{
	gwb_mpi_xchg *x = calloc(1, sizeof(*x));

	*out = NULL;
	if (!x)
		return gwb_error(GWB_ENOMEM, "exchange: out of host memory");
	x->cap = cap > 0 ? cap : 1;
#ifdef GWB_HAVE_MPI
	if (!(x->req = calloc((size_t)2 * x->cap, sizeof(MPI_Request)))) {
		free(x);
		return gwb_error(GWB_ENOMEM, "exchange: out of host memory");
	}
#endif
	*out = x;
	return GWB_OK;
}

void gwb_mpi_xchg_free(gwb_mpi_xchg *x)
{
	if (!x)
		return;
#ifdef GWB_HAVE_MPI
	free(x->req);
#endif
	free(x);
}

gwb_status gwb_mpi_xchg_start(gwb_mpi_xchg *x, int ns, const int *sto, double *const *sbuf,
			      const size_t *scnt, int nr, const int *rfrom, double *const *rbuf,
			      const size_t *rcnt)
{
	if (ns > x->cap || nr > x->cap || x->nreq)
		return gwb_error(GWB_EINVAL, "exchange: %d sends and %d receives for a state of %d "
				 "(or one still in flight)", ns, nr, x->cap);
#ifdef GWB_HAVE_MPI
	if (g_active && g_size > 1) {
		int err, i;
		for (i = 0; i < nr; i++) {
			if (rcnt[i] > (size_t)INT32_MAX)
				return gwb_error(GWB_EINVAL, "exchange: %zu doubles in one message "
						 "(at most 2^31 - 1)", rcnt[i]);
			if ((err = MPI_Irecv(rbuf[i], (int)rcnt[i], MPI_DOUBLE, rfrom[i], TAG_XCHG,
					     MPI_COMM_WORLD, &x->req[x->nreq])))
				return fail(err, "MPI_Irecv (exchange)");
			x->nreq++;
			g_recv += rcnt[i] * sizeof(double);
		}
		for (i = 0; i < ns; i++) {
			if (scnt[i] > (size_t)INT32_MAX)
				return gwb_error(GWB_EINVAL, "exchange: %zu doubles in one message "
						 "(at most 2^31 - 1)", scnt[i]);
			if ((err = MPI_Isend(sbuf[i], (int)scnt[i], MPI_DOUBLE, sto[i], TAG_XCHG,
					     MPI_COMM_WORLD, &x->req[x->nreq])))
				return fail(err, "MPI_Isend (exchange)");
			x->nreq++;
			g_sent += scnt[i] * sizeof(double);
		}
		return GWB_OK;
	}
#endif
	(void)sto;
	(void)sbuf;
	(void)scnt;
	(void)rfrom;
	(void)rbuf;
	(void)rcnt;
	if (ns || nr)
		return gwb_error(GWB_EINVAL, "exchange: %d sends and %d receives in a job of one rank",
				 ns, nr);
	return GWB_OK;
}

gwb_status gwb_mpi_xchg_wait(gwb_mpi_xchg *x)
{
#ifdef GWB_HAVE_MPI
	if (x->nreq) {
		int err = MPI_Waitall(x->nreq, x->req, MPI_STATUSES_IGNORE);
		x->nreq = 0;
		if (err)
			return fail(err, "MPI_Waitall (exchange)");
	}
#else
	(void)x;
#endif
	return GWB_OK;
}

void gwb_mpi_abort(int code, const char *msg)
{
	if (msg)
		fprintf(stderr, "gwb: rank %d (%s): %s\n", g_rank, gwb_mpi_host(), msg);
	fflush(stderr);
	fflush(stdout);
#ifdef GWB_HAVE_MPI
	if (g_active)
		MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
#else
	(void)code;
#endif
}
