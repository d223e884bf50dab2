/* test_verbs_gpu.c - the host half of the device filter that runs without a GPU:
 * gwb_verbs_gpu_program, which expands expr.c's fused OP_CMPC (a column compared with a
 * constant) back into OP_COL, OP_NUM and the comparison for kernels/verbs.cu's evaluator (which
 * knows the opcodes up to OP_CMPI). Each expanded program is run here by a copy of k_expr's
 * loop (a stack of doubles a row) and its mask compared with gwb_expr_mask's, over float64,
 * float32, int64 and category columns with NaN, -0, missing codes and ties at the constants. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "expr.h"
#include "status.h"
#include "verbs_gpu.h"

#define ROWS 12

static const double xv[ROWS] = {0.1, 0.5, 0.6, NAN, -0.0, 0.0, 2.0, 1e300, -3.5, 1.0, 0.1, 7.0};
static const float yv[ROWS] = {2.0f, 2.5f, -1.0f, 3.0f, NAN, 0.1f, 2.0f, -0.0f, 1.0f, 9.0f, 3.0f, 0.5f};
static const int64_t iv[ROWS] = {5, 0, -3, 5, 9007199254740993LL, GWB_I64_NA, 12, 5, 1, 0, 2, 3};
static const int32_t kv[ROWS] = {0, 1, -1, 1, 0, 0, 1, -1, 1, 0, 1, 1};
static char *levels[] = {"a", "b"};
static char *names[] = {"x", "y", "i", "k"};

static void columns(gwb_col *c)
{
	memset(c, 0, 4 * sizeof(*c));
	c[0] = (gwb_col){.n = ROWS, .type = GWB_COL_F64, .v = xv};
	c[1] = (gwb_col){.n = ROWS, .type = GWB_COL_F32, .v = yv};
	c[2] = (gwb_col){.n = ROWS, .type = GWB_COL_I64, .v = iv};
	c[3] = (gwb_col){.n = ROWS, .type = GWB_COL_I32, .v = kv, .levels = levels, .nlevels = 2};
}

/* kernels/verbs.cu's k_expr for row i, on the host (col_at: gwb_col_at) */
static int run_row(const gwb_expr_ins *p, int n, int depth, const gwb_col *cols, size_t i)
{
	double st[64];
	int sp = 0, pc;

	assert_true(depth <= 64);
	for (pc = 0; pc < n; pc++) {
		const gwb_expr_ins *in = &p[pc];
		switch (in->op) {
		case GWB_XOP_COL: st[sp++] = gwb_col_at(&cols[in->col], i); break;
		case GWB_XOP_NUM: st[sp++] = in->num; break;
		case GWB_XOP_ADD: st[sp - 2] = st[sp - 2] + st[sp - 1]; sp--; break;
		case GWB_XOP_SUB: st[sp - 2] = st[sp - 2] - st[sp - 1]; sp--; break;
		case GWB_XOP_MUL: st[sp - 2] = st[sp - 2] * st[sp - 1]; sp--; break;
		case GWB_XOP_DIV: st[sp - 2] = st[sp - 2] / st[sp - 1]; sp--; break;
		case GWB_XOP_LT: st[sp - 2] = st[sp - 2] < st[sp - 1]; sp--; break;
		case GWB_XOP_LE: st[sp - 2] = st[sp - 2] <= st[sp - 1]; sp--; break;
		case GWB_XOP_GT: st[sp - 2] = st[sp - 2] > st[sp - 1]; sp--; break;
		case GWB_XOP_GE: st[sp - 2] = st[sp - 2] >= st[sp - 1]; sp--; break;
		case GWB_XOP_EQ: st[sp - 2] = st[sp - 2] == st[sp - 1]; sp--; break;
		case GWB_XOP_NE: st[sp - 2] = !(st[sp - 2] == st[sp - 1]); sp--; break;
		case GWB_XOP_AND: st[sp - 2] = st[sp - 2] != 0 && st[sp - 1] != 0; sp--; break;
		case GWB_XOP_OR: st[sp - 2] = st[sp - 2] != 0 || st[sp - 1] != 0; sp--; break;
		case GWB_XOP_NEG: st[sp - 1] = -st[sp - 1]; break;
		case GWB_XOP_NOT: st[sp - 1] = st[sp - 1] == 0; break;
		case GWB_XOP_CMPI: {
			int64_t w = ((const int64_t *)cols[in->col].v)[i], c = in->ival;
			int cop = (int)in->num;
			st[sp++] = w == INT64_MIN ? cop == GWB_XOP_NE :
				   cop == GWB_XOP_LT ? w < c : cop == GWB_XOP_LE ? w <= c :
				   cop == GWB_XOP_GT ? w > c : cop == GWB_XOP_GE ? w >= c :
				   cop == GWB_XOP_EQ ? w == c : w != c;
			break;
		}
		case GWB_XOP_ISNAN: st[sp - 1] = isnan(st[sp - 1]) != 0; break;
		default: fail_msg("opcode %d left in the device's program", in->op);
		}
		assert_true(sp >= 1 && sp <= depth);
	}
	assert_int_equal(sp, 1);
	return st[0] != 0;
}

/* src compiled; *fused of its instructions are OP_CMPC; the expansion's mask = the CPU's */
static void check(const char *src, int want_fused)
{
	gwb_col cols[4];
	gwb_expr *e;
	gwb_expr_ins *p;
	const gwb_expr_ins *code;
	uint8_t mask[ROWS + 1];
	int n0, d0, n, depth, fused = 0, k;
	size_t i;

	columns(cols);
	if (gwb_expr_compile(src, names, cols, 4, &e))
		fail_msg("%s: %s", src, gwb_errmsg());
	code = gwb_expr_program(e, &n0, &d0);
	for (k = 0; k < n0; k++)
		fused += code[k].op == GWB_XOP_CMPC;
	if (want_fused >= 0)
		assert_int_equal(fused, want_fused);
	assert_int_equal(gwb_verbs_gpu_program(e, &p, &n, &depth), GWB_OK);
	assert_int_equal(n, n0 + 2 * fused);
	assert_true(depth >= 1 && depth <= d0 + 1);
	for (k = 0; k < n; k++)
		assert_true(p[k].op >= GWB_XOP_COL && p[k].op <= GWB_XOP_CMPI);
	assert_int_equal(gwb_expr_mask(e, cols, ROWS, mask), GWB_OK);
	for (i = 0; i < ROWS; i++)
		if (run_row(p, n, depth, cols, i) != mask[i])
			fail_msg("%s: row %zu: expanded %d, CPU %d", src, i, !mask[i], mask[i]);
	free(p);
	gwb_expr_free(e);
}

static void test_expand_cmpc(void **state)
{
	(void)state;
	check("x > 0.5", 1);
	check("x > 1 & y <= 2", 2);
	check("x >= 0.1 & x <= 0.6 | y == 3", 3);
	check("x != 0.1", 1);          /* NaN: != holds */
	check("x == 0", 1);            /* -0 and 0 */
	check("y < 2.5 | ~(y > 0.1)", 2);   /* float32: the constant's float */
	check("k == 'b' & x < 7", 2);  /* a category's code; missing (-1) is NaN */
	check("~(k != 'a')", 1);
	check("i == 5 | x > 1", 1);    /* CMPI stays */
	check("i >= 3 & i != 9007199254740993", 0);
	check("x * 2 > y", 0);         /* nothing to fuse */
	check("0.5 < x", 0);           /* the constant first: not fused */
	check("isnan(x) | (x > 0.5 & (y < 1 | (k == 'a' & (x < 2 | (y >= 0 & x != 1)))))", -1);
}

/* a program as deep as the device allows after the expansion (one more slot per CMPC at the
 * top of the stack) */
static void test_depth(void **state)
{
	gwb_col cols[4];
	gwb_expr *e;
	gwb_expr_ins *p;
	int n0, d0, n, depth;

	(void)state;
	columns(cols);
	assert_int_equal(gwb_expr_compile("x > 0.5", names, cols, 4, &e), GWB_OK);
	gwb_expr_program(e, &n0, &d0);
	assert_int_equal(n0, 1);
	assert_int_equal(gwb_verbs_gpu_program(e, &p, &n, &depth), GWB_OK);
	assert_int_equal(n, 3);
	assert_int_equal(depth, 2);
	assert_int_equal(p[0].op, GWB_XOP_COL);
	assert_int_equal(p[0].col, 0);
	assert_int_equal(p[1].op, GWB_XOP_NUM);
	assert_true(p[1].num == 0.5);
	assert_int_equal(p[2].op, GWB_XOP_GT);
	free(p);
	gwb_expr_free(e);
	/* a right-nested chain: each & waits on the stack under the next comparison */
	assert_int_equal(gwb_expr_compile("x > 0 & (y > 0 & (x < 5 & (y < 5 & k == 'a')))", names,
					  cols, 4, &e), GWB_OK);
	assert_int_equal(gwb_verbs_gpu_program(e, &p, &n, &depth), GWB_OK);
	assert_int_equal(n, 5 * 3 + 4);
	assert_int_equal(depth, 6);
	free(p);
	gwb_expr_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand_cmpc),
		cmocka_unit_test(test_depth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
