/* mpi.h - gwb across processes: the one file that calls MPI (mpi.c). Rank, size, host, and the
 * few collectives gwb needs, on bytes and doubles; every other file uses these and never
 * includes <mpi.h>. A build without MPI (make MPI=0, or no mpicc), and a gwb started without
 * mpirun, is one rank of one: the collectives copy or do nothing, so callers need no #ifdef.
 * Buffers returned to the caller are malloc'd; the caller frees them with free(). */
#ifndef GWB_MPI_H
#define GWB_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* True when MPI support is compiled in (GWB_HAVE_MPI). */
bool gwb_mpi_built(void);
/* True when the environment says a launcher started this process as a rank (Open MPI's
 * OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK, PMI's PMI_RANK), whether or not MPI is built in.
 * *size (may be NULL): the world size the launcher gives (0 when it does not say). */
bool gwb_mpi_launched(int *size);
/* Start MPI when launched by mpirun and built with it (MPI_Init_thread, funneled: only the
 * main thread calls MPI); otherwise nothing (one rank of one). GWB_EINVAL when launched with
 * more than one rank without MPI built in (the message says what to do). Idempotent. */
gwb_status gwb_mpi_start(int *argc, char ***argv);
/* MPI_Finalize when started (after a barrier-free shutdown; every rank calls it). */
void gwb_mpi_stop(void);
/* True once gwb_mpi_start started MPI (size may still be 1: mpirun -np 1). */
bool gwb_mpi_active(void);

int gwb_mpi_rank(void);
int gwb_mpi_size(void);
/* This rank's host name (MPI_Get_processor_name, else gethostname). */
const char *gwb_mpi_host(void);

gwb_status gwb_mpi_barrier(void);
/* Broadcast n bytes at buf from root to every rank (same n everywhere). */
gwb_status gwb_mpi_bcast(void *buf, size_t n, int root);
/* Broadcast a byte string whose length only root knows: root passes *buf and *n; the others
 * get a malloc'd copy in *buf (NULL when n is 0) and its length in *n. */
gwb_status gwb_mpi_bcast_bytes(void **buf, size_t *n, int root);
/* bcast_bytes for a rank that may wait long (the REPL's other ranks, waiting for a person to
 * type): it sleeps a millisecond between tests of the broadcast instead of spinning a core. */
gwb_status gwb_mpi_bcast_bytes_idle(void **buf, size_t *n, int root);
/* Gather every rank's n bytes (n may differ) to root (all = true: to every rank): *out gets
 * the concatenation in rank order (malloc'd; NULL on ranks that receive nothing, or when the
 * total is 0) and lens[r] (size entries, may be NULL) rank r's length. */
gwb_status gwb_mpi_gather(const void *buf, size_t n, int root, bool all, void **out,
			  size_t *lens);

/* Root sends rank r the lens[r] bytes at its offset in buf (root's buf and lens: size entries;
 * the others pass NULL); every rank gets its piece in a malloc'd *out (NULL when empty) and
 * its length in *n. */
gwb_status gwb_mpi_scatter(const void *buf, const size_t *lens, int root, void **out,
			   size_t *n);

typedef enum gwb_mpi_op {
	GWB_MPI_SUM,
	GWB_MPI_MIN,
	GWB_MPI_MAX,
	GWB_MPI_PROD,
} gwb_mpi_op;
/* Parse "sum", "min", "max", "prod". */
gwb_status gwb_mpi_op_parse(const char *s, gwb_mpi_op *op);
/* x[0..n) reduced element by element over the ranks, the result on every rank. */
gwb_status gwb_mpi_allreduce(double *x, size_t n, gwb_mpi_op op);

/* A neighbour exchange of doubles (the sparse solves' halo): each call moves, between this
 * rank and a few others, counts known on both sides. gwb_mpi_xchg_new makes the state for up to
 * `cap` sends and `cap` receives (the caller frees it with gwb_mpi_xchg_free); start posts the
 * receives and sends (non-blocking: the caller computes meanwhile and must not touch the buffers)
 * and wait completes them. ns sends of scnt[i] doubles at sbuf[i] to rank sto[i]; nr receives of
 * rcnt[i] doubles into rbuf[i] from rank rfrom[i]. Alone (one rank): nothing moves (the caller
 * has no neighbours). */
typedef struct gwb_mpi_xchg gwb_mpi_xchg;
gwb_status gwb_mpi_xchg_new(int cap, gwb_mpi_xchg **out);
void gwb_mpi_xchg_free(gwb_mpi_xchg *x);
gwb_status gwb_mpi_xchg_start(gwb_mpi_xchg *x, int ns, const int *sto, double *const *sbuf,
			      const size_t *scnt, int nr, const int *rfrom, double *const *rbuf,
			      const size_t *rcnt);
gwb_status gwb_mpi_xchg_wait(gwb_mpi_xchg *x);

/* The one exit for a failure every rank must see: print msg to stderr as
 * "gwb: rank R (host): msg" and MPI_Abort(code), which ends every rank of the job. Only the
 * front end calls it (library code returns a status). Without MPI running: nothing (returns). */
void gwb_mpi_abort(int code, const char *msg);

/* Bytes this rank sent and received through the collectives above since start (for
 * gwb.mpi.bytes() and the benchmarks: what a distributed call moved). */
void gwb_mpi_traffic(uint64_t *sent, uint64_t *received);

#ifdef __cplusplus
}
#endif
#endif
