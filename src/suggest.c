/* suggest.c - "did you mean" (suggest.h): the nearest of the names that exist to one that does
 * not, by a synonym table (the names people bring from scikit-learn and pandas) and by edit
 * distance. Used by the option readers (lapi.c), the misses of module and class lookups
 * reported by the front end's error handler, column names, and the CLI's commands. */
#include "suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* What a scikit-learn, pandas or NumPy user types, and gwb's name for it. */
static const char *const synonyms[][2] = {
	{"n_estimators", "trees"},
	{"estimators", "trees"},
	{"ntree", "trees"},
	{"num_trees", "trees"},
	{"max_depth", "depth"},
	{"max_features", "features"},
	{"mtry", "max_features"},
	{"features", "max_features"},
	{"random_state", "seed"},
	{"random_seed", "seed"},
	{"n_jobs", "threads"},
	{"nthread", "threads"},
	{"num_threads", "threads"},
	{"min_samples_leaf", "min_leaf"},
	{"min_samples_split", "min_split"},
	{"max_bins", "bins"},
	{"n_bins", "bins"},
	{"max_samples", "sample"},
	{"n_splits", "folds"},
	{"cv", "folds"},
	{"n_folds", "folds"},
	{"test_size", "fraction"},
	{"n_components", "k"},
	{"k_components", "k"},
	{"n_samples", "rows"},
	{"n_features", "features"},
	{"n_informative", "informative"},
	{"n_classes", "classes"},
	{"delimiter", "sep"},
	{"separator", "sep"},
	{"label", "target"},
	{"y", "target"},
	{"na_values", "missing"},
	{"device", "backend"},
	{"read_csv", "load"},
	{"read", "load"},
	{"open", "load"},
	{"to_csv", "write_csv"},
	{"fit", "train"},
	{"shape", "rows"},
	{"columns", "names"},
	{"info", "describe"},
	{"value_counts", "class_counts"},
	{"feature_importances_", "importance"},
	{"feature_importances", "importance"},
	{"train_test_split", "split"},
	{"cross_val_score", "cv"},
	{"eigh", "sym"},
	{"eigsh", "sparse"},
};

const char *gwb_suggest_synonym(const char *word)
{
	size_t i;

	for (i = 0; i < sizeof(synonyms) / sizeof(synonyms[0]); i++)
		if (!strcmp(word, synonyms[i][0]))
			return synonyms[i][1];
	return NULL;
}

int gwb_suggest_distance(const char *a, const char *b, int cap)
{
	/* three rows of the optimal-string-alignment table; names are short */
	enum { MAXN = 64 };
	int r0[MAXN + 1], r1[MAXN + 1], r2[MAXN + 1];
	int *pp = r0, *p = r1, *c = r2;
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > MAXN || lb > MAXN)
		return cap + 1;
	if ((la > lb ? la - lb : lb - la) > (size_t)cap)
		return cap + 1;
	for (j = 0; j <= lb; j++)
		p[j] = (int)j;
	for (i = 1; i <= la; i++) {
		int lo = cap + 1, *t;
		c[0] = (int)i;
		for (j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			int cost = ca != cb, v = p[j] + 1;
			if (c[j - 1] + 1 < v)
				v = c[j - 1] + 1;
			if (p[j - 1] + cost < v)
				v = p[j - 1] + cost;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < v)
				v = pp[j - 2] + 1;
			c[j] = v;
			if (v < lo)
				lo = v;
		}
		if (lo > cap)
			return cap + 1;
		t = pp;
		pp = p;
		p = c;
		c = t;
	}
	return p[lb] > cap ? cap + 1 : p[lb];
}

int gwb_suggest_pick(const char *word, const char *const *names, size_t n, size_t pick[3])
{
	const char *syn = gwb_suggest_synonym(word);
	size_t i, j, wl = strlen(word);
	int k = 0, best, lim;

	if (!wl)
		return 0;
	if (syn)
		for (i = 0; i < n; i++)
			if (names[i] && !strcmp(names[i], syn) && strcmp(syn, word)) {
				pick[k++] = i;
				break;
			}
	/* near: one edit for short names, a third of the length for longer ones (git's rule
	 * of thumb), and a name the word begins (a cut-short name: "class" -> "class_counts") */
	lim = wl <= 4 ? 1 : (int)(wl + 2) / 3;
	best = lim + 1;
	for (i = 0; i < n; i++) {
		int d;
		if (!names[i] || (syn && !strcmp(names[i], syn)))
			continue;
		d = gwb_suggest_distance(word, names[i], lim);
		if (d > lim && wl >= 3 && !strncmp(names[i], word, wl))
			d = lim;
		if (d < best && d > 0)
			best = d;
	}
	for (i = 0; i < n && k < 3 && best <= lim; i++) {
		int d, dup = 0;
		if (!names[i] || (syn && !strcmp(names[i], syn)))
			continue;
		d = gwb_suggest_distance(word, names[i], lim);
		if (d > lim && wl >= 3 && !strncmp(names[i], word, wl))
			d = lim;
		if (d != best)
			continue;
		/* the same name twice in the list (a method and a field) is said once */
		for (j = 0; j < i; j++)
			if (names[j] && !strcmp(names[j], names[i]))
				dup = 1;
		if (!dup)
			pick[k++] = i;
	}
	return k;
}

int gwb_suggest(const char *word, const char *const *names, size_t n, const char *prefix,
		char *out, size_t cap)
{
	size_t pick[3], len = 0;
	int k = gwb_suggest_pick(word, names, n, pick), i;

	if (!cap)
		return 0;
	out[0] = '\0';
	for (i = 0; i < k && len < cap; i++) {
		snprintf(out + len, cap - len, "%s'%s%s'", i ? " or " : "", prefix ? prefix : "",
			 names[pick[i]]);
		len = strlen(out);
	}
	return k;
}
