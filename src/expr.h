/* expr.h - the table expression language of d:filter("a > 5 & k == 'x'") and d:with{r = "a / b"}:
 * column names (`quoted names` for any other spelling), numbers, 'labels', + - * / < <= > >=
 * == != & | ~ ( ) and isnan(x). Compiled once per call into a small postfix program that is
 * run column-wise in blocks of rows over the thread pool. The caller owns a compiled program
 * and frees it with gwb_expr_free(). */
#ifndef GWB_EXPR_H
#define GWB_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "column.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gwb_expr gwb_expr;

/* Compile src against the columns names[0..n) / cols[0..n) (their kinds decide what is
 * allowed: labels compare with a category column of the same dictionary, arithmetic and
 * ordering need numbers, & | ~ need conditions). Errors are GWB_EPARSE with a message that
 * names the character where it went wrong, shows the text with a caret under it, and for an
 * unknown column or label names the nearest one. */
gwb_status gwb_expr_compile(const char *src, char *const *names, const gwb_col *cols, int n,
			    gwb_expr **out);
/* True when the result is a condition (a mask), false for a number. */
bool gwb_expr_is_mask(const gwb_expr *e);
/* Evaluate over rows [0, rows) of cols (the same columns it was compiled against): numbers
 * (NaN = missing) or, for a condition, 1 / 0. */
gwb_status gwb_expr_eval(const gwb_expr *e, const gwb_col *cols, size_t rows, double *out);
/* A condition's mask (GWB_EINVAL when the expression is a number). */
gwb_status gwb_expr_mask(const gwb_expr *e, const gwb_col *cols, size_t rows, uint8_t *out);
/* The rows where a condition holds, in order: *idx (the caller's, free()) and *k of them; no
 * mask of every row is made (GWB_EINVAL when the expression is a number). */
gwb_status gwb_expr_rows(const gwb_expr *e, const gwb_col *cols, size_t rows, size_t **idx,
			 size_t *k);
void gwb_expr_free(gwb_expr *e);

/* The compiled program, for another evaluator of the same semantics (the GPU's, verbs_gpu.h):
 * postfix instructions over a stack of doubles, one value a row. op is one of gwb_expr_op; col
 * the column (COL, CMPI, CMPC); num the constant (NUM, CMPC) or, for CMPI, the comparison
 * (GWB_XOP_LT .. GWB_XOP_NE) of an int64 column with the integer ival (missing: true only for
 * NE). CMPC is COL col, NUM num and the comparison ival (GWB_XOP_LT .. GWB_XOP_NE) fused when
 * compiling: the column's values compared with num as doubles (an evaluator without it expands
 * it back into those three: gwb_verbs_gpu_program). The program belongs to e; *n instructions,
 * *depth the deepest stack (as compiled, before fusing: at least the fused program's). */
enum gwb_expr_op { GWB_XOP_COL, GWB_XOP_NUM, GWB_XOP_ADD, GWB_XOP_SUB, GWB_XOP_MUL, GWB_XOP_DIV,
		   GWB_XOP_NEG, GWB_XOP_LT, GWB_XOP_LE, GWB_XOP_GT, GWB_XOP_GE, GWB_XOP_EQ,
		   GWB_XOP_NE, GWB_XOP_AND, GWB_XOP_OR, GWB_XOP_NOT, GWB_XOP_ISNAN, GWB_XOP_CMPI,
		   GWB_XOP_CMPC };
typedef struct gwb_expr_ins {
	int op;
	int col;
	double num;
	int64_t ival;
} gwb_expr_ins;
const gwb_expr_ins *gwb_expr_program(const gwb_expr *e, int *n, int *depth);

#ifdef __cplusplus
}
#endif
#endif
