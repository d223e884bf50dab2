/* lapi_rf.h - what the rf bindings lend each other: lapi_rf.c (the rf module) reads
 * rf.train's options into parameters for rf.search (lapi_search.c); lapi_forest.c (the Forest
 * userdata) pushes forests and their run-log records for both; lapi_rf_pred.c says how
 * predictions read (and holds the GPU's Predictions object) for lapi_forest.c; the layout of
 * the Predictions userdata is here so that lapi_metrics.c can judge one where it lies. */
#ifndef GWB_LAPI_RF_H
#define GWB_LAPI_RF_H

#include "dataset.h"
#include "forest.h"
#include "lapi.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/rf.h"   /* gwb_rf_out */
#endif

#define FOREST_MT "gwb.Forest"

/* The Forest userdata's box: f is NULL until the forest exists (and once it is closed). */
typedef struct fbox {
	gwb_forest *f;
} fbox;

/* The Predictions userdata (f:predict on the GPU; lapi_rf_pred.c makes it): a prediction kept
 * on the device until read. lapi_metrics.c reads the layout to judge it where it lies, without
 * a call into the rf bindings. Uservalue 1: the forest's class names (nil where a class has
 * none). */
#define GWB_PRED_MT "gwb.Predictions"
struct gwb_rf_gpu_pred;
typedef struct gwb_lua_pred {
	struct gwb_rf_gpu_pred *p;  /* NULL once closed */
	bool codes;        /* labels read as class numbers (f:predict(d, {codes = true})) */
	const char *note;  /* how the columns were matched and where d was, or NULL */
	char note_buf[320];  /* note's text when it says that d crossed to the GPU */
} gwb_lua_pred;

/* lapi_rf.c: rf.train's option names (NULL-terminated). */
extern const char *const gwb_rf_train_keys[];

/* Fill p from the options at idx (may be nil), checking them against keys and naming fn in
 * errors. Leaves 0..2 userdata on the stack that hold the weights p points to: the caller keeps
 * them there until training is done. */
void gwb_lua_rf_params(lua_State *L, int idx, const char *fn, const gwb_dataset *d,
		       gwb_rf_params *p, const char *const *keys);

/* lapi_forest.c: push a Forest userdata owning f (freed with it; on a Lua error while pushing,
 * freed too); push a new one that owns nothing yet (set b->f once the forest exists, so __gc is
 * safe whatever happens before). */
void gwb_lua_push_forest(lua_State *L, gwb_forest *f);
fbox *gwb_lua_forest_newbox(lua_State *L);

/* lapi_forest.c: the run-log record of a forest trained on the Dataset at data with the options
 * at opts; f.timing as a table pushed on the stack (rf.cv's summed timings too). */
void gwb_lua_rf_log_train(lua_State *L, const gwb_forest *f, int data, int opts, const char *kind);
void gwb_lua_rf_push_timing(lua_State *L, const gwb_forest *f);

/* lapi_forest.c: open the Forest class (and the Predictions class on a CUDA build). */
void gwb_lua_forest_newclass(lua_State *L);

/* lapi_rf_pred.c: a prediction (a float sum) shown to float precision (7 digits), so 0.65
 * reads 0.65 and not 0.64999997615814. */
lua_Number gwb_lua_rf_tidy(float x);

#ifdef GWB_HAVE_CUDA
/* lapi_rf_pred.c: predict on the GPU when that is where the work goes: push a Predictions
 * object (labels as class numbers when codes; note: what the result carries, or NULL) and
 * return true, else push nothing and return false (the caller uses the CPU). */
bool gwb_lua_rf_predict_gpu(lua_State *L, gwb_forest *f, gwb_dataset *d, gwb_rf_out what,
			    bool codes, const char *note);
void gwb_lua_rf_pred_newclass(lua_State *L);
#endif

#endif
