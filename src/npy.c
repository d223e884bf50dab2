/* npy.c - NumPy .npy read and write for 2-D float32/float64 arrays (npy.h).
 * The format (numpy/lib/format.py): the magic "\x93NUMPY", major and minor version bytes, the
 * header length (u16 little-endian for 1.0, u32 for 2.0 and 3.0), then a Python dict literal
 * {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), } padded with spaces and ended
 * by '\n' so that the data starts at a multiple of 64 bytes, then the data.
 * A Dataset saved as .npy also gets a sidecar <file>.json (written and read with jansson):
 * the column names, the target, the task, the classes (and the number each is saved as) and
 * the levels of categorical features, which the array alone cannot hold. */
#define _GNU_SOURCE
#include "npy.h"
#include "size.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "fileio.h"
#include "suggest.h"

#include <jansson.h>

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* The header is little-endian; so is every machine gwb builds for (x86-64, aarch64). */
static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

bool gwb_npy_path(const char *path)
{
	size_t n = strlen(path);

	return n >= 4 && !strcasecmp(path + n - 4, ".npy");
}

bool gwb_npy_is_npy(const char *path)
{
	FILE *f = fopen(path, "rb");
	char m[6];
	bool yes;

	if (!f)
		return false;
	yes = fread(m, 1, 6, f) == 6 && !memcmp(m, magic, 6);
	fclose(f);
	return yes;
}

/* The value after 'key': in the header dict, or NULL; *dup when the key is there twice (in
 * either quoting: a dict literal with a repeated key is not one numpy writes). */
static const char *dict_value(const char *h, const char *key, bool *dup)
{
	char k[32], k2[32];
	const char *p, *q;

	snprintf(k, sizeof(k), "'%s'", key);
	snprintf(k2, sizeof(k2), "\"%s\"", key);
	p = strstr(h, k);
	q = strstr(h, k2);
	*dup = (p && (strstr(p + 1, k) || q)) || (q && strstr(q + 1, k2));
	if (!p) {
		memcpy(k, k2, sizeof(k));
		p = q;
	}
	if (!p)
		return NULL;
	p += strlen(k);
	while (isspace((unsigned char)*p))
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

static gwb_status parse_header(const char *path, const char *h, gwb_npy *a)
{
	bool dd, dfo, dsh;
	const char *d = dict_value(h, "descr", &dd), *fo = dict_value(h, "fortran_order", &dfo),
		   *sh = dict_value(h, "shape", &dsh);
	char descr[32];
	size_t n = 0, dims[8];
	int nd = 0;

	if (dd || dfo || dsh)
		return gwb_error(GWB_EPARSE, "%s: the .npy header names '%s' twice (a damaged or "
				 "hand-made header): %.80s", path, dd ? "descr" : dfo ?
				 "fortran_order" : "shape", h);
	if (!d || !fo || !sh)
		return gwb_error(GWB_EPARSE, "%s: not a .npy header (%s%s%s missing): %.80s", path,
				 d ? "" : "'descr' ", fo ? "" : "'fortran_order' ", sh ? "" : "'shape' ",
				 h);
	if (*d != '\'' && *d != '"')
		return gwb_error(GWB_EINVAL, "%s: a structured or record array (descr %.40s); gwb "
				 "reads plain 2-D float arrays: save one column set as "
				 "np.asarray(a, dtype='<f8')", path, d);
	{
		char q = *d++;
		while (*d && *d != q && n + 1 < sizeof(descr))
			descr[n++] = *d++;
		descr[n] = '\0';
	}
	if (!strcmp(descr, "<f8") || !strcmp(descr, "=f8") || !strcmp(descr, "<d"))
		a->dtype = GWB_F64;
	else if (!strcmp(descr, "<f4") || !strcmp(descr, "=f4") || !strcmp(descr, "<f"))
		a->dtype = GWB_F32;
	else if (descr[0] == '>')
		return gwb_error(GWB_EINVAL, "%s: big-endian data ('%s'); gwb reads little-endian "
				 "float32/float64: save a.astype('<f%c')", path, descr,
				 descr[2] == '4' ? '4' : '8');
	else if (!strcmp(descr, "|O"))
		return gwb_error(GWB_EINVAL, "%s: an object array (pickled Python objects); gwb "
				 "reads float32/float64 arrays only", path);
	else
		return gwb_error(GWB_EINVAL, "%s: dtype '%s' is not supported: gwb reads float32 "
				 "('<f4') and float64 ('<f8') arrays; convert with "
				 "np.save(path, a.astype(np.float64))", path, descr);
	/* the literal alone: "Trueish" is not True */
	if (!strncmp(fo, "True", 4) && (fo[4] == ',' || fo[4] == '}' ||
					 isspace((unsigned char)fo[4])))
		a->fortran = true;
	else if (!strncmp(fo, "False", 5) && (fo[5] == ',' || fo[5] == '}' ||
					      isspace((unsigned char)fo[5])))
		a->fortran = false;
	else
		return gwb_error(GWB_EPARSE, "%s: fortran_order must be True or False (got %.10s)",
				 path, fo);
	if (*sh != '(')
		return gwb_error(GWB_EPARSE, "%s: shape must be a tuple (got %.20s)", path, sh);
	sh++;
	for (;;) {
		char *end;
		unsigned long long v;
		while (isspace((unsigned char)*sh) || *sh == ',')
			sh++;
		if (*sh == ')')
			break;
		errno = 0;
		v = strtoull(sh, &end, 10);
		if (end == sh || errno)
			return gwb_error(GWB_EPARSE, "%s: bad shape entry at '%.10s'", path, sh);
		if (nd < 8)
			dims[nd] = (size_t)v;
		nd++;
		sh = end;
		while (*sh == 'L')  /* Python 2 longs */
			sh++;
	}
	if (nd != 2)
		return gwb_error(GWB_EINVAL, "%s: a %d-D array; gwb reads 2-D arrays (rows x "
				 "columns)%s", path, nd,
				 nd == 1 ? ": save a.reshape(-1, 1) for one column" :
				 nd == 0 ? "" : ": reshape it to 2-D first");
	if (!dims[0] || !dims[1])
		return gwb_error(GWB_EINVAL, "%s: an empty array (shape (%zu, %zu))", path, dims[0],
				 dims[1]);
	a->rows = dims[0];
	a->cols = dims[1];
	return GWB_OK;
}

gwb_status gwb_npy_read(const char *path, gwb_npy *a)
{
	unsigned char pre[12];
	char *h = NULL;
	size_t hlen, pre_len, es, want;
	struct stat sb;
	gwb_status rc;
	FILE *f;

	memset(a, 0, sizeof(*a));
	f = fopen(path, "rb");
	if (!f)
		return gwb_error(GWB_EIO, "%s: cannot open: %s", path, strerror(errno));
	if (fread(pre, 1, 8, f) != 8 || memcmp(pre, magic, 6)) {
		fclose(f);
		return gwb_error(GWB_EPARSE, "%s: not a .npy file (no \\x93NUMPY magic)", path);
	}
	a->major = pre[6];
	a->minor = pre[7];
	if (a->major == 1) {
		if (fread(pre + 8, 1, 2, f) != 2)
			goto truncated;
		hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
		pre_len = 10;
	} else if (a->major == 2 || a->major == 3) {
		if (fread(pre + 8, 1, 4, f) != 4)
			goto truncated;
		hlen = le32(pre + 8);
		pre_len = 12;
	} else {
		fclose(f);
		return gwb_error(GWB_EINVAL, "%s: .npy format version %d.%d; gwb reads 1.0, 2.0 and "
				 "3.0", path, a->major, a->minor);
	}
	/* numpy writes a few hundred bytes of header for any 2-D array (it refuses to read more
	 * than 10,000 by default); a longer one, or one the file cannot hold, is not read into
	 * memory at all */
	if (hlen > (1u << 20)) {
		fclose(f);
		return gwb_error(GWB_EPARSE, "%s: header of %zu bytes (gwb reads headers up to 1 MiB); "
				 "not a .npy file", path, hlen);
	}
	if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (size_t)sb.st_size - pre_len < hlen) {
		fclose(f);
		return gwb_error(GWB_ECORRUPT, "%s: truncated: a header of %zu bytes in a file of "
				 "%zu", path, hlen, (size_t)sb.st_size);
	}
	h = malloc(hlen + 1);
	if (!h) {
		fclose(f);
		return gwb_error(GWB_ENOMEM, "%s: cannot allocate %zu bytes for the header", path, hlen);
	}
	if (fread(h, 1, hlen, f) != hlen) {
		free(h);
		goto truncated;
	}
	h[hlen] = '\0';
	rc = parse_header(path, h, a);
	free(h);
	if (rc) {
		fclose(f);
		return rc;
	}
	es = gwb_dtype_size(a->dtype);
	if (gwb_mul3_size(a->rows, a->cols, es, &want)) {
		fclose(f);
		return gwb_error(GWB_EINVAL, "%s: shape (%zu, %zu) is too large", path, a->rows,
				 a->cols);
	}
	/* the data the file holds after its header, against what the shape needs (compared so
	 * that nothing can wrap: the header's end is within the file, fread read it) */
	if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (size_t)sb.st_size - pre_len - hlen < want) {
		size_t have = (size_t)sb.st_size - pre_len - hlen;
		fclose(f);
		return gwb_error(GWB_ECORRUPT, "%s: truncated: %zu bytes of data where shape (%zu, "
				 "%zu) of %s needs %zu", path, have, a->rows, a->cols,
				 gwb_dtype_name(a->dtype), want);
	}
	a->data = malloc(want);
	if (!a->data) {
		fclose(f);
		return gwb_error(GWB_ENOMEM, "%s: cannot allocate %zu bytes for the data", path, want);
	}
	if (fread(a->data, 1, want, f) != want) {
		free(a->data);
		a->data = NULL;
		goto truncated;
	}
	fclose(f);
	return GWB_OK;
truncated:
	fclose(f);
	return gwb_error(GWB_ECORRUPT, "%s: truncated .npy file", path);
}

gwb_status gwb_npy_write(const char *path, const void *data, size_t rows, size_t cols,
			 gwb_dtype dtype, bool fortran)
{
	char h[256];
	unsigned char pre[12];
	size_t n, total, pre_len, want = rows * cols * gwb_dtype_size(dtype);
	gwb_afile af;
	gwb_status rc;

	n = (size_t)snprintf(h, sizeof(h), "{'descr': '%s', 'fortran_order': %s, 'shape': (%zu, "
			     "%zu), }", dtype == GWB_F64 ? "<f8" : "<f4", fortran ? "True" : "False",
			     rows, cols);
	pre_len = 10;  /* version 1.0: the header fits in 65535 bytes */
	total = (pre_len + n + 1 + 63) / 64 * 64;
	memset(h + n, ' ', total - pre_len - n - 1);
	h[total - pre_len - 1] = '\n';
	memcpy(pre, magic, 6);
	pre[6] = 1;
	pre[7] = 0;
	pre[8] = (unsigned char)((total - pre_len) & 0xff);
	pre[9] = (unsigned char)((total - pre_len) >> 8);
	if ((rc = gwb_afile_open(&af, path, "save")))
		return rc;
	if ((rc = gwb_afile_write(&af, pre, pre_len)) ||
	    (rc = gwb_afile_write(&af, h, total - pre_len)) ||
	    (rc = gwb_afile_write(&af, data, want))) {   /* (stops on Ctrl-C) */
		gwb_afile_abort(&af);
		return rc;
	}
	return gwb_afile_commit(&af);
}

static double elem(const gwb_npy *a, size_t i, size_t j)
{
	size_t k = a->fortran ? j * a->rows + i : i * a->cols + j;

	return a->dtype == GWB_F64 ? ((const double *)a->data)[k] : ((const float *)a->data)[k];
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* --- the sidecar (<file>.npy.json) ---------------------------------------------------------- */

/* What a sidecar says, checked against the array's columns; every pointer is into root. */
struct meta {
	json_t *root;
	const char **cols;   /* ncols names (the array's columns, in order) */
	size_t ncols;
	int target;          /* the target's column (0-based), -1 when not given */
	int task;            /* -1 when not given */
	json_t *classes;     /* class names (array of strings) or NULL */
	json_t *class_values;/* the number each class is saved as (array of numbers) or NULL */
	json_t *levels;      /* object: feature name -> its level names, or NULL */
};

static gwb_status meta_bad(const char *meta, const char *npy, const char *what)
{
	return gwb_error(GWB_EPARSE, "%s: %s; this sidecar of %s (written by d:save) does not fit "
			 "the array: rewrite it, or remove it to load the columns as col1, col2, ...",
			 meta, what, npy);
}

/* Read the sidecar at meta (m->root NULL when there is none) for an array of ncols columns. */
static gwb_status meta_read(const char *meta, const char *npy, size_t ncols, struct meta *m)
{
	json_error_t err;
	json_t *v;
	struct stat st;
	size_t i;

	memset(m, 0, sizeof(*m));
	m->target = m->task = -1;
	if (!meta || stat(meta, &st) || !S_ISREG(st.st_mode))
		return GWB_OK;
	if (!(m->root = json_load_file(meta, JSON_REJECT_DUPLICATES, &err)))
		return gwb_error(GWB_EPARSE, "%s:%d:%d: %s; the sidecar of %s is not valid JSON: fix "
				 "it, or remove it to load the columns as col1, col2, ...", meta,
				 err.line, err.column, err.text, npy);
	v = json_object_get(m->root, "columns");
	if (!json_is_array(v))
		return meta_bad(meta, npy, "no \"columns\" array of names");
	if (json_array_size(v) != ncols) {
		char why[96];
		snprintf(why, sizeof(why), "it names %zu columns, the array has %zu",
			 json_array_size(v), ncols);
		return meta_bad(meta, npy, why);
	}
	if (!(m->cols = calloc(ncols, sizeof(*m->cols))))
		return gwb_error(GWB_ENOMEM, "%s: out of memory", meta);
	m->ncols = ncols;
	for (i = 0; i < ncols; i++)
		if (!(m->cols[i] = json_string_value(json_array_get(v, i))))
			return meta_bad(meta, npy, "a column name that is not a string");
	v = json_object_get(m->root, "target");
	if (json_is_string(v)) {
		for (i = 0; i < ncols && strcmp(m->cols[i], json_string_value(v)); i++)
			;
		if (i == ncols)
			return meta_bad(meta, npy, "its \"target\" is none of its columns");
		m->target = (int)i;
	}
	v = json_object_get(m->root, "task");
	if (json_is_string(v))
		m->task = !strcmp(json_string_value(v), "regression") ? GWB_TASK_REGRESSION
								    : GWB_TASK_CLASSIFICATION;
	m->classes = json_object_get(m->root, "classes");
	m->class_values = json_object_get(m->root, "class_values");
	if (m->classes || m->class_values) {
		if (!json_is_array(m->classes) || !json_is_array(m->class_values) ||
		    json_array_size(m->classes) != json_array_size(m->class_values) ||
		    !json_array_size(m->classes) || json_array_size(m->classes) > 65536)
			return meta_bad(meta, npy, "\"classes\" and \"class_values\" are not two "
					"arrays of the same length");
		for (i = 0; i < json_array_size(m->classes); i++)
			if (!json_is_string(json_array_get(m->classes, i)) ||
			    !json_is_number(json_array_get(m->class_values, i)))
				return meta_bad(meta, npy, "a class that is not a string, or its value "
						"not a number");
	}
	m->levels = json_object_get(m->root, "levels");
	if (m->levels && !json_is_object(m->levels))
		return meta_bad(meta, npy, "\"levels\" is not an object");
	return GWB_OK;
}

static void meta_free(struct meta *m)
{
	free(m->cols);
	json_decref(m->root);
}

/* The level names of feature `name` from the sidecar into d's column f (none: untouched). */
static gwb_status meta_levels(const struct meta *m, const char *meta, const char *npy,
			      const char *name, gwb_dataset *d, int f)
{
	json_t *lv = m->levels ? json_object_get(m->levels, name) : NULL;
	size_t i, n;

	if (!lv)
		return GWB_OK;
	n = json_array_size(lv);
	if (!json_is_array(lv) || !n || n > (1u << 24))
		return meta_bad(meta, npy, "a \"levels\" entry that is not a list of names");
	if (!(d->cat_levels[f] = calloc(n, sizeof(char *))))
		return gwb_error(GWB_ENOMEM, "%s: out of memory", meta);
	d->cat_count[f] = (int)n;
	for (i = 0; i < n; i++) {
		const char *sv = json_string_value(json_array_get(lv, i));
		if (!sv)
			return meta_bad(meta, npy, "a level name that is not a string");
		if (!(d->cat_levels[f][i] = strdup(sv)))
			return gwb_error(GWB_ENOMEM, "%s: out of memory", meta);
	}
	return GWB_OK;
}

/* Where d:save puts the sidecar of a .npy at path: path + ".json", none for a target that is
 * not a file with a name (/dev/..., /proc/...). False when there is none. */
static bool meta_path(const char *path, char *out, size_t cap)
{
	if (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6))
		return false;
	return snprintf(out, cap, "%s.json", path) < (int)cap;
}

static gwb_status meta_write(const gwb_dataset *d, const char *path, const float *cv)
{
	char meta[4096], nb[32];
	json_t *root, *cols, *lv = NULL;
	char *text = NULL;
	gwb_status rc;
	int j;

	if (!meta_path(path, meta, sizeof(meta)))
		return GWB_OK;
	root = json_object();
	cols = json_array();
	if (!root || !cols || json_object_set_new(root, "columns", cols))
		goto nomem;
	for (j = 0; j <= d->features; j++) {
		const char *nm = j < d->features ? d->names[j] : d->target;
		if (!nm) {
			snprintf(nb, sizeof(nb), j < d->features ? "col%d" : "target", j + 1);
			nm = nb;
		}
		if (json_array_append_new(cols, json_string(nm)))
			goto nomem;
	}
	if (json_object_set_new(root, "target", json_string(d->target ? d->target : "target")) ||
	    json_object_set_new(root, "task", json_string(d->task == GWB_TASK_CLASSIFICATION
								 ? "classification" : "regression")))
		goto nomem;
	if (d->task == GWB_TASK_CLASSIFICATION) {
		json_t *cl = json_array(), *cvals = json_array();
		if (!cl || !cvals || json_object_set_new(root, "classes", cl) ||
		    json_object_set_new(root, "class_values", cvals))
			goto nomem;
		for (j = 0; j < d->classes; j++) {
			const char *nm = d->class_names && d->class_names[j] ? d->class_names[j] : "";
			if (json_array_append_new(cl, json_string(nm)) ||
			    json_array_append_new(cvals, json_real((double)cv[j])))
				goto nomem;
		}
	}
	for (j = 0; j < d->features; j++) {
		json_t *a;
		int k;
		if (!d->cat_levels || !d->cat_levels[j])
			continue;
		if (!lv && (!(lv = json_object()) || json_object_set_new(root, "levels", lv)))
			goto nomem;
		if (!(a = json_array()) ||
		    json_object_set_new(lv, json_string_value(json_array_get(cols, (size_t)j)), a))
			goto nomem;
		for (k = 0; k < d->cat_count[j]; k++)
			if (json_array_append_new(a, json_string(d->cat_levels[j][k] ? d->cat_levels[j][k]
										   : "")))
				goto nomem;
	}
	if (!(text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER)))
		goto nomem;
	rc = gwb_file_save(meta, text, strlen(text), "save");
	free(text);
	json_decref(root);
	return rc;
nomem:
	json_decref(root);
	return gwb_error(GWB_ENOMEM, "%s: out of memory for the sidecar (or a name that is not "
			 "UTF-8)", meta);
}

/* --- Datasets ------------------------------------------------------------------------------- */

gwb_status gwb_npy_load_dataset(const char *path, const char *meta, int target,
				const char *target_name, int task, gwb_dataset **out)
{
	gwb_npy a;
	gwb_dataset *d = NULL;
	double *vals = NULL;
	size_t i, nd = 0;
	int t, j, f, classes = 0;
	gwb_status rc;
	struct meta m;
	bool mclasses = false;   /* the target's classes come from the sidecar */

	*out = NULL;
	memset(&m, 0, sizeof(m));
	if ((rc = gwb_npy_read(path, &a)))
		return rc;
	if (a.cols < 2) {
		rc = gwb_error(GWB_EINVAL, "%s: one column; a Dataset needs at least one feature and "
			       "a target (mat.read reads it as a matrix)", path);
		goto out;
	}
	if (a.cols > 1u << 20) {
		rc = gwb_error(GWB_EINVAL, "%s: %zu columns is more than gwb's limit", path, a.cols);
		goto out;
	}
	if ((rc = meta_read(meta, path, a.cols, &m)))
		goto out;
	if (target_name) {
		/* a column name from the sidecar, or "colN" */
		target = 0;
		for (j = 0; j < (int)m.ncols && !target; j++)
			if (!strcmp(m.cols[j], target_name))
				target = j + 1;
		if (!target && !(sscanf(target_name, "col%d", &target) == 1 && target > 0)) {
			char near[256] = "";
			if (m.ncols && gwb_suggest(target_name, m.cols, m.ncols, NULL, near,
						   sizeof(near)))
				rc = gwb_error(GWB_EINVAL, "%s: no column \"%s\" (did you mean %s?)",
					       path, target_name, near);
			else
				rc = gwb_error(GWB_EINVAL, "%s: no column \"%s\"; %s", path,
					       target_name, m.ncols ? "its sidecar .json names the "
					       "columns" : "without a sidecar .json the columns are "
					       "col1, col2, ...: give an index or \"colN\"");
			goto out;
		}
	} else if (target == 0 && m.target >= 0) {
		target = m.target + 1;
	}
	t = target == 0 ? (int)a.cols : target < 0 ? (int)a.cols + 1 + target : target;
	if (t < 1 || t > (int)a.cols) {
		rc = gwb_error(GWB_EINVAL, "%s: target index %d out of range (the array has %zu "
			       "columns)", path, target, a.cols);
		goto out;
	}
	t--;
	/* the target's distinct values, for the task and the classes */
	vals = malloc(a.rows * sizeof(double));
	if (!vals) {
		rc = gwb_error(GWB_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	for (i = 0; i < a.rows; i++) {
		vals[i] = elem(&a, i, (size_t)t);
		if (isnan(vals[i])) {
			rc = gwb_error(GWB_EINVAL, "%s: row %zu: the target (column %d) is NaN", path,
				       i + 1, t + 1);
			goto out;
		}
	}
	qsort(vals, a.rows, sizeof(double), cmp_dbl);
	for (i = 0; i < a.rows; i++)
		if (i == 0 || vals[i] != vals[nd - 1])
			vals[nd++] = vals[i];
	/* the sidecar's task and classes hold when its target is this one */
	if (t == m.target && task < 0 && m.task >= 0)
		task = m.task;
	mclasses = t == m.target && m.classes && task != GWB_TASK_REGRESSION;
	if (mclasses)
		task = GWB_TASK_CLASSIFICATION;
	if (task < 0) {
		bool integral = true;
		for (i = 0; i < nd; i++)
			integral = integral && vals[i] == floor(vals[i]);
		task = integral && nd <= 32 && (nd <= 2 || nd * 2 <= a.rows) ? GWB_TASK_CLASSIFICATION
									    : GWB_TASK_REGRESSION;
	}
	if (task == GWB_TASK_CLASSIFICATION)
		classes = mclasses ? (int)json_array_size(m.classes) : (int)nd;
	if ((rc = gwb_dataset_new(a.rows, (int)a.cols - 1, (gwb_task)task, classes, &d)))
		goto out;
	for (j = 0, f = 0; j < (int)a.cols; j++) {
		char name[32];
		if (j == t)
			continue;
		for (i = 0; i < a.rows; i++)
			d->X[(size_t)f * a.rows + i] = (float)elem(&a, i, (size_t)j);
		snprintf(name, sizeof(name), "col%d", j + 1);
		if (!(d->names[f] = strdup(m.ncols ? m.cols[j] : name)))
			goto nomem;
		if (m.ncols && (rc = meta_levels(&m, meta, path, m.cols[j], d, f)))
			goto out;
		f++;
	}
	{
		char name[32];
		snprintf(name, sizeof(name), "col%d", t + 1);
		if (!(d->target = strdup(m.ncols ? m.cols[t] : name)))
			goto nomem;
	}
	if (mclasses) {
		/* each row's value is the number its class was saved as */
		for (j = 0; j < classes; j++)
			if (!(d->class_names[j] = strdup(json_string_value(json_array_get(m.classes,
											(size_t)j)))))
				goto nomem;
		for (i = 0; i < a.rows; i++) {
			double v = elem(&a, i, (size_t)t);
			for (j = 0; j < classes; j++)
				if ((float)json_number_value(json_array_get(m.class_values, (size_t)j)) ==
				    (float)v)
					break;
			if (j == classes) {
				rc = gwb_error(GWB_EPARSE, "%s: row %zu: the target value %g is none of "
					       "the classes its sidecar %s lists; remove the sidecar "
					       "or pass task = \"regression\"", path, i + 1, v, meta);
				goto out;
			}
			d->y[i] = (int32_t)j;
		}
	} else if (task == GWB_TASK_CLASSIFICATION) {
		for (j = 0; j < classes; j++) {
			char name[40];
			snprintf(name, sizeof(name), "%.17g", vals[j]);
			if (!(d->class_names[j] = strdup(name)))
				goto nomem;
		}
		for (i = 0; i < a.rows; i++) {
			double v = elem(&a, i, (size_t)t);
			double *p = bsearch(&v, vals, nd, sizeof(double), cmp_dbl);
			d->y[i] = (int32_t)(p - vals);
		}
	} else {
		for (i = 0; i < a.rows; i++)
			d->yr[i] = (float)elem(&a, i, (size_t)t);
	}
	*out = d;
	d = NULL;
	goto out;
nomem:
	rc = gwb_error(GWB_ENOMEM, "%s: out of memory for names", path);
out:
	meta_free(&m);
	gwb_dataset_free(d);
	free(vals);
	free(a.data);
	return rc;
}

gwb_status gwb_npy_save_dataset(const gwb_dataset *d, const char *path)
{
	size_t i, cols = (size_t)d->features + 1;
	float *buf, *cv = NULL;
	bool numeric = true;
	gwb_status rc;
	int j;

	if (d->rows > SIZE_MAX / cols / sizeof(float))
		return gwb_error(GWB_EINVAL, "%s: the Dataset is too large", path);
	for (j = 0; d->text && j < d->features; j++)
		if (d->text[j])
			return gwb_error(GWB_EINVAL, "%s: column \"%s\" holds free text, which a .npy "
					 "array of numbers cannot keep; save as .gwbd, .parquet or .csv, "
					 "or drop the column first (d:drop{\"%s\"})", path,
					 d->names[j] ? d->names[j] : "?", d->names[j] ? d->names[j] : "?");
	buf = malloc(d->rows * cols * sizeof(float));
	if (!buf)
		return gwb_error(GWB_ENOMEM, "%s: cannot allocate %zu bytes", path,
				 d->rows * cols * sizeof(float));
	if (d->task == GWB_TASK_CLASSIFICATION) {
		cv = malloc(((size_t)d->classes + 1) * sizeof(float));
		if (!cv) {
			free(buf);
			return gwb_error(GWB_ENOMEM, "%s: out of memory", path);
		}
		for (j = 0; j < d->classes; j++) {
			char *end = NULL;
			const char *nm = d->class_names ? d->class_names[j] : NULL;
			double v = nm ? strtod(nm, &end) : 0;
			numeric = numeric && nm && *nm && end && !*end;
			cv[j] = (float)v;
		}
		if (!numeric)
			for (j = 0; j < d->classes; j++)
				cv[j] = (float)j;
	}
	for (i = 0; i < d->rows; i++) {
		float *row = buf + i * cols;
		for (j = 0; j < d->features; j++)
			row[j] = d->X[(size_t)j * d->rows + i];
		row[d->features] = d->task == GWB_TASK_CLASSIFICATION ? cv[d->y[i]] : d->yr[i];
	}
	rc = gwb_npy_write(path, buf, d->rows, cols, GWB_F32, false);
	if (!rc)
		rc = meta_write(d, path, cv);
	free(buf);
	free(cv);
	return rc;
}

gwb_status gwb_npy_load_matrix(const char *path, gwb_matrix **out)
{
	gwb_npy a;
	gwb_matrix *A;
	gwb_status rc;

	*out = NULL;
	if ((rc = gwb_npy_read(path, &a)))
		return rc;
	A = calloc(1, sizeof(*A));
	if (!A) {
		free(a.data);
		return gwb_error(GWB_ENOMEM, "%s: out of memory", path);
	}
	/* the array's bytes are the matrix's: same dtype, order as layout */
	A->rows = a.rows;
	A->cols = a.cols;
	A->count = 1;
	A->dtype = a.dtype;
	A->layout = a.fortran ? GWB_COL_MAJOR : GWB_ROW_MAJOR;
	A->data = a.data;
	*out = A;
	return GWB_OK;
}

gwb_status gwb_npy_save_matrix(const gwb_matrix *A, const char *path)
{
	if (A->batched && A->count != 1)
		return gwb_error(GWB_EINVAL, "%s: a batch of %zu matrices; .npy files here hold one "
				 "2-D array: save B:matrix(i) one by one", path, A->count);
	return gwb_npy_write(path, A->data, A->rows, A->cols, A->dtype, A->layout == GWB_COL_MAJOR);
}
