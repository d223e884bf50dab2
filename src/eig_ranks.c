/* eig_ranks.c - eig.batched on the ranks of an MPI job (eig.h gwb_eig_batched_ranks): the
 * matrices dealt to the ranks in contiguous ranges in order (gwb_deal, as eig_batched.c deals
 * them to devices), each rank solving a host view of its range with gwb_eig_batched, and the
 * values, residuals and vectors (when kept) gathered on every rank in matrix order. Each
 * matrix is solved by the same code on the same data as in one process, so the values are
 * those of one process (the tests hold them to 1e-10). Times are the slowest rank's. */
#define _GNU_SOURCE
#include "eig.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"
#include "intr.h"
#include "mgpu.h"
#include "mpi.h"

/* One array of the result, `per` doubles a matrix, gathered from every rank's range into dst
 * (count * per doubles). */
static gwb_status gather_doubles(const double *mine, size_t n_mine, double *dst, size_t total)
{
	double *all = NULL;
	size_t *lens, got = 0;
	int r, size = gwb_mpi_size();
	gwb_status st;

	if (!(lens = calloc((size_t)size, sizeof(*lens))))
		return gwb_error(GWB_ENOMEM, "eig.batched: out of host memory");
	st = gwb_mpi_gather(mine, n_mine * sizeof(double), 0, true, (void **)&all, lens);
	for (r = 0; !st && r < size; r++)
		got += lens[r];
	if (!st && got != total * sizeof(double))
		st = gwb_error(GWB_EINVAL, "eig.batched: the ranks sent %zu bytes of results where "
			       "%zu were expected (ranks given different batches?)", got,
			       total * sizeof(double));
	if (!st && total)
		memcpy(dst, all, total * sizeof(double));
	free(all);
	free(lens);
	return st;
}

gwb_status gwb_eig_batched_ranks(const gwb_matrix *B, const gwb_dense_opts *o, gwb_eigen **out)
{
	size_t lo, hi, n = B->rows, es = gwb_dtype_size(B->dtype);
	double t0 = gwb_now(), sums[3], mx[4];
	gwb_matrix view;
	gwb_eigen *part = NULL, *e = NULL;
	gwb_status st;
	bool vec = o->vectors;

	*out = NULL;
	if (gwb_mpi_size() < 2)
		return gwb_eig_batched(B, o, out);
	/* the same batch everywhere: count, order and the elements' checksum */
	{
		uint64_t sum = 0;
		double me[3], lo3[3], hi3[3];
		if ((st = gwb_matrix_host(B)))
			return st;
		gwb_matrix_checksum((gwb_matrix *)B, &sum);  /* cached in the matrix */
		me[0] = (double)B->count;
		me[1] = (double)n;
		me[2] = (double)(sum >> 11);  /* 53 bits: exact in a double */
		memcpy(lo3, me, sizeof(me));
		memcpy(hi3, me, sizeof(me));
		if ((st = gwb_mpi_allreduce(lo3, 3, GWB_MPI_MIN)) ||
		    (st = gwb_mpi_allreduce(hi3, 3, GWB_MPI_MAX)))
			return st;
		if (memcmp(lo3, hi3, sizeof(lo3)))
			return gwb_error(GWB_EINVAL, "eig.batched: the ranks hold different batches "
					 "(rank %d (%s): %zu matrices of order %zu); make the same "
					 "batch on every rank (or ranks = \"self\")", gwb_mpi_rank(),
					 gwb_mpi_host(), B->count, n);
	}
	gwb_deal(B->count, gwb_mpi_size(), gwb_mpi_rank(), &lo, &hi);
	if (hi > lo) {
		view = *B;
		view.buf = NULL;  /* a host view of the range */
		view.data = (char *)B->data + lo * n * n * es;
		view.count = hi - lo;
		view.sum_ok = false;
		st = gwb_eig_batched(&view, o, &part);
		if (!st && vec && !part->vectors)
			st = gwb_eigen_host_vectors(part);  /* GPU results: vectors to the host */
		if (st)
			return st;  /* the front end aborts the job on the error */
	}
	if ((st = gwb_eigen_new(n, n, n, B->count, vec, false, &e)))
		goto out;
	if ((st = gather_doubles(part ? part->values : NULL, (hi - lo) * n, e->values,
				 B->count * n)))
		goto out;
	if (o->residuals && (st = gather_doubles(part ? part->residuals : NULL, (hi - lo) * n,
						 e->residuals, B->count * n)))
		goto out;
	if (vec && (st = gather_doubles(part ? part->vectors : NULL, (hi - lo) * n * n,
					e->vectors, B->count * n * n)))
		goto out;
	/* the whole batch's summary: maxima over the ranks (NaN-free: -inf stands for none) */
	mx[0] = part && !isnan(part->orthogonality) ? part->orthogonality : -INFINITY;
	mx[1] = part ? part->iterations : 0;
	mx[2] = part ? -(double)part->converged : -1;  /* max of -converged: min converged */
	mx[3] = part ? part->total_ms : 0;
	sums[0] = part ? part->kernel_ms : 0;
	sums[1] = part ? part->transfer_ms : 0;
	sums[2] = part ? part->check_ms : 0;
	if ((st = gwb_mpi_allreduce(mx, 4, GWB_MPI_MAX)) ||
	    (st = gwb_mpi_allreduce(sums, 3, GWB_MPI_MAX)))
		goto out;
	e->orthogonality = isinf(mx[0]) ? NAN : mx[0];
	e->iterations = (int)mx[1];
	e->converged = mx[2] < 0;
	e->kernel_ms = sums[0];
	e->transfer_ms = sums[1];
	e->check_ms = sums[2];
	gwb_eigen_update_max(e);
	if (part) {
		memcpy(e->method, part->method, sizeof(e->method));
		memcpy(e->backend, part->backend, sizeof(e->backend));
		memcpy(e->dtype, part->dtype, sizeof(e->dtype));
		snprintf(e->note, sizeof(e->note), "%zu matrices dealt to %d MPI ranks; rank %d: "
			 "%.900s", B->count, gwb_mpi_size(), gwb_mpi_rank(), part->note);
	}
	e->total_ms = (gwb_now() - t0) * 1e3;
	*out = e;
	e = NULL;
out:
	gwb_eigen_free(part);
	gwb_eigen_free(e);
	return st;
}
