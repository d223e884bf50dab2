// handles.h - the shared cuBLAS / cuSOLVER / cuSPARSE handles of the plugin (C++ side only). The caller
// does not own them; src/gpu.c releases them at shutdown through gwb_gpu_handles_release().
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include "../src/status.h"

// The handle, created on first use; nullptr with *rc set when creation fails.
cublasHandle_t gwb_cublas(gwb_status *rc);
cusolverDnHandle_t gwb_cusolver(gwb_status *rc);
cusparseHandle_t gwb_cusparse(gwb_status *rc);

extern "C" void gwb_gpu_handles_release(void);
