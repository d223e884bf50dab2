/* expr.c - the table expression language (expr.h): a tokenizer and a Pratt parser that emit a
 * postfix program while checking kinds (number, condition, category of a column, label), and
 * an evaluator that runs the program on blocks of rows, one stack of value blocks per part of
 * the thread pool. Labels are resolved to their column's code at compile time, so the program
 * only ever sees numbers. */
#define _GNU_SOURCE
#include "expr.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sparse.h"   /* gwb_parallel_for */

enum op { OP_COL, OP_NUM, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_NEG, OP_LT, OP_LE, OP_GT, OP_GE,
	  OP_EQ, OP_NE, OP_AND, OP_OR, OP_NOT, OP_ISNAN,
	  OP_CMPI,     /* an int64 column compared with an integer, exactly: col, num = the
			* comparison (OP_LT .. OP_NE), ival = the integer */
	  OP_CMPC };   /* a column compared with a constant as doubles (OP_COL, OP_NUM and the
			* comparison fused when compiling): col, num = the constant, ival = the
			* comparison (OP_LT .. OP_NE) */

typedef gwb_expr_ins ins;   /* (expr.h lends the program to the GPU's evaluator) */
_Static_assert((int)OP_COL == (int)GWB_XOP_COL && (int)OP_NUM == (int)GWB_XOP_NUM && (int)OP_NEG == (int)GWB_XOP_NEG &&
	       (int)OP_LT == (int)GWB_XOP_LT && (int)OP_NE == (int)GWB_XOP_NE && (int)OP_AND == (int)GWB_XOP_AND &&
	       (int)OP_NOT == (int)GWB_XOP_NOT && (int)OP_ISNAN == (int)GWB_XOP_ISNAN && (int)OP_CMPI == (int)GWB_XOP_CMPI &&
	       (int)OP_CMPC == (int)GWB_XOP_CMPC,
	       "expr.h's opcodes are expr.c's");

struct gwb_expr {
	ins *code;
	int n, cap, depth, maxdepth;
	bool mask;
	bool bytes;   /* only comparisons with constants and & | ~: run on blocks of bytes */
};

/* kinds of a value while compiling */
enum kind { K_NUM, K_BOOL, K_CAT, K_STR };

typedef struct val {
	int kind;
	int col;      /* K_CAT: the column; K_STR: -1 */
	int at;       /* K_STR: the OP_NUM placeholder to patch with the label's code */
	int pos;      /* character where it starts (for messages) */
	int konst;    /* a literal number: its OP_NUM instruction, else -1 */
	bool f32;     /* a float32 column itself (constants compared with it are rounded to float) */
	bool i64;     /* an int64 column itself (compared with an integer literal exactly) */
	bool kint;    /* a literal integer that int64 holds: ki */
	int64_t ki;
	char *str;    /* K_STR: the label */
} val;

typedef struct parser {
	const char *src, *p;
	char *const *names;
	const gwb_col *cols;
	int ncols;
	gwb_expr *e;
	/* the current token */
	int tok;      /* one of the T_ values or a character */
	int tpos;
	double num;
	bool numint;  /* T_NUM is an integer literal that int64 holds: inum */
	int64_t inum;
	char *text;   /* T_NAME / T_STR */
	gwb_status st;
} parser;

enum { T_END = 256, T_NUM, T_NAME, T_STR, T_LE, T_GE, T_EQ, T_NE };

static gwb_status fail(parser *P, int pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static gwb_status fail(parser *P, int pos, const char *fmt, ...)
{
	char what[400], caret[200];
	va_list ap;
	int i;

	if (P->st)
		return P->st;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	for (i = 0; i < pos && i < (int)sizeof(caret) - 2; i++)
		caret[i] = ' ';
	caret[i++] = '^';
	caret[i] = 0;
	P->st = gwb_error(GWB_EPARSE, "%s at character %d of the expression:\n  %.190s\n  %s",
			  what, pos + 1, P->src, caret);
	return P->st;
}

static void next(parser *P)
{
	const char *s = P->p;

	free(P->text);
	P->text = NULL;
	while (isspace((unsigned char)*s))
		s++;
	P->tpos = (int)(s - P->src);
	if (!*s) {
		P->tok = T_END;
		P->p = s;
		return;
	}
	if (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
		char *end, *iend;
		P->num = strtod(s, &end);
		P->tok = T_NUM;
		P->p = end;
		errno = 0;
		P->inum = strtoll(s, &iend, 10);
		P->numint = iend == end && errno == 0;
		if (isalpha((unsigned char)*end) || *end == '_')
			fail(P, (int)(end - P->src), "a number runs into a name");
		return;
	}
	if (isalpha((unsigned char)*s) || *s == '_') {
		const char *b = s;
		while (isalnum((unsigned char)*s) || *s == '_' || *s == '.')
			s++;
		P->text = strndup(b, (size_t)(s - b));
		P->tok = T_NAME;
		P->p = s;
		return;
	}
	if (*s == '`' || *s == '\'') {
		char q = *s;
		const char *b = ++s;
		while (*s && *s != q)
			s++;
		if (!*s) {
			fail(P, P->tpos, q == '`' ? "a `quoted name` is not closed" :
			     "a 'label' is not closed");
			P->tok = T_END;
			P->p = s;
			return;
		}
		P->text = strndup(b, (size_t)(s - b));
		P->tok = q == '`' ? T_NAME : T_STR;
		P->p = s + 1;
		return;
	}
	P->p = s + 1;
	if (s[1] == '=' && strchr("<>=!", *s)) {
		P->p = s + 2;
		P->tok = *s == '<' ? T_LE : *s == '>' ? T_GE : *s == '=' ? T_EQ : T_NE;
		return;
	}
	if (strchr("+-*/<>&|~()", *s)) {
		P->tok = *s;
		return;
	}
	if (*s == '=')
		fail(P, P->tpos, "'=' is not an operator (compare with ==)");
	else if (*s == '"')
		fail(P, P->tpos, "text in double quotes: write a label in single quotes ('setosa') "
		     "and a column name with spaces in backquotes (`my column`)");
	else
		fail(P, P->tpos, "unexpected character '%c'", *s);
	P->tok = T_END;
}

static int emit(parser *P, int op, int col, double num, int push)
{
	gwb_expr *e = P->e;

	if (e->n == e->cap) {
		int nc = e->cap ? e->cap * 2 : 16;
		ins *c = realloc(e->code, (size_t)nc * sizeof(ins));
		if (!c) {
			P->st = gwb_error(GWB_ENOMEM, "expression: out of memory");
			return -1;
		}
		e->code = c;
		e->cap = nc;
	}
	e->code[e->n] = (ins){op, col, num, 0};
	e->depth += push;
	if (e->depth > e->maxdepth)
		e->maxdepth = e->depth;
	return e->n++;
}

static const char *kind_name(const parser *P, const val *v, char *buf, size_t sz)
{
	switch (v->kind) {
	case K_NUM: return "a number";
	case K_BOOL: return "a condition";
	case K_CAT: snprintf(buf, sz, "the category column '%s'", P->names[v->col]); return buf;
	default: snprintf(buf, sz, "the label '%s'", v->str); return buf;
	}
}

/* A label compared with category column col: its code. */
static bool resolve_label(parser *P, const val *lab, int col)
{
	const gwb_col *c = &P->cols[col];
	const char *near;
	int k;

	for (k = 0; k < c->nlevels; k++)
		if (c->levels[k] && !strcmp(c->levels[k], lab->str)) {
			P->e->code[lab->at].num = k;
			return true;
		}
	near = gwb_nearest_name(lab->str, (const char *const *)c->levels, (size_t)c->nlevels);
	fail(P, lab->pos, "'%s' is not a label of column '%s'%s%s%s", lab->str, P->names[col],
	     near ? " (nearest: '" : "", near ? near : "", near ? "')" : "");
	return false;
}

static void val_free(val *v)
{
	free(v->str);
	v->str = NULL;
}

static bool need_num(parser *P, val *v, const char *what)
{
	char b[200];

	if (v->kind == K_NUM)
		return true;
	fail(P, v->pos, "%s needs a number, not %s", what, kind_name(P, v, b, sizeof(b)));
	return false;
}

static bool need_bool(parser *P, val *v, const char *what)
{
	char b[200];

	if (v->kind == K_BOOL)
		return true;
	fail(P, v->pos, "%s needs a condition (a comparison, isnan(), & | ~), not %s", what,
	     kind_name(P, v, b, sizeof(b)));
	return false;
}

static bool expr(parser *P, int rbp, val *out);

static int lbp(int tok)
{
	switch (tok) {
	case '|': return 10;
	case '&': return 20;
	case '<': case '>': case T_LE: case T_GE: case T_EQ: case T_NE: return 40;
	case '+': case '-': return 50;
	case '*': case '/': return 60;
	default: return 0;
	}
}

static bool prefix(parser *P, val *out)
{
	int pos = P->tpos;

	memset(out, 0, sizeof(*out));
	out->pos = pos;
	out->konst = -1;
	switch (P->tok) {
	case T_NUM:
		out->konst = emit(P, OP_NUM, 0, P->num, 1);
		out->kind = K_NUM;
		out->kint = P->numint;
		out->ki = P->inum;
		next(P);
		return !P->st;
	case T_STR:
		out->kind = K_STR;
		out->col = -1;
		out->str = P->text;
		P->text = NULL;
		out->at = emit(P, OP_NUM, 0, NAN, 1);
		next(P);
		return !P->st;
	case T_NAME: {
		char *name = P->text;
		int j;
		P->text = NULL;
		next(P);
		if (!strcmp(name, "isnan") && P->tok == '(') {
			val a;
			free(name);
			next(P);
			if (!expr(P, 0, &a))
				return false;
			if (a.kind != K_NUM && a.kind != K_CAT) {
				char b[200];
				fail(P, a.pos, "isnan() takes a column or a number, not %s",
				     kind_name(P, &a, b, sizeof(b)));
				val_free(&a);
				return false;
			}
			if (P->tok != ')')
				return !fail(P, P->tpos, "')' expected to close isnan(");
			next(P);
			emit(P, OP_ISNAN, 0, 0, 0);
			out->kind = K_BOOL;
			return !P->st;
		}
		for (j = 0; j < P->ncols; j++)
			if (P->names[j] && !strcmp(P->names[j], name))
				break;
		if (j == P->ncols) {
			const char *near = gwb_nearest_name(name, (const char *const *)P->names,
							    (size_t)P->ncols);
			fail(P, pos, "unknown column '%s'%s%s%s", name, near ? " (nearest: '" : "",
			     near ? near : "", near ? "')" : "");
			free(name);
			return false;
		}
		if (P->cols[j].text) {
			fail(P, pos, "column '%s' holds free text, which expressions do not read (they "
			     "compare numbers and categories); find rows by their text with "
			     "d.%s:eq(\"...\") or :isin{...}", name, name);
			free(name);
			return false;
		}
		free(name);
		emit(P, OP_COL, j, 0, 1);
		out->kind = P->cols[j].levels ? K_CAT : P->cols[j].type == GWB_COL_U8 ? K_BOOL : K_NUM;
		out->col = j;
		out->f32 = P->cols[j].type == GWB_COL_F32 && !P->cols[j].levels;
		out->i64 = P->cols[j].type == GWB_COL_I64 && !P->cols[j].levels;
		return !P->st;
	}
	case '(':
		next(P);
		if (!expr(P, 0, out))
			return false;
		if (P->tok != ')')
			return !fail(P, P->tpos, "')' expected (the '(' at character %d is not closed)",
				     pos + 1);
		out->pos = pos;
		next(P);
		return !P->st;
	case '-':
		next(P);
		if (!expr(P, 70, out))
			return false;
		if (!need_num(P, out, "'-'"))
			return false;
		emit(P, OP_NEG, 0, 0, 0);
		out->pos = pos;
		out->konst = -1;
		out->f32 = false;
		return !P->st;
	case '~':
		next(P);
		if (!expr(P, 30, out))
			return false;
		if (!need_bool(P, out, "'~'"))
			return false;
		emit(P, OP_NOT, 0, 0, 0);
		out->pos = pos;
		return !P->st;
	case T_END:
		return !fail(P, pos, P->tpos == 0 ? "an empty expression" : "the expression ends "
			     "where a value (column, number, 'label' or '(') is expected");
	default:
		return !fail(P, pos, "a value (column, number, 'label' or '(') is expected here");
	}
}

static bool infix(parser *P, int tok, int pos, val *l, val *r, val *out)
{
	char b1[200], b2[200];
	static const char *const tname[] = {"<=", ">=", "==", "!="};
	const char *sym = tok >= T_LE ? tname[tok - T_LE] : NULL;
	char one[2] = {(char)tok, 0};

	if (!sym)
		sym = one;
	memset(out, 0, sizeof(*out));
	out->pos = l->pos;
	out->konst = -1;
	switch (tok) {
	case '+': case '-': case '*': case '/':
		if (!need_num(P, l, sym) || !need_num(P, r, sym))
			return false;
		emit(P, tok == '+' ? OP_ADD : tok == '-' ? OP_SUB : tok == '*' ? OP_MUL : OP_DIV, 0,
		     0, -1);
		out->kind = K_NUM;
		return !P->st;
	case '&': case '|':
		if (!need_bool(P, l, sym) || !need_bool(P, r, sym))
			return false;
		emit(P, tok == '&' ? OP_AND : OP_OR, 0, 0, -1);
		out->kind = K_BOOL;
		return !P->st;
	default: {   /* comparisons */
		int op = tok == '<' ? OP_LT : tok == '>' ? OP_GT : tok == T_LE ? OP_LE : tok == T_GE
			 ? OP_GE : tok == T_EQ ? OP_EQ : OP_NE;
		bool eq = op == OP_EQ || op == OP_NE;
		if (l->kind == K_STR && r->kind == K_STR)
			return !fail(P, pos, "two labels compared: one side must be a column");
		if (l->kind == K_CAT || r->kind == K_CAT || l->kind == K_STR || r->kind == K_STR) {
			val *c = l->kind == K_CAT ? l : r, *o = c == l ? r : l;
			if (c->kind != K_CAT)
				return !fail(P, o->pos, "the label '%s' is compared with %s: labels "
					     "compare with a category column", o->str,
					     kind_name(P, c, b1, sizeof(b1)));
			if (!eq)
				return !fail(P, pos, "'%s' orders %s: categories compare with == and "
					     "!= only", sym, kind_name(P, c, b1, sizeof(b1)));
			if (o->kind == K_STR) {
				if (!resolve_label(P, o, c->col))
					return false;
			} else if (o->kind != K_CAT || P->cols[o->col].levels != P->cols[c->col].levels) {
				return !fail(P, o->pos, "%s is compared with %s: compare a category "
					     "with one of its 'labels'", kind_name(P, c, b1, sizeof(b1)),
					     kind_name(P, o, b2, sizeof(b2)));
			}
		} else if (l->kind != K_NUM || r->kind != K_NUM) {
			if (!(eq && l->kind == K_BOOL && r->kind == K_BOOL))
				return !fail(P, pos, "'%s' compares %s with %s", sym,
					     kind_name(P, l, b1, sizeof(b1)),
					     kind_name(P, r, b2, sizeof(b2)));
		}
		/* an int64 column and an integer literal, the two last instructions: one exact
		 * comparison instead (id == 9007199254740993 is not id == 9007199254740992) */
		if (P->e->n >= 2 && ((l->i64 && r->kint && r->konst == P->e->n - 1) ||
				     (r->i64 && l->kint && l->konst == P->e->n - 2))) {
			bool flip = r->i64;
			int col = P->e->code[P->e->n - (flip ? 1 : 2)].col, k;
			int64_t v = flip ? l->ki : r->ki;
			if (flip)   /* 5 < id is id > 5 */
				op = op == OP_LT ? OP_GT : op == OP_GT ? OP_LT : op == OP_LE ? OP_GE :
				     op == OP_GE ? OP_LE : op;
			P->e->n -= 2;
			P->e->depth -= 2;
			k = emit(P, OP_CMPI, col, (double)op, 1);
			if (k >= 0)
				P->e->code[k].ival = v;
			out->kind = K_BOOL;
			return !P->st;
		}
		/* a float32 column holds the float nearest to what the file said: compare it with
		 * the float nearest to a constant (x == 5.1 finds the 5.1s) */
		if (l->f32 && r->konst >= 0)
			P->e->code[r->konst].num = (float)P->e->code[r->konst].num;
		if (r->f32 && l->konst >= 0)
			P->e->code[l->konst].num = (float)P->e->code[l->konst].num;
		emit(P, op, 0, 0, -1);
		out->kind = K_BOOL;
		return !P->st;
	}
	}
}

static bool expr(parser *P, int rbp, val *out)
{
	val l, r;

	if (!prefix(P, &l))
		return false;
	while (lbp(P->tok) > rbp) {
		int tok = P->tok, pos = P->tpos, bp = lbp(tok);
		bool ok;
		next(P);
		if (P->st) {
			val_free(&l);
			return false;
		}
		/* comparisons do not chain: a < b < c is an error, not (a < b) < c */
		if (!expr(P, bp == 40 ? 40 : bp, &r)) {
			val_free(&l);
			return false;
		}
		if (bp == 40 && lbp(P->tok) == 40) {
			val_free(&l);
			val_free(&r);
			return !fail(P, P->tpos, "comparisons do not chain: write (a < b) & (b < c)");
		}
		ok = infix(P, tok, pos, &l, &r, out);
		val_free(&l);
		val_free(&r);
		if (!ok)
			return false;
		l = *out;
	}
	*out = l;
	return !P->st;
}

/* Column-against-constant comparisons (OP_COL, OP_NUM, then OP_LT .. OP_NE) become one
 * OP_CMPC, which compares the column's values where they lie instead of copying them into a
 * block and filling another with the constant: the same doubles compared, in one pass. */
static void fuse(gwb_expr *e)
{
	int i, o;

	for (i = 0, o = 0; i < e->n; i++, o++) {
		if (i + 2 < e->n && e->code[i].op == OP_COL && e->code[i + 1].op == OP_NUM &&
		    e->code[i + 2].op >= OP_LT && e->code[i + 2].op <= OP_NE) {
			ins f = {OP_CMPC, e->code[i].col, e->code[i + 1].num, e->code[i + 2].op};
			e->code[o] = f;
			i += 2;
			continue;
		}
		e->code[o] = e->code[i];
	}
	e->n = o;
	e->bytes = e->mask;
	for (i = 0; i < e->n; i++)
		e->bytes &= e->code[i].op == OP_CMPC || e->code[i].op == OP_AND ||
			    e->code[i].op == OP_OR || e->code[i].op == OP_NOT;
}

gwb_status gwb_expr_compile(const char *src, char *const *names, const gwb_col *cols, int n,
			    gwb_expr **res)
{
	parser P = {0};
	val v = {0};

	*res = NULL;
	P.src = P.p = src;
	P.names = names;
	P.cols = cols;
	P.ncols = n;
	P.e = calloc(1, sizeof(gwb_expr));
	if (!P.e)
		return gwb_error(GWB_ENOMEM, "expression: out of memory");
	next(&P);
	if (!P.st && expr(&P, 0, &v)) {
		if (P.tok != T_END)
			fail(&P, P.tpos, P.tok == ')' ? "a ')' without its '('" : "an operator "
			     "(+ - * / < <= > >= == != & |) or the end is expected here");
		else if (v.kind == K_STR)
			fail(&P, v.pos, "a label alone is not a value: compare it with a column "
			     "(k == '%s')", v.str);
		else if (v.kind == K_CAT)
			fail(&P, v.pos, "a category column alone is not a value: compare it with one "
			     "of its labels");
	}
	val_free(&v);
	free(P.text);
	if (P.st) {
		gwb_expr_free(P.e);
		return P.st;
	}
	P.e->mask = v.kind == K_BOOL;
	fuse(P.e);
	*res = P.e;
	return GWB_OK;
}

bool gwb_expr_is_mask(const gwb_expr *e)
{
	return e->mask;
}

void gwb_expr_free(gwb_expr *e)
{
	if (!e)
		return;
	free(e->code);
	free(e);
}

/* --- evaluation ---------------------------------------------------------------------------- */

#define EBLOCK 1024

typedef struct eval_ctx {
	const gwb_expr *e;
	const gwb_col *cols;
	double *out;
	uint8_t *mask;     /* a condition's bytes: mask[i - base] for row i */
	int64_t base;
	int failed;
} eval_ctx;

/* t[k] = (v[k] op c) for a block of a column's values, as doubles (NaN: false but for !=) */
#define CMP_BLOCK(name, type, otype)                                                            \
	static void name(const type *v, int64_t m, int op, double c, otype *t)                 \
	{                                                                                       \
		int64_t k;                                                                      \
		switch (op) {                                                                   \
		case OP_LT: for (k = 0; k < m; k++) t[k] = (double)v[k] < c; break;             \
		case OP_LE: for (k = 0; k < m; k++) t[k] = (double)v[k] <= c; break;            \
		case OP_GT: for (k = 0; k < m; k++) t[k] = (double)v[k] > c; break;             \
		case OP_GE: for (k = 0; k < m; k++) t[k] = (double)v[k] >= c; break;            \
		case OP_EQ: for (k = 0; k < m; k++) t[k] = (double)v[k] == c; break;            \
		default: for (k = 0; k < m; k++) t[k] = !((double)v[k] == c);                   \
		}                                                                               \
	}
CMP_BLOCK(cmp_f32, float, double)
CMP_BLOCK(cmp_f64, double, double)

/* Bytes of a block of comparisons, t[k] = (v[k] op c) as doubles (NaN: false but for !=).
 * On x86-64, SSE2 compares two doubles at a time and 8 results become 8 bytes at once (the
 * compiler does not vectorize a double-to-byte comparison); elsewhere the scalar blocks. */
#ifdef __SSE2__
#include <emmintrin.h>

/* bits 0..7 of x as bytes 0..7 of a word, each 0 or 1 */
static inline uint64_t spread8(unsigned x)
{
	return (((uint64_t)(x & 15) * 0x00204081u) & 0x01010101u) |
	       ((((uint64_t)(x >> 4) * 0x00204081u) & 0x01010101u) << 32);
}

/* eight doubles from v + k into a, b, c, d (float32 values widened) */
#define LOAD8_f64(v, k)                                                                         \
	__m128d a = _mm_loadu_pd(v + k), b = _mm_loadu_pd(v + k + 2), c = _mm_loadu_pd(v + k + 4), \
		d = _mm_loadu_pd(v + k + 6)
#define LOAD8_f32(v, k)                                                                         \
	__m128 lo4 = _mm_loadu_ps(v + k), hi4 = _mm_loadu_ps(v + k + 4);                         \
	__m128d a = _mm_cvtps_pd(lo4), b = _mm_cvtps_pd(_mm_movehl_ps(lo4, lo4)),                 \
		c = _mm_cvtps_pd(hi4), d = _mm_cvtps_pd(_mm_movehl_ps(hi4, hi4))
#define CMP8(T, CMP)                                                                            \
	for (; k + 8 <= m; k += 8) {                                                            \
		LOAD8_##T(v, k);                                                                \
		unsigned bits = (unsigned)_mm_movemask_pd(CMP(a, cv)) |                         \
				(unsigned)_mm_movemask_pd(CMP(b, cv)) << 2 |                    \
				(unsigned)_mm_movemask_pd(CMP(c, cv)) << 4 |                    \
				(unsigned)_mm_movemask_pd(CMP(d, cv)) << 6;                     \
		uint64_t w = spread8(bits);                                                     \
		memcpy(t + k, &w, 8);                                                           \
	}
#define BCMP_BLOCK(name, type, T)                                                               \
	static void name(const type *v, int64_t m, int op, double cd, uint8_t *t)               \
	{                                                                                       \
		__m128d cv = _mm_set1_pd(cd);                                                   \
		int64_t k = 0;                                                                  \
		switch (op) {                                                                   \
		case OP_LT: CMP8(T, _mm_cmplt_pd) break;                                        \
		case OP_LE: CMP8(T, _mm_cmple_pd) break;                                        \
		case OP_GT: CMP8(T, _mm_cmpgt_pd) break;                                        \
		case OP_GE: CMP8(T, _mm_cmpge_pd) break;                                        \
		case OP_EQ: CMP8(T, _mm_cmpeq_pd) break;                                        \
		default: CMP8(T, _mm_cmpneq_pd)                                                 \
		}                                                                               \
		name##_tail(v + k, m - k, op, cd, t + k);                                       \
	}
CMP_BLOCK(bcmp_f32_tail, float, uint8_t)
CMP_BLOCK(bcmp_f64_tail, double, uint8_t)
BCMP_BLOCK(bcmp_f32, float, f32)
BCMP_BLOCK(bcmp_f64, double, f64)

/* A float64 column of a Dataset compared through its float32 copy x (half the bytes): both
 * are roundings of the same values, and rounding keeps order, so a float32 value more than one
 * float step below or above the constant's rounding decides the comparison; the values in
 * that band of three floats (and NaN) are compared exactly, from v. */
static void bcmp_band(const double *v, const float *x, int64_t m, int op, double cd, uint8_t *t)
{
	float fc = (float)cd;
	__m128 lo = _mm_set1_ps(nextafterf(fc, -INFINITY)), hi = _mm_set1_ps(nextafterf(fc, INFINITY));
	bool less = op == OP_LT || op == OP_LE || op == OP_NE, more = op == OP_GT || op == OP_GE ||
							     op == OP_NE;
	int64_t k = 0;

	for (; k + 8 <= m; k += 8) {
		__m128 a = _mm_loadu_ps(x + k), b = _mm_loadu_ps(x + k + 4);
		unsigned lt = (unsigned)_mm_movemask_ps(_mm_cmplt_ps(a, lo)) |
			      (unsigned)_mm_movemask_ps(_mm_cmplt_ps(b, lo)) << 4;
		unsigned gt = (unsigned)_mm_movemask_ps(_mm_cmpgt_ps(a, hi)) |
			      (unsigned)_mm_movemask_ps(_mm_cmpgt_ps(b, hi)) << 4;
		unsigned band = ~(lt | gt) & 0xff;
		uint64_t w = spread8((less ? lt : 0) | (more ? gt : 0));
		memcpy(t + k, &w, 8);
		while (band) {
			int j = __builtin_ctz(band);
			band &= band - 1;
			bcmp_f64_tail(v + k + j, 1, op, cd, t + k + j);
		}
	}
	bcmp_f64_tail(v + k, m - k, op, cd, t + k);
}
#else
CMP_BLOCK(bcmp_f32, float, uint8_t)
CMP_BLOCK(bcmp_f64, double, uint8_t)
#endif

/* a[k] &= b[k] (op 0), |= (1) or a[k] ^= 1 (2) for k < m, eight bytes at a time */
static void bytes_op(uint8_t *a, const uint8_t *b, int64_t m, int op)
{
	int64_t k = 0;
	uint64_t x, y;

	for (; k + 8 <= m; k += 8) {
		memcpy(&x, a + k, 8);
		if (op == 2) {
			x ^= 0x0101010101010101ull;
		} else {
			memcpy(&y, b + k, 8);
			x = op ? x | y : x & y;
		}
		memcpy(a + k, &x, 8);
	}
	for (; k < m; k++)
		a[k] = op == 2 ? a[k] ^ 1 : op ? a[k] | b[k] : a[k] & b[k];
}

/* a mask program of comparisons with constants and & | ~ (e->bytes) over rows [lo, hi) into
 * mask[0 .. hi - lo): the same comparisons as eval_run's, on bytes; stack: maxdepth blocks of
 * EBLOCK bytes and one of EBLOCK doubles */
static void eval_bytes(const gwb_expr *e, const gwb_col *cols, int64_t lo, int64_t hi,
		       uint8_t *stack, double *tmp, uint8_t *mask)
{
	int64_t i, m;
	int pc, sp;

	for (i = lo; i < hi; i += EBLOCK) {
		m = hi - i < EBLOCK ? hi - i : EBLOCK;
		sp = 0;
		for (pc = 0; pc < e->n; pc++) {
			const ins *in = &e->code[pc];
			uint8_t *a = stack + (size_t)(sp - 2) * EBLOCK, *b = a + EBLOCK;
			uint8_t *t = stack + (size_t)(sp - 1) * EBLOCK;
			switch (in->op) {
			case OP_CMPC: {
				const gwb_col *c = &cols[in->col];
				t = sp + 1 == 1 && pc + 1 == e->n ? mask + (i - lo) : stack + (size_t)sp * EBLOCK;
				sp++;
				if (c->type == GWB_COL_F32) {
					bcmp_f32((const float *)c->v + i, m, (int)in->ival, in->num, t);
				} else if (c->type == GWB_COL_F64) {
#ifdef __SSE2__
					if (c->x32 && fabs(in->num) < 1e30)
						bcmp_band((const double *)c->v + i, c->x32 + i, m,
							  (int)in->ival, in->num, t);
					else
#endif
						bcmp_f64((const double *)c->v + i, m, (int)in->ival,
							 in->num, t);
				} else {
					gwb_col_block(c, (size_t)i, (size_t)m, tmp);
					bcmp_f64(tmp, m, (int)in->ival, in->num, t);
				}
				break;
			}
			case OP_AND: bytes_op(a, b, m, 0); sp--; break;
			case OP_OR: bytes_op(a, b, m, 1); sp--; break;
			default: bytes_op(t, NULL, m, 2);   /* OP_NOT */
			}
		}
		if (e->n > 1 || e->code[0].op != OP_CMPC)
			memcpy(mask + (i - lo), stack, (size_t)m);
	}
}

static void eval_run(void *vctx, int64_t lo, int64_t hi, int part)
{
	eval_ctx *x = vctx;
	const gwb_expr *e = x->e;
	double *stack = malloc((size_t)(e->maxdepth + 1) * EBLOCK * sizeof(double));
	int64_t i, m, k;
	int pc, sp;

	(void)part;
	if (!stack) {
		x->failed = 1;
		return;
	}
	if (e->bytes) {
		eval_bytes(e, x->cols, lo, hi, (uint8_t *)(stack + EBLOCK), stack, x->mask + (lo - x->base));
		free(stack);
		return;
	}
	for (i = lo; i < hi; i += EBLOCK) {
		m = hi - i < EBLOCK ? hi - i : EBLOCK;
		sp = 0;
		for (pc = 0; pc < e->n; pc++) {
			const ins *in = &e->code[pc];
			double *a = stack + (size_t)(sp - 2) * EBLOCK, *b = a + EBLOCK;
			double *t = stack + (size_t)(sp - 1) * EBLOCK;
			switch (in->op) {
			case OP_COL:
				gwb_col_block(&x->cols[in->col], (size_t)i, (size_t)m,
					      stack + (size_t)sp++ * EBLOCK);
				break;
			case OP_NUM:
				t = stack + (size_t)sp++ * EBLOCK;
				for (k = 0; k < m; k++)
					t[k] = in->num;
				break;
			case OP_ADD: for (k = 0; k < m; k++) a[k] += b[k]; sp--; break;
			case OP_SUB: for (k = 0; k < m; k++) a[k] -= b[k]; sp--; break;
			case OP_MUL: for (k = 0; k < m; k++) a[k] *= b[k]; sp--; break;
			case OP_DIV: for (k = 0; k < m; k++) a[k] /= b[k]; sp--; break;
			case OP_LT: for (k = 0; k < m; k++) a[k] = a[k] < b[k]; sp--; break;
			case OP_LE: for (k = 0; k < m; k++) a[k] = a[k] <= b[k]; sp--; break;
			case OP_GT: for (k = 0; k < m; k++) a[k] = a[k] > b[k]; sp--; break;
			case OP_GE: for (k = 0; k < m; k++) a[k] = a[k] >= b[k]; sp--; break;
			case OP_EQ: for (k = 0; k < m; k++) a[k] = a[k] == b[k]; sp--; break;
			case OP_NE: for (k = 0; k < m; k++) a[k] = !(a[k] == b[k]); sp--; break;
			case OP_AND: for (k = 0; k < m; k++) a[k] = a[k] != 0 && b[k] != 0; sp--; break;
			case OP_OR: for (k = 0; k < m; k++) a[k] = a[k] != 0 || b[k] != 0; sp--; break;
			case OP_NEG: for (k = 0; k < m; k++) t[k] = -t[k]; break;
			case OP_NOT: for (k = 0; k < m; k++) t[k] = t[k] == 0; break;
			case OP_CMPI: {
				const int64_t *v = (const int64_t *)x->cols[in->col].v + i;
				int64_t c = in->ival;
				int cop = (int)in->num;
				t = stack + (size_t)sp++ * EBLOCK;
				for (k = 0; k < m; k++) {
					int64_t w = v[k];
					t[k] = w == GWB_I64_NA ? cop == OP_NE :
					       cop == OP_LT ? w < c : cop == OP_LE ? w <= c :
					       cop == OP_GT ? w > c : cop == OP_GE ? w >= c :
					       cop == OP_EQ ? w == c : w != c;
				}
				break;
			}
			case OP_CMPC: {
				const gwb_col *c = &x->cols[in->col];
				double cv = in->num;
				t = stack + (size_t)sp++ * EBLOCK;
				if (c->type == GWB_COL_F32)
					cmp_f32((const float *)c->v + i, m, (int)in->ival, cv, t);
				else if (c->type == GWB_COL_F64)
					cmp_f64((const double *)c->v + i, m, (int)in->ival, cv, t);
				else {
					gwb_col_block(c, (size_t)i, (size_t)m, t);
					cmp_f64(t, m, (int)in->ival, cv, t);
				}
				break;
			}
			default: for (k = 0; k < m; k++) t[k] = isnan(t[k]) != 0;
			}
		}
		if (x->mask)
			for (k = 0; k < m; k++)
				x->mask[i - x->base + k] = stack[k] != 0;
		else
			memcpy(x->out + i, stack, (size_t)m * sizeof(double));
	}
	free(stack);
}

static gwb_status run(const gwb_expr *e, const gwb_col *cols, size_t rows, double *out,
		      uint8_t *mask)
{
	eval_ctx x = {e, cols, out, mask, 0, 0};

	gwb_parallel_for((int64_t)rows, 16384, eval_run, &x);
	if (x.failed)
		return gwb_error(GWB_ENOMEM, "expression: out of memory for its %d blocks of %d rows",
				 e->maxdepth, EBLOCK);
	return GWB_OK;
}

gwb_status gwb_expr_eval(const gwb_expr *e, const gwb_col *cols, size_t rows, double *out)
{
	return run(e, cols, rows, out, NULL);
}

gwb_status gwb_expr_mask(const gwb_expr *e, const gwb_col *cols, size_t rows, uint8_t *out)
{
	if (!e->mask)
		return gwb_error(GWB_EINVAL, "the expression is a number, not a condition: compare it "
				 "(e.g. > 0) to filter with it");
	return run(e, cols, rows, NULL, out);
}

const gwb_expr_ins *gwb_expr_program(const gwb_expr *e, int *n, int *depth)
{
	*n = e->n;
	*depth = e->maxdepth;
	return e->code;
}

/* gwb_expr_rows: the condition evaluated block by block into a small mask, each block's rows
 * listed apart (fixed blocks: the same lists for any thread count), then joined */
#define ROWS_BLOCKS 64
#define ROWS_SUB 16384   /* rows a block evaluates at a time */

typedef struct rows_ctx {
	const gwb_expr *e;
	const gwb_col *cols;
	size_t n;
	size_t *list[ROWS_BLOCKS], cnt[ROWS_BLOCKS];
	size_t *idx;
	int failed;
} rows_ctx;

/* l grown to hold at least need entries (c of them kept); NULL (l freed) out of memory */
static size_t *grow_list(size_t *l, size_t *cap, size_t need)
{
	size_t nc = *cap * 2 > need ? *cap * 2 : need;
	size_t *r = realloc(l, nc * sizeof(size_t));

	if (!r) {
		free(l);
		return NULL;
	}
	*cap = nc;
	return r;
}

static void rows_run(void *ctx, int64_t blo, int64_t bhi, int part)
{
	rows_ctx *x = ctx;
	uint8_t m[ROWS_SUB];

	for (int64_t b = blo; b < bhi; b++) {
		size_t lo = x->n * (size_t)b / ROWS_BLOCKS, hi = x->n * (size_t)(b + 1) / ROWS_BLOCKS;
		size_t cap = (hi - lo) / 16 + 16, c = 0, i, s;
		size_t *l = malloc(cap * sizeof(size_t));
		if (!l) {
			x->failed = 1;
			return;
		}
		for (s = lo; s < hi; s += ROWS_SUB) {
			size_t e = hi - s < ROWS_SUB ? hi : s + ROWS_SUB;
			eval_ctx ev = {x->e, x->cols, NULL, m, (int64_t)s, 0};
			eval_run(&ev, (int64_t)s, (int64_t)e, part);
			if (ev.failed) {
				free(l);
				x->failed = 1;
				return;
			}
			if (cap - c < e - s && !(l = grow_list(l, &cap, c + (e - s)))) {
				x->failed = 1;
				return;
			}
			for (i = s; i < e; i++) {   /* branch-free: every row written, kept ones advance */
				l[c] = i;
				c += m[i - s];
			}
		}
		x->list[b] = l;
		x->cnt[b] = c;
	}
}

static void rows_join(void *ctx, int64_t blo, int64_t bhi, int part)
{
	rows_ctx *x = ctx;
	size_t off = 0;
	int64_t b;

	(void)part;
	for (b = 0; b < blo; b++)
		off += x->cnt[b];
	for (b = blo; b < bhi; b++) {
		memcpy(x->idx + off, x->list[b], x->cnt[b] * sizeof(size_t));
		off += x->cnt[b];
	}
}

gwb_status gwb_expr_rows(const gwb_expr *e, const gwb_col *cols, size_t rows, size_t **idx,
			 size_t *k)
{
	rows_ctx *x;
	size_t tot = 0;
	int b;
	gwb_status st = GWB_OK;

	*idx = NULL;
	*k = 0;
	if (!e->mask)
		return gwb_error(GWB_EINVAL, "the expression is a number, not a condition: compare it "
				 "(e.g. > 0) to filter with it");
	if (!(x = calloc(1, sizeof(*x))))
		return gwb_error(GWB_ENOMEM, "filter: out of memory");
	x->e = e;
	x->cols = cols;
	x->n = rows;
	gwb_parallel_for(ROWS_BLOCKS, ROWS_BLOCKS / 16, rows_run, x);
	for (b = 0; b < ROWS_BLOCKS; b++)
		tot += x->cnt[b];
	if (x->failed || !(x->idx = malloc((tot + 1) * sizeof(size_t)))) {
		st = gwb_error(GWB_ENOMEM, "filter: out of memory for the rows of %zu", rows);
		goto out;
	}
	gwb_parallel_for(ROWS_BLOCKS, ROWS_BLOCKS / 16, rows_join, x);
	*idx = x->idx;
	*k = tot;
out:
	for (b = 0; b < ROWS_BLOCKS; b++)
		free(x->list[b]);
	free(x);
	return st;
}
