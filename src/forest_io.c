/* forest_io.c - the forest's files (forest.h): .gwbf save/load (versioned, FNV-1a checksum,
 * every count checked against the file's size before anything is allocated; versions 1-2
 * still load) through fileio.c's atomic save, and the JSON export of the trees. */
#define _GNU_SOURCE
#include "forest.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "fmt.h"
#include "intr.h"

/* ---- files ---------------------------------------------------------------------------------- */

static const char magic[10] = "GWBFOREST";  /* 9 letters and a NUL */

typedef struct wbuf {
	unsigned char *p;
	size_t n, cap;
	bool oom;
} wbuf;

static void put(wbuf *b, const void *v, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n > b->cap) {
		size_t c = b->cap ? b->cap : 4096;
		unsigned char *q;
		while (c < b->n + n)
			c *= 2;
		if (!(q = realloc(b->p, c))) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = c;
	}
	memcpy(b->p + b->n, v, n);
	b->n += n;
}

static void put_u32(wbuf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(wbuf *b, uint64_t v) { put(b, &v, 8); }
static void put_f64(wbuf *b, double v) { put(b, &v, 8); }

static void put_str(wbuf *b, const char *s)
{
	if (!s) {
		put_u32(b, UINT32_MAX);
		return;
	}
	put_u32(b, (uint32_t)strlen(s));
	put(b, s, strlen(s));
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

gwb_status gwb_forest_save(const gwb_forest *f, const char *path)
{
	wbuf b = {0};
	const gwb_rf_params *p = &f->params;
	size_t N = f->nodes;
	uint64_t len, sum;
	uint32_t ver = GWB_FOREST_VERSION;
	gwb_afile af;
	gwb_status st;
	FILE *fp;
	int j;
	bool ok;

	put_u32(&b, (uint32_t)f->task);
	put_u32(&b, (uint32_t)f->features);
	put_u32(&b, (uint32_t)f->classes);
	put_u32(&b, (uint32_t)f->outputs);
	put_u32(&b, (uint32_t)f->criterion);
	put_u32(&b, (uint32_t)f->trees);
	put_u64(&b, f->train_rows);
	put_u64(&b, N);
	/* parameters (no pointers, no thread count) */
	put_u32(&b, (uint32_t)p->depth);
	put_u32(&b, (uint32_t)p->bins);
	put_u32(&b, (uint32_t)p->max_features);
	put_f64(&b, p->max_features_value);
	put_u32(&b, (uint32_t)p->min_leaf);
	put_u32(&b, (uint32_t)p->min_split);
	put_f64(&b, p->min_impurity_decrease);
	put_u32(&b, p->bootstrap);
	put_u32(&b, p->class_weight_balanced);
	put_u64(&b, p->seed);
	put_u32(&b, (uint32_t)p->block);
	put_u64(&b, p->quantile_sample);
	put_u32(&b, (uint32_t)f->mtry);
	put_u32(&b, (uint32_t)f->backend);
	put_u32(&b, p->subtract);  /* version 2 */
	/* summary */
	put_u32(&b, (uint32_t)f->depth_reached);
	put_u64(&b, f->leaves);
	put_f64(&b, f->oob);
	put_u64(&b, f->oob_rows);
	/* names */
	put_str(&b, f->target);
	for (j = 0; j < f->features; j++)
		put_str(&b, f->names[j]);
	for (j = 0; j < f->classes; j++)
		put_str(&b, f->class_names[j]);
	put(&b, f->class_weight, (size_t)f->classes * sizeof(double));
	put(&b, f->importance, (size_t)f->features * sizeof(double));
	/* categorical levels (version 3) */
	for (j = 0; j < f->features; j++) {
		int k, n = f->cat_levels && f->cat_levels[j] ? f->cat_count[j] : -1;
		put_u32(&b, n < 0 ? UINT32_MAX : (uint32_t)n);
		for (k = 0; k < n; k++)
			put_str(&b, f->cat_levels[j][k]);
	}
	/* nodes */
	put(&b, f->tree_offset, ((size_t)f->trees + 1) * sizeof(int64_t));
	put(&b, f->feature, N * sizeof(int32_t));
	put(&b, f->threshold_bin, N);
	put(&b, f->threshold, N * sizeof(float));
	put(&b, f->nan_left, N);
	put(&b, f->left, N * sizeof(int32_t));
	put(&b, f->right, N * sizeof(int32_t));
	put(&b, f->count, N * sizeof(int32_t));
	put(&b, f->weight, N * sizeof(double));
	put(&b, f->impurity, N * sizeof(float));
	put(&b, f->value, N * (size_t)f->outputs * sizeof(float));
	if (b.oom) {
		free(b.p);
		return gwb_error(GWB_ENOMEM, "rf: out of memory writing %s", path);
	}
	len = b.n;
	sum = fnv1a(b.p, b.n);
	if ((st = gwb_afile_open(&af, path, "rf: save"))) {
		free(b.p);
		return st;
	}
	fp = af.fp;
	ok = fwrite(magic, 1, sizeof(magic), fp) == sizeof(magic) && fwrite(&ver, 4, 1, fp) == 1 &&
	     fwrite(&len, 8, 1, fp) == 1 && fflush(fp) == 0;
	st = ok ? gwb_afile_write(&af, b.p, b.n) : GWB_OK;   /* (stops on Ctrl-C) */
	ok = ok && !st && fwrite(&sum, 8, 1, fp) == 1;
	free(b.p);
	if (!ok) {
		if (!st)
			st = gwb_error(GWB_EIO, "rf: writing %s failed: %s; it was left as it was",
				       path, strerror(errno));
		gwb_afile_abort(&af);
		return st;
	}
	return gwb_afile_commit(&af);
}

typedef struct rbuf {
	const unsigned char *p;
	size_t n, at;
	bool bad;
} rbuf;

static void get(rbuf *b, void *v, size_t n)
{
	if (b->bad || n > b->n - b->at) {
		b->bad = true;
		memset(v, 0, n);
		return;
	}
	memcpy(v, b->p + b->at, n);
	b->at += n;
}

static uint32_t get_u32(rbuf *b) { uint32_t v; get(b, &v, 4); return v; }
static uint64_t get_u64(rbuf *b) { uint64_t v; get(b, &v, 8); return v; }
static double get_f64(rbuf *b) { double v; get(b, &v, 8); return v; }

static char *get_str(rbuf *b)
{
	uint32_t n = get_u32(b);
	char *s;

	if (n == UINT32_MAX || b->bad)
		return NULL;
	if (n > b->n - b->at) {
		b->bad = true;
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (!s) {
		b->bad = true;
		return NULL;
	}
	get(b, s, n);
	s[n] = '\0';
	return s;
}

/* A count read from a file, each item at least `per` bytes, against the `left` bytes that
 * can hold them: checked before anything is allocated for them. */
static gwb_status fits(const char *path, const char *field, uint64_t count, uint64_t per,
		       uint64_t left)
{
	if (count <= left / per)
		return GWB_OK;
	return gwb_error(GWB_ECORRUPT, "rf.load: %s is corrupt: %s = %llu, but %llu bytes hold at "
			 "most %llu (%llu bytes each)", path, field, (unsigned long long)count,
			 (unsigned long long)left, (unsigned long long)(left / per),
			 (unsigned long long)per);
}

/* The version-3 level lists: per feature a u32 count (UINT32_MAX: numeric), then the labels. */
static gwb_status load_levels(rbuf *b, gwb_forest *f, const char *path)
{
	gwb_status st;
	int j, k;

	f->cat_levels = calloc((size_t)f->features + 1, sizeof(char **));
	f->cat_count = calloc((size_t)f->features + 1, sizeof(int));
	if (!f->cat_levels || !f->cat_count)
		return gwb_error(GWB_ENOMEM, "rf.load: out of memory reading %s", path);
	for (j = 0; j < f->features; j++) {
		uint32_t n = get_u32(b);
		if (b->bad)
			break;
		if (n == UINT32_MAX)
			continue;
		/* each label takes at least its 4-byte length */
		if ((st = fits(path, "levels", n, 4, b->n - b->at)))
			return st;
		if (n > INT32_MAX - 1)
			break;
		if (!(f->cat_levels[j] = calloc((size_t)n + 1, sizeof(char *))))
			return gwb_error(GWB_ENOMEM, "rf.load: out of memory reading %s", path);
		f->cat_count[j] = (int)n;
		for (k = 0; k < (int)n && !b->bad; k++)
			f->cat_levels[j][k] = get_str(b);
	}
	if (b->bad || j < f->features)
		return gwb_error(GWB_ECORRUPT, "rf.load: %s has a valid checksum but an impossible "
				 "layout in its categorical levels (written by another program?)",
				 path);
	return GWB_OK;
}

gwb_status gwb_forest_load(const char *path, gwb_forest **out)
{
	FILE *fp;
	unsigned char *data = NULL, head[22];
	long size;
	uint32_t ver;
	uint64_t len, sum;
	rbuf b = {0};
	gwb_forest *f = NULL;
	gwb_status st = GWB_OK;
	size_t N;
	int j;

	*out = NULL;
	fp = fopen(path, "rb");
	if (!fp)
		return gwb_error(GWB_EIO, "rf.load: cannot open %s: %s", path, strerror(errno));
	if (fseek(fp, 0, SEEK_END) || (size = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET)) {
		fclose(fp);
		return gwb_error(GWB_EIO, "rf.load: cannot read %s: %s", path, strerror(errno));
	}
	if (size < (long)sizeof(head) || fread(head, 1, sizeof(head), fp) != sizeof(head) ||
	    memcmp(head, magic, sizeof(magic))) {
		fclose(fp);
		return gwb_error(GWB_EPARSE, "rf.load: %s is not a gwb forest file (no GWBFOREST "
				 "header): save one with f:save(path)", path);
	}
	memcpy(&ver, head + 10, 4);
	memcpy(&len, head + 14, 8);
	if (ver < 1 || ver > GWB_FOREST_VERSION) {
		fclose(fp);
		return gwb_error(GWB_EPARSE, "rf.load: %s is a forest file of version %u; this gwb "
				 "reads versions 1 to %d (a newer gwb wrote it? load it there)", path,
				 ver, GWB_FOREST_VERSION);
	}
	/* (a file shorter than the header and the checksum would make the length below wrap:
	 * a header that claims 2^64 - 1 bytes then asked malloc for 0) */
	if ((uint64_t)size < sizeof(head) + 8 || len != (uint64_t)size - sizeof(head) - 8) {
		fclose(fp);
		return gwb_error(GWB_ECORRUPT, "rf.load: %s is truncated or has trailing bytes (%ld "
				 "bytes, the header says %llu of data after its %zu and before the "
				 "8-byte checksum): the file is damaged", path, size,
				 (unsigned long long)len, sizeof(head));
	}
	data = malloc(len + 1);
	if (!data) {
		fclose(fp);
		return gwb_error(GWB_ENOMEM, "rf.load: out of memory for %s (%llu bytes)", path,
				 (unsigned long long)len);
	}
	if (fread(data, 1, len, fp) != len || fread(&sum, 8, 1, fp) != 1) {
		fclose(fp);
		free(data);
		return gwb_error(GWB_ECORRUPT, "rf.load: %s is truncated", path);
	}
	fclose(fp);
	if (fnv1a(data, len) != sum) {
		free(data);
		return gwb_error(GWB_ECORRUPT, "rf.load: %s failed its checksum: the file is damaged",
				 path);
	}
	b.p = data;
	b.n = len;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto oom;
	f->task = (gwb_task)get_u32(&b);
	f->features = (int)get_u32(&b);
	f->classes = (int)get_u32(&b);
	f->outputs = (int)get_u32(&b);
	f->criterion = (gwb_rf_criterion)get_u32(&b);
	f->trees = (int)get_u32(&b);
	f->train_rows = get_u64(&b);
	N = get_u64(&b);
	if (b.bad || f->features < 1 || f->features > (1 << 24) || f->classes < 0 ||
	    f->classes > (1 << 24) || f->trees < 1 || f->trees > (1 << 24) ||
	    f->outputs != (f->classes ? f->classes : 1) || (unsigned)f->task > 1 ||
	    (unsigned)f->criterion > GWB_CRIT_MSE)
		goto corrupt;
	if ((st = fits(path, "features", (uint64_t)f->features, 4 + 8, len)) ||
	    (st = fits(path, "classes", (uint64_t)f->classes, 4 + 8, len)) ||
	    (st = fits(path, "trees", (uint64_t)f->trees + 1, 8, len)) ||
	    (st = fits(path, "nodes", N, 34 + 4 * (uint64_t)f->outputs, len)))
		goto out_free;
	gwb_rf_params_init(&f->params);
	f->params.trees = f->trees;
	f->params.criterion = f->criterion;
	f->params.depth = (int)get_u32(&b);
	f->params.bins = (int)get_u32(&b);
	f->params.max_features = (gwb_rf_mf)get_u32(&b);
	f->params.max_features_value = get_f64(&b);
	f->params.min_leaf = (int)get_u32(&b);
	f->params.min_split = (int)get_u32(&b);
	f->params.min_impurity_decrease = get_f64(&b);
	f->params.bootstrap = get_u32(&b) != 0;
	f->params.class_weight_balanced = get_u32(&b) != 0;
	f->params.seed = get_u64(&b);
	f->params.block = (int)get_u32(&b);
	f->params.quantile_sample = get_u64(&b);
	f->params.threads = 0;
	f->params.progress = false;
	f->mtry = (int)get_u32(&b);
	f->backend = (gwb_backend)get_u32(&b);
	f->file_version = (int)ver;
	if (ver >= 2) {
		uint32_t sub = get_u32(&b);
		if (sub > 1)
			goto corrupt;
		f->params.subtract = sub != 0;
	}
	f->bins_used = f->params.bins;
	f->depth_reached = (int)get_u32(&b);
	f->leaves = get_u64(&b);
	f->oob = get_f64(&b);
	f->oob_rows = get_u64(&b);
	snprintf(f->backend_why, sizeof(f->backend_why), "loaded from %s", path);
	f->names = calloc((size_t)f->features + 1, sizeof(char *));
	f->importance = calloc((size_t)f->features + 1, sizeof(double));
	f->class_names = calloc((size_t)f->classes + 1, sizeof(char *));
	f->class_weight = calloc((size_t)f->classes + 1, sizeof(double));
	f->tree_offset = calloc((size_t)f->trees + 1, sizeof(int64_t));
	if (!f->names || !f->importance || !f->class_names || !f->class_weight || !f->tree_offset)
		goto oom;
	f->target = get_str(&b);
	for (j = 0; j < f->features; j++)
		f->names[j] = get_str(&b);
	for (j = 0; j < f->classes; j++)
		f->class_names[j] = get_str(&b);
	get(&b, f->class_weight, (size_t)f->classes * sizeof(double));
	get(&b, f->importance, (size_t)f->features * sizeof(double));
	if (ver >= 3 && (st = load_levels(&b, f, path)))
		goto out_free;
	get(&b, f->tree_offset, ((size_t)f->trees + 1) * sizeof(int64_t));
	if (b.bad)
		goto corrupt;
	/* every node takes 34 bytes and 4 per output: a count beyond what is left is a lie */
	if ((st = fits(path, "nodes", N, 34 + 4 * (uint64_t)f->outputs, len - b.at)))
		goto out_free;
	if ((unsigned)f->backend > GWB_BACKEND_GPU ||
	    (unsigned)f->params.max_features > GWB_MF_COUNT)
		goto corrupt;
	if ((st = gwb_forest_alloc_nodes(f, N)))
		goto out_free;
	get(&b, f->feature, N * sizeof(int32_t));
	get(&b, f->threshold_bin, N);
	get(&b, f->threshold, N * sizeof(float));
	get(&b, f->nan_left, N);
	get(&b, f->left, N * sizeof(int32_t));
	get(&b, f->right, N * sizeof(int32_t));
	get(&b, f->count, N * sizeof(int32_t));
	get(&b, f->weight, N * sizeof(double));
	get(&b, f->impurity, N * sizeof(float));
	get(&b, f->value, N * (size_t)f->outputs * sizeof(float));
	if (b.bad || b.at != b.n)
		goto corrupt;
	if ((st = gwb_forest_validate(f))) {
		char why[256];
		snprintf(why, sizeof(why), "%s", gwb_errmsg());  /* not formatted into itself */
		st = gwb_error(GWB_ECORRUPT, "rf.load: %s: %s", path, why);
		goto out_free;
	}
	free(data);
	*out = f;
	return GWB_OK;
corrupt:
	st = gwb_error(GWB_ECORRUPT, "rf.load: %s has a valid checksum but an impossible layout "
		       "(written by another program?)", path);
	goto out_free;
oom:
	st = gwb_error(GWB_ENOMEM, "rf.load: out of memory reading %s", path);
out_free:
	if (f && !f->names)
		f->features = 0;
	if (f && !f->class_names)
		f->classes = 0;
	gwb_forest_free(f);
	free(data);
	return st;
}

static void json_str(FILE *fp, const char *s)
{
	if (!s) {
		fputs("null", fp);
		return;
	}
	fputc('"', fp);
	for (size_t n = strlen(s), k; *s; s += k, n -= k) {
		unsigned char c = (unsigned char)*s;
		k = gwb_utf8_seq((const unsigned char *)s, n);
		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20 || !k)
			fprintf(fp, "\\u%04x", c);   /* a control, or a byte of no valid UTF-8 */
		else
			fwrite(s, 1, k, fp);
		if (!k)
			k = 1;
	}
	fputc('"', fp);
}

static void json_num(FILE *fp, double v)
{
	if (isnan(v))
		fputs("null", fp);
	else if (isinf(v))
		fputs(v > 0 ? "\"inf\"" : "\"-inf\"", fp);
	else
		fprintf(fp, "%.9g", v);
}

gwb_status gwb_forest_export_json(const gwb_forest *f, const char *path)
{
	gwb_afile af;
	FILE *fp;
	int t, j, k;
	gwb_status st;

	if ((st = gwb_afile_open(&af, path, "rf: export_json")))
		return st;
	fp = af.fp;
	/* "version" is the JSON layout's own (1), not the binary file's */
	fprintf(fp, "{\"format\": \"gwb-forest\", \"version\": 1, \"task\": \"%s\", ",
		f->task == GWB_TASK_CLASSIFICATION ? "classification" : "regression");
	fputs("\"target\": ", fp);
	json_str(fp, f->target);
	fputs(", \"features\": [", fp);
	for (j = 0; j < f->features; j++) {
		if (j)
			fputs(", ", fp);
		json_str(fp, f->names[j]);
	}
	fputs("], \"classes\": [", fp);
	for (j = 0; j < f->classes; j++) {
		if (j)
			fputs(", ", fp);
		json_str(fp, f->class_names[j]);
	}
	fprintf(fp, "], \"criterion\": \"%s\", \"oob\": ", gwb_rf_criterion_name(f->criterion));
	json_num(fp, f->oob);
	fputs(", \"importance\": [", fp);
	for (j = 0; j < f->features; j++) {
		if (j)
			fputs(", ", fp);
		json_num(fp, f->importance[j]);
	}
	fputs("],\n\"trees\": [\n", fp);
	for (t = 0; t < f->trees; t++) {
		int64_t b = f->tree_offset[t], n = f->tree_offset[t + 1] - b, i;
		if (gwb_intr_pending() || ferror(fp))
			break;   /* commit says which */
		fprintf(fp, "%s{\"tree\": %d, \"nodes\": [\n", t ? ",\n" : "", t + 1);
		for (i = 0; i < n; i++) {
			int64_t g = b + i;
			fprintf(fp, "  {\"id\": %lld, ", (long long)i);
			if (f->feature[g] >= 0) {
				fprintf(fp, "\"feature\": %d, \"name\": ", f->feature[g]);
				json_str(fp, f->names[f->feature[g]]);
				fputs(", \"threshold\": ", fp);
				json_num(fp, f->threshold[g]);
				fprintf(fp, ", \"bin\": %d, \"nan_left\": %s, \"left\": %d, "
					"\"right\": %d, ", f->threshold_bin[g],
					f->nan_left[g] ? "true" : "false", f->left[g], f->right[g]);
			} else {
				fputs("\"leaf\": true, ", fp);
			}
			fprintf(fp, "\"count\": %d, \"weight\": ", f->count[g]);
			json_num(fp, f->weight[g]);
			fputs(", \"impurity\": ", fp);
			json_num(fp, f->impurity[g]);
			fputs(", \"value\": ", fp);
			if (f->classes) {
				fputc('[', fp);
				for (k = 0; k < f->outputs; k++) {
					if (k)
						fputs(", ", fp);
					json_num(fp, f->value[(size_t)g * (size_t)f->outputs + (size_t)k]);
				}
				fputc(']', fp);
			} else {
				json_num(fp, f->value[g]);
			}
			fprintf(fp, "}%s\n", i + 1 < n ? "," : "");
		}
		fputs("]}", fp);
	}
	fputs("\n]}\n", fp);
	return gwb_afile_commit(&af);   /* (reports a write error, refuses on Ctrl-C) */
}
