/* kernel_res.h - what gwb's kernels use per launch, as the CUDA build compiled them: a table
 * generated from ptxas's report (scripts/gen-kernel-res writes kernel_res.c), so a CPU-only
 * build can answer occupancy questions about the real kernels. The entries are static. */
#ifndef GWB_KERNEL_RES_H
#define GWB_KERNEL_RES_H

typedef struct gwb_kernel_res {
	const char *name;      /* the name gwb launches it under ("rf_hist") */
	const char *function;  /* the kernel function (template arguments included) */
	const char *file;      /* its source, kernels/<file> */
	int regs;              /* registers per thread */
	int smem;              /* static shared memory per block, bytes (dynamic is per launch) */
	int stack;             /* stack frame per thread, bytes */
	int spill;             /* bytes of spill stores */
} gwb_kernel_res;

/* The architecture and nvcc release the table was made with ("sm_90", "13.0"). */
extern const char gwb_kernel_res_arch[];
extern const char gwb_kernel_res_nvcc[];

/* The first entry for a launch name, or NULL. */
const gwb_kernel_res *gwb_kernel_res_find(const char *name);

/* Entry i (0-based), NULL past the end. */
const gwb_kernel_res *gwb_kernel_res_at(int i);

#endif
