/* eig_sparse_ops_gpu.c - the GPU table of the sparse eigensolvers' block operations
 * (gwb_sp_ops, eig_sparse_impl.h): each entry is one call into kernels/sparse.h (our SpMV or
 * cuSPARSE, cuBLAS GEMMs, the fused axpby and Chebyshev step, the hashed random fill,
 * cuSOLVER QR) on the device copy of the matrix that attach makes or finds resident; memory
 * from the caching pool (gpu.c). No fused SpMV + dot or axpby + norm: the sp_* calls compose
 * those. Uses kernels/ through their plain-C header, gpu.c and switches.c; a CPU build (make
 * CUDA=0) holds only gwb_sp_ops_gpu, which says there is no GPU table. */
#include "eig_sparse_impl.h"

#include "gpu.h"

#ifdef GWB_HAVE_CUDA
#include "switches.h"
#include "../kernels/sparse.h"

/* The resident copy (A:to("gpu")) is used in place, not freed by detach; otherwise A is
 * uploaded for this solve. */
static gwb_status gpu_attach(sp_op *o, gwb_csr *A, unsigned flags)
{
	gwb_status st;
	if (A->gpu)
		o->g = A->gpu;
	else if ((st = gwb_gpu_csr_upload(A, &o->g)))
		return st;
	/* the optimisation switches (switches.h; GWB_EIG_COLMAJOR=1 turns rows off) */
	if (flags & SP_ATTACH_ROWS)
		o->rows = gwb_switch_on(GWB_SW_EIG_ROWMAJOR);
	if ((flags & SP_ATTACH_KIND) && o->spmv_kind == GWB_SPMV_AUTO &&
	    !gwb_switch_on(GWB_SW_SPMV_OURS))
		o->spmv_kind = GWB_SPMV_CUSPARSE;
	o->cheb_fused = o->spmv_kind != GWB_SPMV_CUSPARSE;
	return GWB_OK;
}

static void gpu_detach(sp_op *o, const gwb_csr *A)
{
	if (o->g && o->g != A->gpu)
		gwb_gpu_csr_free(o->g);
}

static gwb_status gpu_alloc(sp_op *o, size_t cnt, double **p)
{
	(void)o;
	return gwb_gpu_malloc((void **)p, cnt * sizeof(double), "eig.sparse");
}

static void gpu_free(double *p)
{
	gwb_gpu_free(p);
}

static gwb_status gpu_spmm(sp_op *o, const double *X, double *Y, int b)
{
	return gwb_gpu_spmm(o->g, X, Y, b, o->sign, o->spmv_kind);
}

static gwb_status gpu_gemm_tn(sp_op *o, const double *X, int p, const double *Y, int q, double *G)
{
	return gwb_gpu_gemm_tn(o->g, o->n, X, p, Y, q, G);
}

static gwb_status gpu_gemm_nn(sp_op *o, const double *X, int p, const double *C, int q,
			      double beta, double *Y)
{
	return gwb_gpu_gemm_nn(o->g, o->n, X, p, C, q, beta, Y);
}

static gwb_status gpu_rowscale(sp_op *o, const double *d, const double *X, double *Y, int b)
{
	return gwb_gpu_rowscale(o->n, b, d, X, Y);
}

static gwb_status gpu_spmm_rows(sp_op *o, const double *X, double *Y, int b)
{
	return gwb_gpu_spmm_rows(o->g, X, Y, b, o->sign, o->spmv_kind);
}

static gwb_status gpu_cheb_step_rows(sp_op *o, const double *X, const double *Z, double *Out,
				     int m, double alpha, double beta, double gamma)
{
	return gwb_gpu_cheb_step_rows(o->g, X, Z, Out, m, alpha, beta, gamma);
}

static gwb_status gpu_transpose(sp_op *o, const double *A, double *B, int b, bool to_rows)
{
	return to_rows ? gwb_gpu_sp_transpose(o->g, o->n, b, A, B)
		       : gwb_gpu_sp_transpose(o->g, b, (int)o->n, A, B);
}

static gwb_status gpu_qr(sp_op *o, double *X, int b, double *R)
{
	return gwb_gpu_qr(o->g, o->n, b, X, R);
}

static const gwb_sp_ops gpu_ops = {
	.name = "gpu",
	.qr_name = "cuSOLVER",
	.host = false,
	.keeps_filter = true,
	.attach = gpu_attach,
	.detach = gpu_detach,
	.sync = gwb_gpu_sp_sync,
	.alloc = gpu_alloc,
	.free = gpu_free,
	.put = gwb_gpu_sp_put,
	.get = gwb_gpu_sp_get,
	.copy = gwb_gpu_sp_copy,
	.random = gwb_gpu_sp_random,
	.spmm = gpu_spmm,
	.spmv_dot = NULL,      /* sp_spmv_dot: the product, then X^T Y */
	.gemm_tn = gpu_gemm_tn,
	.gemm_nn = gpu_gemm_nn,
	.axpby = gwb_gpu_axpby3,
	.axpby_norm = NULL,    /* sp_axpby_norm: axpby, then the norm */
	.rowscale = gpu_rowscale,
	.spmm_rows = gpu_spmm_rows,
	.cheb_step_rows = gpu_cheb_step_rows,
	.transpose = gpu_transpose,
	.qr = gpu_qr,
};

gwb_status gwb_sp_ops_gpu(const gwb_sp_ops **out)
{
	*out = &gpu_ops;
	return GWB_OK;
}

#else /* GWB_HAVE_CUDA */

gwb_status gwb_sp_ops_gpu(const gwb_sp_ops **out)
{
	gwb_status st = gwb_gpu_init();  /* says why there is no GPU (built without CUDA) */
	*out = NULL;
	return st ? st : gwb_error(GWB_ENODEV, "this gwb was built without the GPU backend "
				  "(make CUDA=1)");
}

#endif /* GWB_HAVE_CUDA */
