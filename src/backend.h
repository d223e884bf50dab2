/* backend.h - the backend choice every operation takes: "auto", "cpu" or "gpu".
 * "auto" picks the GPU when one is usable and the work moves enough bytes to pay for the
 * transfer; the chooser says which it took and why, for the result and the run log. */
#ifndef GWB_BACKEND_H
#define GWB_BACKEND_H

#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gwb_backend { GWB_BACKEND_AUTO = 0, GWB_BACKEND_CPU, GWB_BACKEND_GPU } gwb_backend;

/* The process-wide default (set by --backend). */
extern gwb_backend gwb_backend_default;

/* "auto"/"cpu"/"gpu" -> enum; GWB_EINVAL for anything else. */
gwb_status gwb_backend_parse(const char *s, gwb_backend *out);
const char *gwb_backend_name(gwb_backend b);

/* Default crossover for "auto": work that moves fewer bytes than this stays on the CPU. */
#define GWB_AUTO_MIN_BYTES (32.0 * 1024 * 1024)

/* Resolve a request to CPU or GPU. `bytes` estimates what the GPU path would move; `min_bytes`
 * is the operation's measured crossover (0 = GWB_AUTO_MIN_BYTES). A "gpu" request without a
 * usable GPU is GWB_ENODEV with the reason. `why` (may be NULL, size >= 128) says why. */
gwb_status gwb_backend_choose(gwb_backend req, double bytes, double min_bytes, gwb_backend *out,
			      char *why, size_t why_size);

#ifdef __cplusplus
}
#endif
#endif
