/* lapi_rf.h - what lapi_rf.c (the rf module) lends the other rf bindings (rf.search in
 * lapi_search.c): reading rf.train's options into parameters, its option names, pushing a
 * Forest userdata, and the layout of the Predictions userdata (read by lapi_metrics.c). */
#ifndef GWB_LAPI_RF_H
#define GWB_LAPI_RF_H

#include "dataset.h"
#include "forest.h"
#include "lapi.h"

/* The Predictions userdata (f:predict on the GPU; lapi_rf.c makes it): a prediction kept on
 * the device until read. lapi_metrics.c reads the layout to judge it where it lies, without a
 * call into lapi_rf.c. Uservalue 1: the forest's class names (nil where a class has none). */
#define GWB_PRED_MT "gwb.Predictions"
struct gwb_rf_gpu_pred;
typedef struct gwb_lua_pred {
	struct gwb_rf_gpu_pred *p;  /* NULL once closed */
	bool codes;        /* labels read as class numbers (f:predict(d, {codes = true})) */
	const char *note;  /* how the columns were matched and where d was, or NULL */
	char note_buf[320];  /* note's text when it says that d crossed to the GPU */
} gwb_lua_pred;

/* rf.train's option names (NULL-terminated). */
extern const char *const gwb_rf_train_keys[];

/* Fill p from the options at idx (may be nil), checking them against keys and naming fn in
 * errors. Leaves 0..2 userdata on the stack that hold the weights p points to: the caller keeps
 * them there until training is done. */
void gwb_lua_rf_params(lua_State *L, int idx, const char *fn, const gwb_dataset *d,
		       gwb_rf_params *p, const char *const *keys);

/* Push a Forest userdata owning f (freed with it; on a Lua error while pushing, freed too). */
void gwb_lua_push_forest(lua_State *L, gwb_forest *f);

/* The run-log record of a forest trained on the Dataset at data with the options at opts. */
void gwb_lua_rf_log_train(lua_State *L, const gwb_forest *f, int data, int opts, const char *kind);

#endif
