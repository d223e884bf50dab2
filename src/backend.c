/* backend.c - backend names and the "auto" rule. */
#include "backend.h"

#include <stdio.h>
#include <string.h>

#include "gpu.h"

gwb_backend gwb_backend_default = GWB_BACKEND_AUTO;

static const char *const names[] = {"auto", "cpu", "gpu"};

gwb_status gwb_backend_parse(const char *s, gwb_backend *out)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (s && !strcmp(s, names[i])) {
			*out = (gwb_backend)i;
			return GWB_OK;
		}
	}
	return gwb_error(GWB_EINVAL, "backend must be \"auto\", \"cpu\" or \"gpu\" (got \"%s\")",
			 s ? s : "(nil)");
}

const char *gwb_backend_name(gwb_backend b)
{
	return (unsigned)b < 3 ? names[b] : "?";
}

gwb_status gwb_backend_choose(gwb_backend req, double bytes, double min_bytes, gwb_backend *out,
			      char *why, size_t why_size)
{
	char tmp[256];

	if (!why) {
		why = tmp;
		why_size = sizeof(tmp);
	}
	if (min_bytes <= 0)
		min_bytes = GWB_AUTO_MIN_BYTES;
	if (req == GWB_BACKEND_AUTO)
		req = gwb_backend_default;
	switch (req) {
	case GWB_BACKEND_CPU:
		*out = GWB_BACKEND_CPU;
		snprintf(why, why_size, "cpu requested");
		return GWB_OK;
	case GWB_BACKEND_GPU:
		if (!gwb_gpu_available()) {
			*out = GWB_BACKEND_CPU;
			return gwb_error(GWB_ENODEV, "backend=\"gpu\" asked for, but %s",
					 gwb_gpu_unavailable_reason());
		}
		*out = GWB_BACKEND_GPU;
		snprintf(why, why_size, "gpu requested");
		return GWB_OK;
	default:
		break;
	}
	if (bytes < min_bytes) {
		*out = GWB_BACKEND_CPU;
		snprintf(why, why_size, "auto: %.1f MB is below the %.0f MB GPU crossover", bytes / 1e6,
			 min_bytes / 1e6);
	} else if (!gwb_gpu_available()) {
		*out = GWB_BACKEND_CPU;
		snprintf(why, why_size, "auto: %s", gwb_gpu_unavailable_reason());
	} else {
		*out = GWB_BACKEND_GPU;
		snprintf(why, why_size, "auto: %.1f MB is above the %.0f MB GPU crossover",
			 bytes / 1e6, min_bytes / 1e6);
	}
	return GWB_OK;
}
