// sparse_impl.cuh - what spmv.cu and eig_sparse.cu share: the device CSR and its handles.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "../src/status.h"

struct gwb_gpu_csr {
	int64_t n, nnz;       // rows, nonzeros
	int64_t cols;         // columns (x has cols entries, y has n)
	bool wide;            // 64-bit indices
	int lanes;            // threads per row in our SpMV
	void *rp, *ci;        // int32 or int64, device
	double *val;          // device
	void *sp;             // cusparseHandle_t, shared (kernels/handles.cu), not owned
	void *bl;             // cublasHandle_t, shared (kernels/handles.cu), not owned
	void *mat;            // cusparseSpMatDescr_t
	void *spbuf;          // cuSPARSE work buffer
	size_t spbuf_size;
	double *tbuf;         // row-major copies of column-major blocks (ours, b > 1)
	size_t tbuf_size;     // in doubles
	double *dsmall;       // device scratch for small matrices (Gram, coefficients)
	size_t dsmall_size;   // in doubles
};

gwb_status gwb_cusparse_check(int st, const char *what, int line);
gwb_status gwb_cublas_check(int st, const char *what, int line);
gwb_status gwb_sp_scratch(gwb_gpu_csr *g, size_t need);
#define SPCHECK(x, what) gwb_cusparse_check((int)(x), what, __LINE__)
#define BLCHECK(x, what) gwb_cublas_check((int)(x), what, __LINE__)
