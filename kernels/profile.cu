// profile.cu - the CUPTI range profiler behind gpu.profile (see profile.h). Host code only:
// libcupti is dlopen()ed at the first session, so neither gwb nor this plugin links it, and a
// machine without it (or a build without its headers) gets a reason instead of a failure.
// Call sequence (CUPTI Range Profiling + Profiler Host APIs; CUPTI from CUDA 13.0 or newer,
// whose launch callback ids this file uses):
//   cuptiProfilerInitialize -> cuptiProfilerDeviceSupported -> cuptiDeviceGetChipName
//   -> cuptiRangeProfilerEnable(ctx) -> host: Initialize(chip), ConfigAddMetrics,
//      GetConfigImage -> GetCounterDataSize + CounterDataImageInitialize
//   -> SetConfig(CUPTI_AutoRange, CUPTI_KernelReplay) -> Start
//   ... the measured code launches kernels (each one range, replayed per pass) ...
//   -> Stop -> DecodeData -> GetCounterDataInfo -> per range: GetRangeInfo and
//      host EvaluateToGpuValues -> Disable, host Deinitialize.
// A CUPTI callback on the launch APIs records each launch's mangled function name in order;
// range i is launch i (auto range serializes launches), and the names are mapped to gwb's
// kernel names through the launch registry (prof.c) and cudaFuncGetName.
#include <cuda_runtime.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <map>
#include <mutex>
#include <new>
#include <pthread.h>
#include <string>
#include <vector>

#include "../src/intr.h"
#include "../src/prof.h"
#include "../src/status.h"
#include "profile.h"

#if __has_include(<cupti_range_profiler.h>) && __has_include(<cupti_profiler_host.h>) && \
	__has_include(<cupti_callbacks.h>) && __has_include(<cupti_target.h>) && \
	__has_include(<cupti_version.h>)
#define GWB_CUPTI_HEADERS 1
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_runtime_cbid.h>
#include <cupti_target.h>
#include <cupti_version.h>
#endif

namespace {

std::string g_lib_path;  // the libcupti that was loaded

#ifdef GWB_CUPTI_HEADERS

// In groups: a chip that refuses a group's metrics is asked for the groups before it only
// (kTiers, from all of them down to the occupancy alone).
const char *const kMetrics[] = {
	// 0..2: occupancy, duration, SM throughput
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"gpu__time_duration.sum",
	"sm__throughput.avg.pct_of_peak_sustained_elapsed",
	// 3..7: memory
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"lts__t_bytes.sum",
	"lts__throughput.avg.pct_of_peak_sustained_elapsed",
	// 8..13: floating-point thread instructions
	"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
	// 14..18: the peaks (per cycle, and the clocks)
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
	"sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
	"sm__cycles_elapsed.avg.per_second",
	"dram__bytes.sum.peak_sustained",
	"dram__cycles_elapsed.avg.per_second",
	// 19: tensor pipe
	"sm__inst_executed_pipe_tensor.sum",
};
const size_t kNumMetrics = sizeof(kMetrics) / sizeof(kMetrics[0]);
const size_t kTiers[] = {20, 19, 14, 8, 3, 1};
enum { M_OCC, M_DUR, M_SM, M_DRAM_RD, M_DRAM_WR, M_DRAM_PCT, M_L2_BYTES, M_L2_PCT, M_FADD,
       M_FMUL, M_FFMA, M_DADD, M_DMUL, M_DFMA, M_FFMA_PEAK, M_DFMA_PEAK, M_SM_HZ,
       M_DRAM_PEAK, M_DRAM_HZ, M_TENSOR };
static_assert(sizeof(kMetrics) / sizeof(kMetrics[0]) == 20, "kTiers[0] is every metric");

#define GWB_CUPTI_FNS(X)                                                                  \
	X(cuptiGetResultString)                                                           \
	X(cuptiProfilerInitialize)                                                        \
	X(cuptiProfilerDeviceSupported)                                                   \
	X(cuptiDeviceGetChipName)                                                         \
	X(cuptiRangeProfilerEnable)                                                       \
	X(cuptiRangeProfilerDisable)                                                      \
	X(cuptiRangeProfilerSetConfig)                                                    \
	X(cuptiRangeProfilerStart)                                                        \
	X(cuptiRangeProfilerStop)                                                         \
	X(cuptiRangeProfilerDecodeData)                                                   \
	X(cuptiRangeProfilerGetCounterDataSize)                                           \
	X(cuptiRangeProfilerCounterDataImageInitialize)                                   \
	X(cuptiRangeProfilerGetCounterDataInfo)                                           \
	X(cuptiRangeProfilerCounterDataGetRangeInfo)                                      \
	X(cuptiProfilerHostInitialize)                                                    \
	X(cuptiProfilerHostDeinitialize)                                                  \
	X(cuptiProfilerHostConfigAddMetrics)                                              \
	X(cuptiProfilerHostGetConfigImageSize)                                            \
	X(cuptiProfilerHostGetConfigImage)                                                \
	X(cuptiProfilerHostEvaluateToGpuValues)                                           \
	X(cuptiSubscribe)                                                                 \
	X(cuptiUnsubscribe)                                                               \
	X(cuptiEnableCallback)

struct Api {
#define GWB_DECL(f) decltype(&::f) f = nullptr;
	GWB_CUPTI_FNS(GWB_DECL)
#undef GWB_DECL
};
Api api;
// The oldest libcupti used: CUDA 13.0's (cuptiGetVersion's API version; from 13.0 on it reads
// xxyyzz, major, minor, CUPTI update). It has the range profiler and the launch callback ids
// this file uses (CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000).
const uint32_t kMinCuptiVersion = 130000;
bool g_loaded, g_load_failed, g_initialized;
std::string g_load_reason;
CUresult (*p_cuCtxGetCurrent)(CUcontext *) = nullptr;

void add_dir(std::vector<std::string> &v, const std::string &dir)
{
	v.push_back(dir + "/libcupti.so.13");
	v.push_back(dir + "/libcupti.so");
}

void add_glob(std::vector<std::string> &v, const char *pattern)
{
	glob_t g;
	if (glob(pattern, 0, nullptr, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			add_dir(v, g.gl_pathv[i]);
	globfree(&g);
}

// Where CUPTI lives: beside the runtime we run on (the toolkit's lib64 or a wheel's lib), the
// toolkit's extras/CUPTI/lib64, the loader's path (LD_LIBRARY_PATH, this plugin's RUNPATH),
// and the pip wheels (nvidia-cuda-cupti, which PyTorch installs).
std::vector<std::string> candidates()
{
	std::vector<std::string> v;
	const char *env = getenv("GWB_CUPTI");
	if (env && *env)
		v.push_back(env);
	Dl_info di;
	if (dladdr((void *)&cudaGetDeviceCount, &di) && di.dli_fname) {
		std::string dir = di.dli_fname;
		size_t slash = dir.rfind('/');
		if (slash != std::string::npos) {
			dir.resize(slash);
			add_dir(v, dir);
			add_dir(v, dir + "/../extras/CUPTI/lib64");
		}
	}
	v.push_back("libcupti.so.13");
	v.push_back("libcupti.so");
	add_glob(v, "/usr/local/cuda/extras/CUPTI/lib64");
	add_glob(v, "/usr/local/cuda/lib64");
	add_glob(v, "/usr/local/cuda/lib");
	add_glob(v, "/usr/local/cuda-1[3-9]*/extras/CUPTI/lib64");
	add_glob(v, "/usr/local/cuda-1[3-9]*/lib64");
	add_glob(v, "/usr/local/cuda-1[3-9]*/lib");
	add_glob(v, "/usr/local/lib/python3*/dist-packages/nvidia/cu13/lib");
	add_glob(v, "/usr/local/lib/python3*/site-packages/nvidia/cu13/lib");
	add_glob(v, "/usr/lib/python3*/site-packages/nvidia/cu13/lib");
	add_glob(v, "/usr/lib/python3/dist-packages/nvidia/cu13/lib");
	add_glob(v, "/opt/conda/lib/python3*/site-packages/nvidia/cu13/lib");
	add_glob(v, "/usr/local/lib/python3*/dist-packages/nvidia/cuda_cupti/lib");
	add_glob(v, "/usr/local/lib/python3*/site-packages/nvidia/cuda_cupti/lib");
	return v;
}

// cuptiGetVersion's number as a CUDA release ("13.0 (CUPTI API 130001)", "CUPTI API 24").
std::string cupti_version_text(uint32_t v)
{
	char buf[80];
	if (v >= 100000)
		snprintf(buf, sizeof(buf), "CUDA %u.%u (CUPTI API %u)", v / 10000, v / 100 % 100, v);
	else
		snprintf(buf, sizeof(buf), "CUPTI API %u (CUDA 12.9 or older)", v);
	return buf;
}

gwb_status load_cupti()
{
	if (g_loaded)
		return GWB_OK;
	if (g_load_failed)
		return gwb_error(GWB_ENODEV, "%s", g_load_reason.c_str());
	std::string tried, last_err, too_old;
	void *h = nullptr;
	for (const std::string &c : candidates()) {
		h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
		if (h) {
			std::string at = c;
			char path[4096] = "";
			if (dlinfo(h, RTLD_DI_ORIGIN, path) == 0 && path[0]) {
				const char *base = strrchr(c.c_str(), '/');
				at = std::string(path) + "/" + (base ? base + 1 : c.c_str());
			}
			// an older CUPTI (say libcupti.so from CUDA 12 first on the path): try the next
			CUptiResult (*get_version)(uint32_t *) = nullptr;
			*(void **)&get_version = dlsym(h, "cuptiGetVersion");
			uint32_t ver = 0;
			if (get_version && get_version(&ver) == CUPTI_SUCCESS &&
			    ver >= kMinCuptiVersion) {
				g_lib_path = at;
				break;
			}
			if (too_old.size() < 400)
				too_old += (too_old.empty() ? "" : ", ") + at + " is " +
					   (get_version ? cupti_version_text(ver)
							: std::string("without cuptiGetVersion"));
			dlclose(h);
			h = nullptr;
			continue;
		}
		const char *e = dlerror();
		if (e && !strstr(e, "No such file"))
			last_err = e;
		if (tried.size() < 600)
			tried += (tried.empty() ? "" : ", ") + c;
	}
	if (!h) {
		char buf[1600];
		if (!too_old.empty())
			snprintf(buf, sizeof(buf),
				 "no libcupti (CUDA's profiling library) new enough was found: %s; the "
				 "range profiler needs the CUPTI of %s or newer; install it (the "
				 "toolkit's CUPTI or the nvidia-cuda-cupti 13.x wheel) or set "
				 "GWB_CUPTI=/path/to/libcupti.so.13",
				 too_old.c_str(), cupti_version_text(kMinCuptiVersion).c_str());
		else
			snprintf(buf, sizeof(buf),
				 "libcupti (CUDA's profiling library) was not found (tried %s%s)%s%s; "
				 "install the toolkit's CUPTI or the nvidia-cuda-cupti wheel, or set "
				 "GWB_CUPTI=/path/to/libcupti.so.13",
				 tried.c_str(), tried.size() >= 600 ? ", ..." : "",
				 last_err.empty() ? "" : "; last error: ", last_err.c_str());
		g_load_reason = buf;
		g_load_failed = true;
		return gwb_error(GWB_ENODEV, "%s", buf);
	}
	const char *missing = nullptr;
#define GWB_LOAD(f)                                                                       \
	if (!(*(void **)&api.f = dlsym(h, #f)) && !missing)                              \
		missing = #f;
	GWB_CUPTI_FNS(GWB_LOAD)
#undef GWB_LOAD
	if (missing) {
		g_load_reason = "the libcupti at " + g_lib_path + " has no " + missing +
				" (the range profiler needs CUPTI from " +
				cupti_version_text(kMinCuptiVersion) +
				" or newer); set GWB_CUPTI to a newer libcupti.so";
		g_load_failed = true;
		g_lib_path.clear();  // none is loaded
		dlclose(h);
		return gwb_error(GWB_ENODEV, "%s", g_load_reason.c_str());
	}
	cudaDriverEntryPointQueryResult q;
	if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", (void **)&p_cuCtxGetCurrent,
					     12000, cudaEnableDefault, &q) != cudaSuccess ||
	    q != cudaDriverEntryPointSuccess || !p_cuCtxGetCurrent) {
		cudaGetLastError();
		g_load_reason = "the CUDA driver does not give cuCtxGetCurrent, which the range "
				"profiler needs";
		g_load_failed = true;
		g_lib_path.clear();  // none is loaded
		dlclose(h);
		return gwb_error(GWB_ENODEV, "%s", g_load_reason.c_str());
	}
	g_loaded = true;  // never dlclose()d: CUPTI stays attached to the driver
	return GWB_OK;
}

// A failed CUPTI call, as a reason a user can act on.
gwb_status cupti_fail(const char *what, CUptiResult r)
{
	const char *s = nullptr;
	if (api.cuptiGetResultString)
		api.cuptiGetResultString(r, &s);
	if (!s)
		s = "unknown CUPTI error";
	switch (r) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
		return gwb_error(GWB_ENODEV,
				 "profiling is not permitted (%s: %s): the driver gives the GPU "
				 "performance counters to administrators only "
				 "(NVreg_RestrictProfilingToAdminUsers=1); run as root or load the "
				 "nvidia module with NVreg_RestrictProfilingToAdminUsers=0 "
				 "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)",
				 what, s);
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
	case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
		return gwb_error(GWB_ENODEV,
				 "another profiling tool holds the GPU's counters (%s: %s): "
				 "compute-sanitizer, Nsight Systems/Compute and cuda-gdb cannot share "
				 "them; run without the tool",
				 what, s);
	case CUPTI_ERROR_NOT_SUPPORTED:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
		return gwb_error(GWB_ENODEV,
				 "this device or environment does not support the range profiler "
				 "(%s: %s)",
				 what, s);
	default:
		return gwb_error(GWB_ENODEV, "CUPTI %s failed: %s (error %d)", what, s, (int)r);
	}
}

// A CUPTI parameter block: zeroed, with its structSize set.
#define GWB_PARAMS(T, v)                                                                  \
	T v;                                                                              \
	memset(&v, 0, sizeof(v));                                                         \
	v.structSize = T##_STRUCT_SIZE

#define CUPTI_TRY(what, call)                                                             \
	do {                                                                              \
		CUptiResult r_ = (call);                                                  \
		if (r_ != CUPTI_SUCCESS)                                                  \
			return cupti_fail(what, r_);                                      \
	} while (0)

// Launch names, in order, from the two API layers (whichever matches the range count wins):
// the first g_name_cap of each (max_ranges: later launches make no range), then only counted.
// g_names_lost: a name could not be stored (out of memory); the names kept are a prefix.
std::mutex g_mu;
std::vector<std::string> g_drv, g_rt;
size_t g_drv_n, g_rt_n, g_name_cap;
bool g_names_lost;

bool is_launch(CUpti_CallbackDomain dom, CUpti_CallbackId id)
{
	if (dom == CUPTI_CB_DOMAIN_DRIVER_API)
		return id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
		       id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
		       id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
		       id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
		       id == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel ||
		       id == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API)
		return id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ||
		       id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 ||
		       id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ||
		       id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060 ||
		       id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000 ||
		       id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000 ||
		       id == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 ||
		       id == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000;
	return false;
}

void CUPTIAPI on_launch(void *, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data)
{
	const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
	if (!cb || cb->callbackSite != CUPTI_API_EXIT || !is_launch(dom, id))
		return;
	if (cb->functionReturnValue) {
		int rv = dom == CUPTI_CB_DOMAIN_DRIVER_API ? (int)*(const CUresult *)cb->functionReturnValue
							   : (int)*(const cudaError_t *)cb->functionReturnValue;
		if (rv != 0)
			return;  // a failed launch makes no range
	}
	bool drv = dom == CUPTI_CB_DOMAIN_DRIVER_API;
	try {  // a C callback: nothing may escape it
		std::lock_guard<std::mutex> lk(g_mu);
		std::vector<std::string> &v = drv ? g_drv : g_rt;
		size_t &n = drv ? g_drv_n : g_rt_n;
		n++;
		if (!g_names_lost && v.size() < g_name_cap)
			v.emplace_back(cb->symbolName ? cb->symbolName : "");
	} catch (...) {
		g_names_lost = true;  // the names stored so far stay in launch order
	}
}

// A launch's mangled name, demangled and trimmed for a table: *shown is the library namespace
// and the function ("cub::DeviceScanKernel" for
// "void cub::CUB_300001_SM_900::detail::scan::DeviceScanKernel<...>(...)"), *base the function
// alone ("DeviceScanKernel"); template arguments and parameters are dropped, so instantiations
// of one template share a row (as they share a gwb_launch label).
void split_name(const std::string &sym, std::string *shown, std::string *base)
{
	int st = 0;
	char *d = sym.compare(0, 2, "_Z") == 0 ? abi::__cxa_demangle(sym.c_str(), nullptr, nullptr, &st)
					       : nullptr;
	std::string s = (st == 0 && d) ? d : sym;
	free(d);
	if (s.compare(0, 5, "void ") == 0)
		s.erase(0, 5);
	static const std::string anon = "(anonymous namespace)::";
	for (size_t at; (at = s.find(anon)) != std::string::npos;)
		s.erase(at, anon.size());
	std::string plain;
	int depth = 0;
	for (char c : s) {
		if (c == '<')
			depth++;
		else if (c == '>')
			depth--;
		else if (depth == 0 && c == '(')
			break;
		else if (depth == 0)
			plain += c;
	}
	std::vector<std::string> parts;
	for (size_t from = 0;;) {
		size_t at = plain.find("::", from);
		parts.push_back(plain.substr(from, at == std::string::npos ? std::string::npos : at - from));
		if (at == std::string::npos)
			break;
		from = at + 2;
	}
	*base = parts.back();
	*shown = parts.size() > 1 ? parts.front() + "::" + parts.back() : parts.back();
	if (shown->size() > 60)
		shown->resize(60);
}

struct Registry {
	std::map<std::string, std::string> by_symbol;  // mangled name -> gwb label
	std::map<std::string, std::string> by_base;    // function name -> gwb label ("" if two)
	std::map<std::string, bool> labels;
};

void collect_registered(const char *name, void *ctx)
{
	auto *r = (Registry *)ctx;
	const void *fn = gwb_prof_kernel_fn(name);
	const char *mangled = nullptr;
	r->labels[name] = true;
	if (fn && cudaFuncGetName(&mangled, fn) == cudaSuccess && mangled) {
		std::string shown, base;
		r->by_symbol[mangled] = name;
		split_name(mangled, &shown, &base);
		auto it = r->by_base.find(base);
		if (it == r->by_base.end())
			r->by_base[base] = name;
		else if (it->second != name)
			it->second = "";  // one template under two labels: no guess
	}
	cudaGetLastError();
}

#endif  // GWB_CUPTI_HEADERS

bool g_active;

}  // namespace

struct gwb_profile_session {
#ifdef GWB_CUPTI_HEADERS
	CUpti_RangeProfiler_Object *rp = nullptr;
	CUpti_Profiler_Host_Object *host = nullptr;
	CUpti_SubscriberHandle sub = nullptr;
	std::vector<uint8_t> config, counters;
	std::string chip;
	size_t nmetrics = kNumMetrics;
	int max_ranges = 0;
	bool started = false;
	// live decoding (gwb_gpu_profile_tick): the ranges go to fn as each batch is decoded
	gwb_profile_range_fn fn = nullptr;
	void *ctx = nullptr;
	pthread_t thread;            // the thread that began the session (and launches)
	double last_decode = 0;      // gwb_now() of the last decode
	size_t drv_base = 0, rt_base = 0;  // launches named before the current batch
	size_t measured = 0, dropped = 0;  // ranges delivered; dropped by CUPTI
	size_t launches = 0;         // launches of the layer that named each batch
	bool broken = false;         // a live decode failed: end() reports it
	std::string broken_msg;
#endif
};

#ifdef GWB_CUPTI_HEADERS
static gwb_profile_session *g_sess;  // the session being measured, or null
#endif

#ifdef GWB_CUPTI_HEADERS
static void session_release(gwb_profile_session *s)
{
	if (!s)
		return;
	if (s->started) {
		GWB_PARAMS(CUpti_RangeProfiler_Stop_Params, p);
		p.pRangeProfilerObject = s->rp;
		api.cuptiRangeProfilerStop(&p);
		s->started = false;
	}
	if (s->rp) {
		GWB_PARAMS(CUpti_RangeProfiler_Disable_Params, p);
		p.pRangeProfilerObject = s->rp;
		api.cuptiRangeProfilerDisable(&p);
	}
	if (s->host) {
		GWB_PARAMS(CUpti_Profiler_Host_Deinitialize_Params, p);
		p.pHostObject = s->host;
		api.cuptiProfilerHostDeinitialize(&p);
	}
	if (s->sub)
		api.cuptiUnsubscribe(s->sub);
	if (g_sess == s)
		g_sess = nullptr;
	delete s;
	g_active = false;
}

static const char *support_word(CUpti_Profiler_Support_Level l)
{
	return l == CUPTI_PROFILER_CONFIGURATION_DISABLED ? "disabled by the system"
							  : "not supported";
}

static gwb_status device_supported(int dev)
{
	GWB_PARAMS(CUpti_Profiler_DeviceSupported_Params, p);
	p.cuDevice = dev;
	p.api = CUPTI_PROFILER_RANGE_PROFILING;
	CUPTI_TRY("cuptiProfilerDeviceSupported", api.cuptiProfilerDeviceSupported(&p));
	if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return GWB_OK;
	struct { const char *what; CUpti_Profiler_Support_Level l; } parts[] = {
		{"the GPU architecture (compute capability 7.0 or newer is needed)", p.architecture},
		{"SLI", p.sli},
		{"profiling on a vGPU", p.vGpu},
		{"confidential computing", p.confidentialCompute},
		{"a CMP (crypto-mining) device", p.cmp},
		{"WSL", p.wsl},
	};
	for (auto &x : parts)
		if (x.l != CUPTI_PROFILER_CONFIGURATION_SUPPORTED &&
		    x.l != CUPTI_PROFILER_CONFIGURATION_UNKNOWN)
			return gwb_error(GWB_ENODEV,
					 "the range profiler cannot run on device %d: %s is %s", dev,
					 x.what, support_word(x.l));
	return gwb_error(GWB_ENODEV, "the range profiler does not support device %d", dev);
}

static gwb_status set_config(gwb_profile_session *s);
static gwb_status init_counters(gwb_profile_session *s);

// The host object, config image, counter data image and range profiler configuration for
// the first n metrics of kMetrics (any left from an earlier tier are replaced).
static gwb_status configure(gwb_profile_session *s, size_t n)
{
	if (s->host) {
		GWB_PARAMS(CUpti_Profiler_Host_Deinitialize_Params, d);
		d.pHostObject = s->host;
		api.cuptiProfilerHostDeinitialize(&d);
		s->host = nullptr;
	}
	{
		GWB_PARAMS(CUpti_Profiler_Host_Initialize_Params, p);
		p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
		p.pChipName = s->chip.c_str();
		p.pCounterAvailabilityImage = nullptr;
		CUPTI_TRY("cuptiProfilerHostInitialize", api.cuptiProfilerHostInitialize(&p));
		s->host = p.pHostObject;
	}
	{
		GWB_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params, p);
		p.pHostObject = s->host;
		p.ppMetricNames = (const char **)kMetrics;
		p.numMetrics = n;
		CUPTI_TRY("cuptiProfilerHostConfigAddMetrics", api.cuptiProfilerHostConfigAddMetrics(&p));
		s->nmetrics = n;
	}
	{
		GWB_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params, p);
		p.pHostObject = s->host;
		CUPTI_TRY("cuptiProfilerHostGetConfigImageSize",
			  api.cuptiProfilerHostGetConfigImageSize(&p));
		s->config.assign(p.configImageSize, 0);
		GWB_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params, q);
		q.pHostObject = s->host;
		q.configImageSize = s->config.size();
		q.pConfigImage = s->config.data();
		CUPTI_TRY("cuptiProfilerHostGetConfigImage", api.cuptiProfilerHostGetConfigImage(&q));
	}
	{
		GWB_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params, p);
		p.pRangeProfilerObject = s->rp;
		p.pMetricNames = (const char **)kMetrics;
		p.numMetrics = s->nmetrics;
		p.maxNumOfRanges = (size_t)s->max_ranges;
		p.maxNumRangeTreeNodes = (uint32_t)s->max_ranges;
		CUPTI_TRY("cuptiRangeProfilerGetCounterDataSize",
			  api.cuptiRangeProfilerGetCounterDataSize(&p));
		s->counters.assign(p.counterDataSize, 0);
	}
	return init_counters(s);
}

// The counter data image initialized afresh (ranges numbered from 0) and the configuration set
// over it: after sizing it, and again after each live decode.
static gwb_status init_counters(gwb_profile_session *s)
{
	{
		GWB_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params, q);
		q.pRangeProfilerObject = s->rp;
		q.counterDataSize = s->counters.size();
		q.pCounterData = s->counters.data();
		CUPTI_TRY("cuptiRangeProfilerCounterDataImageInitialize",
			  api.cuptiRangeProfilerCounterDataImageInitialize(&q));
	}
	return set_config(s);
}

// Start the range profiler (begin, and again after each live decode).
static gwb_status start(gwb_profile_session *s)
{
	{
		GWB_PARAMS(CUpti_RangeProfiler_Start_Params, p);
		p.pRangeProfilerObject = s->rp;
		CUPTI_TRY("cuptiRangeProfilerStart", api.cuptiRangeProfilerStart(&p));
		s->started = true;
	}
	return GWB_OK;
}

// The range profiler's configuration (auto ranges, kernel replay) over s's images; again
// after each live decode, with the counter data image initialized afresh.
static gwb_status set_config(gwb_profile_session *s)
{
	{
		GWB_PARAMS(CUpti_RangeProfiler_SetConfig_Params, p);
		p.pRangeProfilerObject = s->rp;
		p.configSize = s->config.size();
		p.pConfig = s->config.data();
		p.counterDataImageSize = s->counters.size();
		p.pCounterDataImage = s->counters.data();
		p.range = CUPTI_AutoRange;
		p.replayMode = CUPTI_KernelReplay;
		p.maxRangesPerPass = (size_t)s->max_ranges;
		p.numNestingLevels = 1;
		p.minNestingLevel = 1;
		p.passIndex = 0;
		p.targetNestingLevel = 0;
		CUptiResult r = api.cuptiRangeProfilerSetConfig(&p);
		if (r == CUPTI_ERROR_INVALID_PARAMETER) {  // older CUPTI wants level 1 here
			p.targetNestingLevel = 1;
			r = api.cuptiRangeProfilerSetConfig(&p);
		}
		CUPTI_TRY("cuptiRangeProfilerSetConfig", r);
	}
	return GWB_OK;
}

static gwb_status begin(gwb_profile_session *s)
{
	gwb_status rc;
	int dev = 0;
	CUcontext ctx = nullptr;

	if (cudaFree(0) != cudaSuccess || cudaGetDevice(&dev) != cudaSuccess) {
		cudaError_t e = cudaGetLastError();
		return gwb_error(GWB_ECUDA, "gpu.profile: no CUDA context: %s", cudaGetErrorString(e));
	}
	if ((rc = load_cupti()))
		return rc;
	if (p_cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
		return gwb_error(GWB_ECUDA, "gpu.profile: no current CUDA context");
	if (!g_initialized) {
		GWB_PARAMS(CUpti_Profiler_Initialize_Params, p);
		CUPTI_TRY("cuptiProfilerInitialize", api.cuptiProfilerInitialize(&p));
		g_initialized = true;  // once per process
	}
	if ((rc = device_supported(dev)))
		return rc;
	{
		GWB_PARAMS(CUpti_Device_GetChipName_Params, p);
		p.deviceIndex = (size_t)dev;
		CUPTI_TRY("cuptiDeviceGetChipName", api.cuptiDeviceGetChipName(&p));
		s->chip = p.pChipName ? p.pChipName : "";
	}
	{
		std::lock_guard<std::mutex> lk(g_mu);
		g_drv.clear();
		g_rt.clear();
		g_drv_n = g_rt_n = 0;
		// every launch of the session is named (batches are decoded as it runs), up to a
		// bound on the host memory the names take
		g_name_cap = (size_t)s->max_ranges > 200000 ? (size_t)s->max_ranges : 200000;
		g_names_lost = false;
	}
	// Launch names: optional (without them ranges keep CUPTI's names).
	if (api.cuptiSubscribe(&s->sub, (CUpti_CallbackFunc)on_launch, nullptr) == CUPTI_SUCCESS) {
		static const CUpti_CallbackId drv[] = {
			CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
			CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
			CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
			CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
			CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
			CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};
		static const CUpti_CallbackId rt[] = {
			CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
			CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
			CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
			CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
			CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
			CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
			CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
			CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000};
		for (CUpti_CallbackId id : drv)
			api.cuptiEnableCallback(1, s->sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
		for (CUpti_CallbackId id : rt)
			api.cuptiEnableCallback(1, s->sub, CUPTI_CB_DOMAIN_RUNTIME_API, id);
	} else {
		s->sub = nullptr;
	}
	{
		GWB_PARAMS(CUpti_RangeProfiler_Enable_Params, p);
		p.ctx = ctx;
		CUPTI_TRY("cuptiRangeProfilerEnable", api.cuptiRangeProfilerEnable(&p));
		s->rp = p.pRangeProfilerObject;
	}
	{
		// Every metric; where the chip refuses some (adding them, sizing the images or
		// setting the configuration), the tiers below (fewer groups), down to the occupancy
		// alone, each on a fresh host object and images.
		gwb_status rc2 = GWB_OK;
		for (size_t t = 0; t < sizeof(kTiers) / sizeof(kTiers[0]); t++) {
			if (!(rc2 = configure(s, kTiers[t])))
				break;
		}
		if (rc2)
			return rc2;
	}
	return start(s);
}

// Stop, decode what the batch measured and hand each range to s->fn in launch order; then
// (restart) initialize the counter data image afresh and start again, so the next batch's
// ranges are numbered from 0 and the image never fills. Range i of a batch is launch
// base + i of the API layer whose launches cover the batch.
static gwb_status decode_batch(gwb_profile_session *s, bool restart)
{
	size_t nranges = 0;
	cudaError_t ce = cudaDeviceSynchronize();
	if (ce != cudaSuccess) {
		cudaGetLastError();
		return gwb_error(GWB_ECUDA, "gpu.profile: the measured code left the device in error: %s",
				 cudaGetErrorString(ce));
	}
	{
		GWB_PARAMS(CUpti_RangeProfiler_Stop_Params, p);
		p.pRangeProfilerObject = s->rp;
		s->started = false;
		CUPTI_TRY("cuptiRangeProfilerStop", api.cuptiRangeProfilerStop(&p));
		if (!p.isAllPassSubmitted)
			return gwb_error(GWB_ENODEV, "gpu.profile: CUPTI did not finish all counter "
						     "passes (kernel replay incomplete)");
	}
	if (!restart && s->sub) {  // no more launch names
		api.cuptiUnsubscribe(s->sub);
		s->sub = nullptr;
	}
	{
		GWB_PARAMS(CUpti_RangeProfiler_DecodeData_Params, p);
		p.pRangeProfilerObject = s->rp;
		CUPTI_TRY("cuptiRangeProfilerDecodeData", api.cuptiRangeProfilerDecodeData(&p));
		s->dropped += p.numOfRangeDropped;
	}
	{
		GWB_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params, p);
		p.pCounterDataImage = s->counters.data();
		p.counterDataImageSize = s->counters.size();
		CUPTI_TRY("cuptiRangeProfilerGetCounterDataInfo",
			  api.cuptiRangeProfilerGetCounterDataInfo(&p));
		nranges = p.numTotalRanges;
	}
	// this batch's launch names: the layer whose launches since the last batch cover it
	std::vector<std::string> batch;
	size_t drv_n, rt_n;
	bool names_lost;
	{
		std::lock_guard<std::mutex> lk(g_mu);
		drv_n = g_drv_n;
		rt_n = g_rt_n;
		names_lost = g_names_lost;
		size_t d = drv_n - s->drv_base, r = rt_n - s->rt_base;
		const std::vector<std::string> *v = nullptr;
		size_t base = 0;
		if (d == nranges || (d > nranges && r != nranges))
			v = &g_drv, base = s->drv_base, s->launches += d;
		else if (r >= nranges)
			v = &g_rt, base = s->rt_base, s->launches += r;
		else
			s->launches += nranges;
		if (v)
			for (size_t i = base; i < v->size() && i < base + nranges; i++)
				batch.push_back((*v)[i]);
	}
	s->drv_base = drv_n;
	s->rt_base = rt_n;
	const std::vector<std::string> *names = &batch;
	gwb_profile_range_fn fn = s->fn;
	void *ctx = s->ctx;
	bool debug = getenv("GWB_PROFILE_DEBUG") != nullptr;
	if (debug)
		fprintf(stderr, "gpu.profile: batch of %zu ranges (%zu named), %zu driver / %zu runtime "
				"launches so far%s, %zu dropped, chip %s, %zu metrics\n",
			nranges, batch.size(), drv_n, rt_n,
			names_lost ? " (names lost: out of memory)" : "", s->dropped, s->chip.c_str(),
			s->nmetrics);
	Registry reg;
	gwb_prof_each_registered(collect_registered, &reg);
	for (size_t i = 0; i < nranges; i++) {
		GWB_PARAMS(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params, ri);
		ri.pCounterDataImage = s->counters.data();
		ri.counterDataImageSize = s->counters.size();
		ri.rangeIndex = i;
		ri.rangeDelimiter = "/";
		CUPTI_TRY("cuptiRangeProfilerCounterDataGetRangeInfo",
			  api.cuptiRangeProfilerCounterDataGetRangeInfo(&ri));
		double v[kNumMetrics];
		for (size_t m = 0; m < kNumMetrics; m++)
			v[m] = -1;
		// all the configured metrics; where one cannot be evaluated, fewer (the tiers)
		size_t nm = 0;
		CUptiResult er = CUPTI_ERROR_UNKNOWN;
		for (size_t t = 0; t < sizeof(kTiers) / sizeof(kTiers[0]); t++) {
			if (kTiers[t] > s->nmetrics)
				continue;
			GWB_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params, ev);
			ev.pHostObject = s->host;
			ev.pCounterDataImage = s->counters.data();
			ev.counterDataImageSize = s->counters.size();
			ev.rangeIndex = i;
			ev.ppMetricNames = (const char **)kMetrics;
			ev.numMetrics = kTiers[t];
			ev.pMetricValues = v;
			if ((er = api.cuptiProfilerHostEvaluateToGpuValues(&ev)) == CUPTI_SUCCESS) {
				nm = kTiers[t];
				break;
			}
		}
		CUPTI_TRY("cuptiProfilerHostEvaluateToGpuValues", er);
		std::string cupti_name = ri.rangeName ? ri.rangeName : "";
		// without launch names (no callback), auto ranges are only numbered ("0", "1", ...)
		bool numbered = !cupti_name.empty() &&
				cupti_name.find_first_not_of("0123456789") == std::string::npos;
		std::string sym = i < names->size() ? (*names)[i]
							     : numbered ? std::string() : cupti_name;
		if (debug)
			fprintf(stderr, "gpu.profile: range %zu cupti '%s' launch '%s': %.2f %% %.0f ns "
					"%.2f %%\n",
				i, cupti_name.c_str(), sym.c_str(), v[0], v[1], v[2]);
		// ours: the registered function itself, or another instantiation of its template
		// (spmv_seg<8, int> launched under the label spmv_seg)
		std::string display, base;
		bool is_ours = false;
		auto it = reg.by_symbol.find(sym);
		if (it != reg.by_symbol.end()) {
			display = it->second;
			is_ours = true;
		} else if (!sym.empty()) {
			split_name(sym, &display, &base);
			auto b = reg.by_base.find(base);
			if (b != reg.by_base.end() && !b->second.empty()) {
				display = b->second;  // another instantiation of a registered kernel
				is_ours = true;
			} else if (reg.labels.count(base)) {
				display = base;  // launched under its own function name
				is_ours = true;
			}
		}
		if (display.empty())
			display = cupti_name.empty() ? "(unnamed kernel)" : "range " + cupti_name;
		gwb_profile_range r;
		r.name = display.c_str();
		r.symbol = sym.c_str();
		r.ours = is_ours;
		r.achieved_pct = v[0];
		auto at = [&](int m) { return (size_t)m < nm ? v[m] : -1.0; };
		r.duration_ns = at(M_DUR);
		r.sm_pct = at(M_SM);
		r.dram_read_bytes = at(M_DRAM_RD);
		r.dram_write_bytes = at(M_DRAM_WR);
		r.dram_pct = at(M_DRAM_PCT);
		r.l2_bytes = at(M_L2_BYTES);
		r.l2_pct = at(M_L2_PCT);
		r.flop_sp = nm > (size_t)M_FFMA ? at(M_FADD) + at(M_FMUL) + 2 * at(M_FFMA) : -1;
		r.flop_dp = nm > (size_t)M_DFMA ? at(M_DADD) + at(M_DMUL) + 2 * at(M_DFMA) : -1;
		r.peak_flops_sp = nm > (size_t)M_SM_HZ ? 2 * at(M_FFMA_PEAK) * at(M_SM_HZ) : -1;
		r.peak_flops_dp = nm > (size_t)M_SM_HZ ? 2 * at(M_DFMA_PEAK) * at(M_SM_HZ) : -1;
		r.peak_dram_bps = nm > (size_t)M_DRAM_HZ ? at(M_DRAM_PEAK) * at(M_DRAM_HZ) : -1;
		r.tensor_inst = at(M_TENSOR);
		if (fn)
			fn(&r, ctx);
	}
	s->measured += nranges;
	s->last_decode = gwb_now();
	if (!restart)
		return GWB_OK;
	gwb_status rc = init_counters(s);
	return rc ? rc : start(s);
}

static gwb_status end(gwb_profile_session *s, long *dropped)
{
	if (s->broken)
		return gwb_error(GWB_ENODEV, "gpu.profile: decoding the counters during the run "
					     "failed: %s", s->broken_msg.c_str());
	gwb_status rc = decode_batch(s, false);
	if (rc)
		return rc;
	if (dropped)
		*dropped = (long)(s->launches > s->measured ? s->launches - s->measured : s->dropped);
	return GWB_OK;
}
#endif  // GWB_CUPTI_HEADERS

extern "C" gwb_status gwb_gpu_profile_begin(int max_ranges, gwb_profile_range_fn fn, void *ctx,
					    gwb_profile_session **out)
{
	*out = nullptr;
	if (max_ranges < 1 || max_ranges > 100000)
		return gwb_error(GWB_EINVAL, "gpu.profile: max_ranges must be 1..100000 (got %d)",
				 max_ranges);
#ifndef GWB_CUPTI_HEADERS
	return gwb_error(GWB_ENODEV, "this build of gwb was compiled without CUPTI's headers "
				     "(cupti_range_profiler.h was not found beside cuda_runtime.h)");
#else
	if (g_active)
		return gwb_error(GWB_EINVAL, "gpu.profile: a profile is already being measured "
					     "(gpu.profile calls do not nest)");
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && *inj)  // compute-sanitizer, Nsight Compute/Systems: they own the counters
		return gwb_error(GWB_ENODEV,
				 "a CUDA tool is attached to this process (CUDA_INJECTION64_PATH=%s: "
				 "compute-sanitizer, Nsight Compute or Nsight Systems) and holds the "
				 "GPU's counters; run without the tool",
				 inj);
	gwb_profile_session *s = new (std::nothrow) gwb_profile_session;
	if (!s)
		return gwb_error(GWB_ENOMEM, "gpu.profile: out of host memory");
	s->max_ranges = max_ranges;
	s->fn = fn;
	s->ctx = ctx;
	s->thread = pthread_self();
	g_active = true;
	gwb_status rc;
	try {  // nothing may escape into C
		rc = begin(s);
	} catch (...) {
		rc = gwb_error(GWB_ENOMEM, "gpu.profile: out of host memory starting the profiler");
	}
	if (rc) {
		char msg[1024];
		snprintf(msg, sizeof(msg), "%s", gwb_errmsg());
		session_release(s);
		return gwb_error(rc, "%s", msg);
	}
	s->last_decode = gwb_now();
	g_sess = s;
	*out = s;
	return GWB_OK;
#endif
}

extern "C" gwb_status gwb_gpu_profile_end(gwb_profile_session *s, long *dropped)
{
	if (dropped)
		*dropped = 0;
	if (!s)
		return gwb_error(GWB_EINVAL, "gpu.profile: no profile session");
#ifndef GWB_CUPTI_HEADERS
	delete s;
	return GWB_OK;
#else
	gwb_status rc;
	try {  // nothing may escape into C
		rc = end(s, dropped);
	} catch (...) {
		rc = gwb_error(GWB_ENOMEM, "gpu.profile: out of host memory decoding the counters");
	}
	char msg[1024];
	snprintf(msg, sizeof(msg), "%s", rc ? gwb_errmsg() : "");
	session_release(s);
	return rc ? gwb_error(rc, "%s", msg) : GWB_OK;
#endif
}

extern "C" void gwb_gpu_profile_tick(void)
{
#ifdef GWB_CUPTI_HEADERS
	gwb_profile_session *s = g_sess;
	if (!s || s->broken || !s->started || !pthread_equal(s->thread, pthread_self()) ||
	    gwb_now() - s->last_decode < GWB_PROFILE_LIVE_S)
		return;
	gwb_status rc;
	try {  // nothing may escape into C
		rc = decode_batch(s, true);
	} catch (...) {
		rc = gwb_error(GWB_ENOMEM, "out of host memory decoding the counters");
	}
	if (rc) {  // measured no further; end() says why
		s->broken = true;
		s->broken_msg = gwb_errmsg();
	}
#endif
}

extern "C" void gwb_gpu_profile_abort(gwb_profile_session *s)
{
#ifdef GWB_CUPTI_HEADERS
	if (s) {
		cudaDeviceSynchronize();
		cudaGetLastError();
	}
	session_release(s);
#else
	delete s;
#endif
}

extern "C" const char *gwb_gpu_profile_library(void)
{
	return g_lib_path.c_str();
}
