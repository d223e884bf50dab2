/* eig_sparse_impl.h - what the files of the sparse eigensolvers share (eig_sparse.h and
 * sparse.h's gwb_svd_sparse are the public contracts). The block operations every method is
 * written over are one table of function pointers per backend (gwb_sp_ops, in the manner of
 * gwb_buf_ops in buffer.h): eig_sparse_ops.c holds the CPU table and the sp_* calls the
 * methods make (they time, count and call the table), eig_sparse_ops_gpu.c the GPU table.
 * A solve picks its table once (gwb_sp_ops_get); no method asks which device it runs on.
 * eig_block.c builds the shared steps from the operations (orthonormalization, Rayleigh-Ritz,
 * residuals); eig_lanczos.c, eig_cheb.c and eig_lobpcg.c are the methods, eig_sparse.c the
 * eigen driver, eig_svd.c the sparse SVD. Internal: nothing outside those files includes it.
 * Blocks are n x b column-major arrays of doubles in the backend's memory (sp_alloc, freed
 * with sp_free by whoever allocated them); small matrices (Gram, coefficients) are host. */
#ifndef GWB_EIG_SPARSE_IMPL_H
#define GWB_EIG_SPARSE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "eig_sparse.h"
#include "intr.h"
#include "sparse.h"
#include "status.h"

struct gwb_gpu_csr;
struct gwb_csr_dist;
typedef struct gwb_sp_ops gwb_sp_ops;

/* Phases of the per-operation profile (GWB_EIG_PROF=1 prints them to stderr): the GPU is
 * synchronized after each operation so its time lands in the phase that queued it. */
enum { PH_SPMM, PH_GRAM, PH_UPDATE, PH_VEC, PH_SYEV, PH_XFER, PH_SETUP, PH_COUNT };
extern const char *const sp_ph_names[PH_COUNT];

/* The operator s*A on one backend, for one solve (or one side of an SVD). */
typedef struct sp_op {
	gwb_csr *A;
	int64_t n;            /* length of the vectors this process holds: the order of A, or
			       * this rank's rows when the solve is distributed (dist) */
	int64_t N;            /* the vectors' whole length (the order of A; n unless dist) */
	int64_t off;          /* dist: the first global row of this rank's slice (0 otherwise) */
	struct gwb_csr_dist *dist; /* the rows dealt to the MPI ranks (sparse_dist.h), or NULL:
				    * the products exchange the halo and every reduction (Gram
				    * matrices, norms, dot products) is summed over the ranks */
	const int64_t *starts; /* dist: rank r holds global rows [starts[r], starts[r+1]) */
	double sign;          /* +1: smallest of A; -1: smallest of -A (largest of A) */
	const gwb_sp_ops *ops; /* the backend's table, chosen once (gwb_sp_ops_get) */
	int spmv_kind;        /* gwb_spmv_kind (GPU) */
	struct gwb_gpu_csr *g; /* device copy (GPU: set by attach) */
	long spmv;            /* matrix-vector products so far */
	bool rows;            /* filter blocks in row-major order (GPU: better gathers) */
	bool cheb_fused;      /* rows: a filter step is one fused pass (cheb_step_rows) */
	bool prof;            /* GWB_EIG_PROF: synchronize and time every operation */
	double ph[8];         /* seconds per phase (enum above) when prof */
	const char *fn;       /* the Lua function for messages: "eig.solve" (NULL) or "eig.svd" */
	double reorth_s;      /* Lanczos: seconds in CGS2 against the basis */
	long nreorth;         /* Lanczos: CGS2 calls */
} sp_op;

/* attach's flags: what the solve reads from the optimisation switches (switches.h) */
enum { SP_ATTACH_ROWS = 1,   /* eig.rowmajor: the filter's row-major blocks */
       SP_ATTACH_KIND = 2 }; /* spmv.ours: our SpMV or cuSPARSE, when spmv_kind is auto */

/* The backend table. Operations take and return backend memory unless "host" is said; every
 * one returns a status. Optional entries (NULL) say the backend has no fused form: the sp_*
 * call then runs the plain operations one after the other. */
struct gwb_sp_ops {
	const char *name;     /* "cpu" | "gpu": the result's backend */
	const char *qr_name;  /* who factors blocks (qr): "LAPACK" | "cuSOLVER" */
	bool host;            /* blocks are host memory: put/get are copies, not transfers */
	bool keeps_filter;    /* auto keeps the Chebyshev filter where Lanczos would win on the
			       * CPU (a Lanczos step is a handful of small launches and host
			       * round trips, a filter degree one fused kernel) */
	/* make A usable by the operations (GPU: the resident copy, or an upload into o->g) and
	 * read the switches the flags name; detach gives back what attach made */
	gwb_status (*attach)(sp_op *o, gwb_csr *A, unsigned flags);
	void (*detach)(sp_op *o, const gwb_csr *A);
	gwb_status (*sync)(void);  /* wait for queued work (phase timing) */
	gwb_status (*alloc)(sp_op *o, size_t cnt, double **p);
	void (*free)(double *p);
	gwb_status (*put)(double *dst, const double *host, size_t cnt);
	gwb_status (*get)(double *host, const double *src, size_t cnt);
	gwb_status (*copy)(double *dst, const double *src, size_t cnt);
	/* X[i] = a hash of (key, i) uniform in [-1, 1): the same numbers on every backend */
	gwb_status (*random)(double *X, size_t cnt, uint64_t key);
	gwb_status (*spmm)(sp_op *o, const double *X, double *Y, int b);      /* Y = s A X */
	/* y = s A x and *d = x^T y in one pass; NULL: spmm, then gemm_tn */
	gwb_status (*spmv_dot)(sp_op *o, const double *x, double *y, double *d);
	/* G (host, p x q) = X^T Y */
	gwb_status (*gemm_tn)(sp_op *o, const double *X, int p, const double *Y, int q, double *G);
	/* Y = X C + beta Y, C (host) p x q */
	gwb_status (*gemm_nn)(sp_op *o, const double *X, int p, const double *C, int q,
			      double beta, double *Y);
	/* z = a x + b y + c z (x, y may be NULL when a, b are 0) */
	gwb_status (*axpby)(size_t len, double a, const double *x, double b, const double *y,
			    double c, double *z);
	/* the same and *nrm = ||z|| in one pass; NULL: axpby, then the norm through gemm_tn */
	gwb_status (*axpby_norm)(size_t len, double a, const double *x, double b,
				 const double *y, double c, double *z, double *nrm);
	gwb_status (*rowscale)(sp_op *o, const double *d, const double *X, double *Y, int b);
	/* one fused filter step on column-major blocks, Out = alpha A X + beta X + gamma Z (Z
	 * may be NULL when gamma is 0); NULL: the product, then axpby */
	gwb_status (*cheb_step)(sp_op *o, const double *X, const double *Z, double *Out, int m,
				double alpha, double beta, double gamma);
	/* the filter's row-major blocks (refused where o->rows is never set): Y = s A X, one
	 * fused step Out = alpha A X + beta X + gamma Z, and the layout changes (to_rows: A is
	 * column-major n x b, B row-major; else back) */
	gwb_status (*spmm_rows)(sp_op *o, const double *X, double *Y, int b);
	gwb_status (*cheb_step_rows)(sp_op *o, const double *X, const double *Z, double *Out,
				     int m, double alpha, double beta, double gamma);
	gwb_status (*transpose)(sp_op *o, const double *A, double *B, int b, bool to_rows);
	/* Householder QR of the n x b block: X <- Q, R (host, b x b); n < 2^31, b <= n */
	gwb_status (*qr)(sp_op *o, double *X, int b, double *R);
};

/* The table of a device: the CPU's always; the GPU's in a CUDA build (GWB_ENODEV with the
 * reason otherwise). eig_sparse_ops_gpu.c: gwb_sp_ops_gpu, the same for the GPU alone. */
gwb_status gwb_sp_ops_get(gwb_device d, const gwb_sp_ops **out);
gwb_status gwb_sp_ops_gpu(const gwb_sp_ops **out);

static inline double sp_prof_begin(const sp_op *o)
{
	return o->prof ? gwb_now() : 0;
}

static inline void sp_prof_end(sp_op *o, int ph, double t0)
{
	if (!o->prof)
		return;
	(void)o->ops->sync();
	o->ph[ph] += gwb_now() - t0;
}

/* --- the operations (eig_sparse_ops.c): each times its phase when o->prof and calls the
 * table; products add to o->spmv */
const char *sp_fn(const sp_op *o);
gwb_status sp_alloc(sp_op *o, size_t cnt, double **p);
void sp_free(sp_op *o, double *p);
gwb_status sp_put(sp_op *o, double *dst, const double *host, size_t cnt);
gwb_status sp_get(sp_op *o, double *host, const double *src, size_t cnt);
gwb_status sp_copy(sp_op *o, double *dst, const double *src, size_t cnt);
gwb_status sp_spmm(sp_op *o, const double *X, double *Y, int b);
gwb_status sp_spmv_dot(sp_op *o, const double *x, double *y, double *d);
gwb_status sp_gemm_tn(sp_op *o, const double *X, int p, const double *Y, int q, double *G);
gwb_status sp_gemm_nn(sp_op *o, const double *X, int p, const double *C, int q, double beta,
		      double *Y);
gwb_status sp_axpby(sp_op *o, size_t len, double a, const double *x, double b, const double *y,
		    double c, double *z);
gwb_status sp_axpby_norm(sp_op *o, size_t len, double a, const double *x, double b,
			 const double *y, double c, double *z, double *nrm);
gwb_status sp_norm(sp_op *o, const double *w, double *nrm);
gwb_status sp_rowscale(sp_op *o, const double *d, const double *X, double *Y, int b);
gwb_status sp_cheb_step(sp_op *o, bool rows, const double *X, const double *Z, double *Out,
			int m, double a, double b, double g);
gwb_status sp_transpose(sp_op *o, const double *A, double *B, int b, bool to_rows);
gwb_status sp_random_block(sp_op *o, double *X, int b, uint64_t seed);
gwb_status sp_qr(sp_op *o, double *X, int b, double *R);
/* dist: the sum over the ranks of x[0..cnt) (a no-op for one process) */
gwb_status sp_allsum(sp_op *o, double *x, size_t cnt);
/* The n x b block (this rank's rows) gathered whole (N x b, column-major) into host memory
 * full on every rank; one process: a copy. */
gwb_status sp_gather_block(sp_op *o, const double *X, int b, double *full);

/* --- the state one end of a solve shares between the driver and the methods */
typedef struct solve {
	sp_op *o;
	const gwb_sp_opts *opt;
	int k;                /* wanted */
	double normA;         /* estimate of ||A||_2 */
	double lo, hi;        /* bounds of the spectrum of s*A: lo <= lambda_min, hi >= lambda_max */
	gwb_eigen *e;         /* history goes here */
	int iter;             /* outer iterations so far (all phases) */
	int maxiter;
	double *X;            /* result: n x k Ritz vectors (backend memory) */
	double *theta;        /* k Ritz values of s*A (host) */
	double *res;          /* k residual norms ||s A x - theta x|| (host) */
	bool converged;
	char note[256];
	const double *defl;   /* Lanczos: keep every vector orthogonal to these (backend memory) */
	int ndefl;
	double stop_above;    /* Lanczos: stop once a leading converged value reaches this
			       * (the deflated check); INFINITY: converge k */
	int found;            /* Lanczos: leading pairs in X/theta/res when it returned */
	double hist_res;      /* the deflated check: the residual its history entries show */
	double gap;           /* bounds(): (theta_2 - theta_1) / (theta_max - theta_2) of its run */
	double mass;          /* bounds(): n x the Gauss weight of theta_1 (eigenvalues near it) */
} solve;

/* --- steps built of the operations (eig_block.c) */
gwb_status sp_syev(sp_op *o, double *G, int m, double *w);
void sp_symmetrize(double *G, int m);
gwb_status sp_orthonormalize(sp_op *o, double *S, int m, double *T, int *r);
gwb_status sp_orth_against(sp_op *o, const double *Q, int nq, double *S, int m);
gwb_status sp_orth_once(sp_op *o, const double *Q, int nq, double *w, double *tmp);
gwb_status sp_residual_norms(sp_op *o, const double *X, const double *AX, int nres,
			     const double *theta, double *T, double *res, double *orth);
gwb_status sp_rayleigh_ritz(sp_op *o, double *Q, double *AQ, int m, double *T, double *theta,
			    double *res, int nres, double *Cout);
gwb_status sp_check_intr(const char *fn);
gwb_status sp_record(solve *S, int conv, double maxres);

/* --- the methods: the k smallest of s*A into S->theta/res/X */
gwb_status sp_bounds(solve *S);                        /* eig_lanczos.c */
gwb_status sp_lanczos(solve *S, const double *v0);     /* eig_lanczos.c */
gwb_status sp_subspace(solve *S, bool cheb, int max_outer); /* eig_cheb.c */
gwb_status sp_lobpcg(solve *S);                        /* eig_lobpcg.c */

#endif
