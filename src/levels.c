/* levels.c - matching a Dataset's categorical levels onto a model's by label (levels.h): per
 * column a map from the data's codes to the model's (the model's labels sorted once, each of
 * the data's looked up), then a recoded copy of the data when some map is not the identity.
 * The text/number checks run first, so a refused column costs no copy. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levels.h"

typedef struct lab {
	const char *s;
	int code;
} lab;

static int cmp_lab(const void *a, const void *b)
{
	return strcmp(((const lab *)a)->s, ((const lab *)b)->s);
}

static const char *colname(const gwb_dataset *d, int j, char *buf, size_t n)
{
	if (d->names && d->names[j] && d->names[j][0])
		return d->names[j];
	snprintf(buf, n, "%d", j + 1);
	return buf;
}

/* "'a', 'b', 'c' and 4 more" for the first few of n labels. */
static void some_levels(char *buf, size_t sz, char **v, int n)
{
	size_t len = 0;
	int k;

	buf[0] = '\0';
	for (k = 0; k < n && k < 5 && len + 1 < sz; k++) {
		snprintf(buf + len, sz - len, "%s'%s'", k ? ", " : "", v[k] ? v[k] : "");
		len = strlen(buf);
	}
	if (n > 5 && len + 1 < sz)
		snprintf(buf + len, sz - len, " and %d more", n - 5);
	if (n == 0)
		snprintf(buf, sz, "none");
}

/* The first row of column x (rows entries) that is not missing, or rows. */
static size_t first_value(const float *x, size_t rows)
{
	size_t i;

	for (i = 0; i < rows; i++)
		if (!isnan(x[i]))
			return i;
	return rows;
}

/* map[c] = the model's code for d's level c of column j, -1 when it has none; *ident when the
 * map changes nothing. */
static gwb_status build_map(char **mlev, int mn, char **dlev, int dn, int *map, bool *ident)
{
	lab *sorted = malloc(sizeof(lab) * ((size_t)mn + 1));
	int c;

	if (!sorted)
		return gwb_error(GWB_ENOMEM, "levels: out of memory for %d labels", mn);
	for (c = 0; c < mn; c++) {
		sorted[c].s = mlev[c] ? mlev[c] : "";
		sorted[c].code = c;
	}
	qsort(sorted, (size_t)mn, sizeof(lab), cmp_lab);
	*ident = true;
	for (c = 0; c < dn; c++) {
		lab key = {dlev[c] ? dlev[c] : "", 0}, *hit;
		hit = mn ? bsearch(&key, sorted, (size_t)mn, sizeof(lab), cmp_lab) : NULL;
		map[c] = hit ? hit->code : -1;
		*ident &= map[c] == c;
	}
	free(sorted);
	return GWB_OK;
}

gwb_status gwb_levels_match(const gwb_dataset *d, char **const *levels, const int *count,
			    int features, bool strict, const char *fn, gwb_dataset **out,
			    gwb_levels_report *rep)
{
	int **maps = NULL, j, *all = NULL;
	gwb_dataset *r = NULL;
	gwb_status st = GWB_OK;
	char nb[16], lv[200];
	bool any = false;
	size_t i;

	*out = NULL;
	memset(rep, 0, sizeof(*rep));
	rep->column = -1;
	if ((st = gwb_dataset_text_check(d, fn)))
		return st;
	if (!levels || d->features != features)
		return GWB_OK;
	/* kinds first: a text column where the model has numbers, or the reverse */
	for (j = 0; j < features; j++) {
		bool mcat = levels[j] != NULL, dcat = d->cat_levels && d->cat_levels[j];
		const float *x = d->X + (size_t)j * d->rows;
		size_t at;
		if (mcat == dcat)
			continue;
		if ((at = first_value(x, d->rows)) == d->rows)
			continue;   /* every value missing: nothing to misread */
		if (dcat) {
			int c = (int)x[at];
			return gwb_error(GWB_EINVAL, "%s: column '%s' holds text (e.g. '%s' in row %zu) "
					 "but the model was trained on numbers there: give that "
					 "column as numbers (a placeholder such as 'n/a' can be "
					 "declared missing with data.load's missing option)", fn,
					 colname(d, j, nb, sizeof(nb)),
					 c >= 0 && c < d->cat_count[j] && d->cat_levels[j][c] ?
					 d->cat_levels[j][c] : "?", at + 1);
		}
		some_levels(lv, sizeof(lv), levels[j], count[j]);
		return gwb_error(GWB_EINVAL, "%s: column '%s' holds numbers (e.g. %.9g in row %zu) but "
				 "the model was trained on text levels there (%s): give that "
				 "column as the same labels", fn, colname(d, j, nb, sizeof(nb)),
				 (double)x[at], at + 1, lv);
	}
	maps = calloc((size_t)features + 1, sizeof(int *));
	if (!maps)
		return gwb_error(GWB_ENOMEM, "%s: out of memory matching levels", fn);
	for (j = 0; j < features; j++) {
		bool ident = true;
		if (!levels[j] || !d->cat_levels || !d->cat_levels[j])
			continue;
		if (!(maps[j] = malloc(sizeof(int) * ((size_t)d->cat_count[j] + 1)))) {
			st = gwb_error(GWB_ENOMEM, "%s: out of memory matching levels", fn);
			goto out_free;
		}
		if ((st = build_map(levels[j], count[j], d->cat_levels[j], d->cat_count[j], maps[j],
				    &ident)))
			goto out_free;
		/* an identity map needs no copy, unless the data holds more levels (unseen ones) */
		if (ident && d->cat_count[j] <= count[j]) {
			free(maps[j]);
			maps[j] = NULL;
			continue;
		}
		any = true;
	}
	if (!any)
		goto out_free;
	all = calloc((size_t)features + 1, sizeof(int));   /* the columns, then unseen values */
	if (!all) {
		st = gwb_error(GWB_ENOMEM, "%s: out of memory matching levels", fn);
		goto out_free;
	}
	for (j = 0; j < features; j++)
		all[j] = j;
	if ((st = gwb_dataset_select(d, all, features, &r)))
		goto out_free;
	memset(all, 0, sizeof(int) * (size_t)features);
	for (j = 0; j < features; j++) {
		float *x = r->X + (size_t)j * r->rows;
		int *map = maps[j], dn;
		char *seen;
		if (!map)
			continue;
		dn = d->cat_count[j];
		seen = calloc((size_t)dn + 1, 1);
		if (!seen) {
			st = gwb_error(GWB_ENOMEM, "%s: out of memory matching levels", fn);
			goto out_free;
		}
		for (i = 0; i < r->rows; i++) {
			int c;
			if (isnan(x[i]))
				continue;
			c = (int)x[i];
			if (c >= 0 && c < dn && map[c] >= 0) {
				x[i] = (float)map[c];
				continue;
			}
			if (strict) {
				some_levels(lv, sizeof(lv), levels[j], count[j]);
				st = gwb_error(GWB_EINVAL, "%s: column '%s' holds the level '%s' (row "
					       "%zu), which the model never saw in training (its "
					       "levels: %s); without strict = true it is scored as "
					       "missing", fn, colname(d, j, nb, sizeof(nb)),
					       c >= 0 && c < dn && d->cat_levels[j][c] ?
					       d->cat_levels[j][c] : "?", i + 1, lv);
				free(seen);
				goto out_free;
			}
			x[i] = NAN;
			rep->unseen++;
			if (!all[j]++)
				rep->unseen_columns++;
			if (c >= 0 && c < dn && !seen[c]) {
				seen[c] = 1;
				rep->unseen_levels++;
				if (rep->column < 0) {
					rep->column = j;
					snprintf(rep->example, sizeof(rep->example), "%s",
						 d->cat_levels[j][c] ? d->cat_levels[j][c] : "");
				}
			}
		}
		free(seen);
		/* the copy's dictionary is now the model's */
		gwb_strv_free(r->cat_levels[j], r->cat_count[j]);
		r->cat_count[j] = 0;
		if (!(r->cat_levels[j] = gwb_strv_copy(levels[j], count[j]))) {
			st = gwb_error(GWB_ENOMEM, "%s: out of memory matching levels", fn);
			goto out_free;
		}
		r->cat_count[j] = count[j];
	}
	rep->recoded = true;
	*out = r;
	r = NULL;
out_free:
	gwb_dataset_free(r);
	free(all);
	if (maps)
		for (j = 0; j < features; j++)
			free(maps[j]);
	free(maps);
	return st;
}
