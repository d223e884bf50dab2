/* suggest.h - "did you mean": the nearest names to a misspelled one, for every place that
 * refuses a name (module functions, methods, fields, options, column names, CLI commands).
 * One rule: a table of synonyms from scikit-learn and pandas (n_estimators -> trees), then
 * the names within a small edit distance (Damerau-Levenshtein, case folded). */
#ifndef GWB_SUGGEST_H
#define GWB_SUGGEST_H

#include <stddef.h>

/* Write the names among names[0..n) nearest to word into out, each quoted after prefix (may
 * be NULL: "data." gives 'data.load') and joined with "or" ("'trees'", "'load' or 'lead'"; at
 * most three), and return how many were written: 0 (out is "") when none is near. A synonym
 * whose target is among names comes first. */
int gwb_suggest(const char *word, const char *const *names, size_t n, const char *prefix,
		char *out, size_t cap);

/* The same choice as indices into names: pick[0..k) (at most three), k returned. */
int gwb_suggest_pick(const char *word, const char *const *names, size_t n, size_t pick[3]);

/* The name that a synonym table maps word to (scikit-learn's and pandas' names for gwb's:
 * "n_estimators" -> "trees"), or NULL. */
const char *gwb_suggest_synonym(const char *word);

/* The edit distance (optimal string alignment, ASCII case folded) between a and b, capped at
 * cap + 1 (no need to know how far a far name is). */
int gwb_suggest_distance(const char *a, const char *b, int cap);

#endif
