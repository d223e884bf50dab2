/* sparse_dist.h - a sparse matrix's rows dealt to the ranks of an MPI job, for the distributed
 * sparse solves (eig.solve, eig.svd with ranks = "all"): contiguous row blocks balanced by
 * nonzeros, each rank's block split into the part that reads its own slice of x and the part
 * that reads other ranks' entries (the halo), and the product y = alpha A x with only those
 * entries exchanged (their lists computed once per matrix). Every rank holds the whole matrix
 * when the plan is made (mat.read, the generators); the plan copies out its rows.
 * The caller owns a plan and frees it with gwb_csr_dist_free(). */
#ifndef GWB_SPARSE_DIST_H
#define GWB_SPARSE_DIST_H

#include <stdbool.h>
#include <stdint.h>

#include "sparse.h"
#include "status.h"

typedef struct gwb_csr_dist gwb_csr_dist;

/* Compare the matrix every rank holds (shape, nonzeros, checksum) with rank 0's; GWB_EINVAL
 * naming the first rank that differs (and its host), on every rank. Collective; GWB_OK in a
 * job of one. fn names the call in the message. */
gwb_status gwb_csr_ranks_check(gwb_csr *A, const char *fn);

/* starts[0..size]: rank r owns rows [starts[r], starts[r+1]) of A, contiguous blocks balanced
 * by nonzeros plus rows (a row costs its entries and its vector elements). Every rank
 * computes the same blocks from the same matrix. */
void gwb_csr_dist_partition(const gwb_csr *A, int size, int64_t *starts);

/* The plan for this rank: rows [rows[rank], rows[rank+1]) of A; the input vector x dealt by
 * cols[] (cols[size] == A->cols: for a square solve, the rows' blocks; for A^T in an SVD, the
 * other side's). Collective: every rank calls it (the halo lists are swapped here). */
gwb_status gwb_csr_dist_new(const gwb_csr *A, const int64_t *rows, const int64_t *cols,
			    const char *fn, gwb_csr_dist **out);
void gwb_csr_dist_free(gwb_csr_dist *D);

/* Y = alpha A X for b columns of this rank's slices (X: the input slice, leading dimension
 * its length; Y: the rows, leading dimension their count). With dot (b = 1, square plans):
 * *dot = this rank's share of x^T y (the caller sums the ranks'). Collective. */
gwb_status gwb_csr_dist_spmm(gwb_csr_dist *D, double alpha, const double *X, double *Y, int b,
			     double *dot);

/* Y = alpha A X + beta X + gamma Z (a Chebyshev step; square plans: the rows are the slice of
 * x), in the same pass over the rows as the product; Z may be NULL when gamma is 0. */
gwb_status gwb_csr_dist_spmm_axpby(gwb_csr_dist *D, double alpha, const double *X, double beta,
				   const double *Z, double gamma, double *Y, int b);

/* Bytes of x this rank sends and receives per product of one column (the halo), the ranks it
 * talks to, and its nonzeros. */
void gwb_csr_dist_volume(const gwb_csr_dist *D, int64_t *send, int64_t *recv, int *neighbours,
			 int64_t *nnz);

#endif
