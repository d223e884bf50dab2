/* eig_lanczos.c - thick-restart Lanczos (Wu & Simon) with partial reorthogonalization
 * (Simon's omega recurrence over the whole basis, kept Ritz vectors included, checked against
 * the measured V^T v_m each cycle), CGS2 against the basis as DGEMV pairs, Cholesky QR of the
 * kept block at a restart, the deflated run that finds missed copies of repeated values; and
 * the short Lanczos run that bounds the spectrum for every method (sp_bounds). Written once
 * over the block operations (eig_sparse_ops.c) and the shared steps (eig_block.c); uses
 * nothing above them. */
#include "eig_sparse_impl.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ spectrum bounds */

/* A short Lanczos run (full reorthogonalization) for bounds lo <= lambda_min(sA) and
 * hi >= lambda_max(sA), and ||A||_2. */
gwb_status sp_bounds(solve *S)
{
	sp_op *o = S->o;
	int m = o->N < 40 ? (int)o->N : 40;
	double *V = NULL, *w = NULL, *H = NULL, *h = NULL, *th = NULL;
	gwb_status st;
	int j, steps = 0;
	double beta = 0;

	if ((st = sp_alloc(o, (size_t)o->n * (m + 1), &V)))
		return st;
	H = calloc((size_t)m * m, sizeof(double));
	h = malloc((size_t)(m + 1) * sizeof(double));
	th = malloc((size_t)m * sizeof(double));
	if (!H || !h || !th) {
		st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		goto out;
	}
	if ((st = sp_random_block(o, V, 1, S->opt->seed ^ 0xB0B0)))
		goto out;
	if ((st = sp_gemm_tn(o, V, 1, V, 1, h)))
		goto out;
	if ((st = sp_axpby(o, (size_t)o->n, 0, NULL, 0, NULL, 1.0 / sqrt(h[0]), V)))
		goto out;
	for (j = 0; j < m; j++) {
		w = V + (size_t)(j + 1) * o->n;
		if ((st = sp_spmm(o, V + (size_t)j * o->n, w, 1)))
			goto out;
		double hh[64];
		for (int i = 0; i <= j; i++)
			hh[i] = 0;
		for (int pass = 0; pass < 2; pass++) {
			if ((st = sp_gemm_tn(o, V, j + 1, w, 1, h)))
				goto out;
			for (int i = 0; i <= j; i++) {
				hh[i] += h[i];
				h[i] = -h[i];
			}
			if ((st = sp_gemm_nn(o, V, j + 1, h, 1, 1.0, w)))
				goto out;
		}
		for (int i = 0; i <= j; i++)
			H[i + j * m] = H[j + i * m] = hh[i];
		if ((st = sp_gemm_tn(o, w, 1, w, 1, h)))
			goto out;
		beta = sqrt(h[0]);
		steps = j + 1;
		if (j + 1 < m) {
			if (!(beta > 1e-12 * (fabs(H[j + j * m]) + 1e-300)))
				break;
			H[j + 1 + j * m] = H[j + (j + 1) * m] = 0; /* filled by the next h */
			if ((st = sp_axpby(o, (size_t)o->n, 0, NULL, 0, NULL, 1.0 / beta, w)))
				goto out;
		}
	}
	{
		int ms = steps;
		double *G = malloc((size_t)ms * ms * sizeof(double));
		if (!G) {
			st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
			goto out;
		}
		for (int c = 0; c < ms; c++)
			for (int r = 0; r < ms; r++)
				G[r + c * ms] = H[r + c * m];
		st = sp_syev(o, G, ms, th);
		if (!st) {
			/* residual of the extreme Ritz pairs: beta * |last component| */
			double r0 = fabs(beta * G[ms - 1]);
			double r1 = fabs(beta * G[ms - 1 + (size_t)(ms - 1) * ms]);
			double spread = th[ms - 1] - th[0];
			S->lo = th[0] - r0 - 1e-3 * spread;
			S->hi = th[ms - 1] + r1 + 1e-2 * spread + 1e-300;
			if (steps == o->N) {  /* exact */
				S->lo = th[0];
				S->hi = th[ms - 1];
			}
			S->normA = fmax(fabs(S->lo), fabs(S->hi));
			/* what the auto rule reads: the gap ratio of the wanted end (the two
			 * extreme Ritz values against the rest of the spread), and how many
			 * eigenvalues the extreme Ritz value stands for (n times its Gauss
			 * quadrature weight: the start vector's squared first component) */
			S->gap = ms > 2 ? (th[1] - th[0]) / (th[ms - 1] - th[1] + 1e-300) : 1;
			S->mass = (double)o->N * G[0] * G[0];
		}
		free(G);
	}
out:
	sp_free(o, V);
	free(H);
	free(h);
	free(th);
	return st;
}

/* ================================================================ thick-restart Lanczos */

/* w <- w - V(:, 0:j) (V(:, 0:j)^T w), twice: classical Gram-Schmidt with one
 * reorthogonalization (CGS2), each pass one X^T w and one X c over the whole basis (DGEMV on
 * BLAS's threads, cuBLAS on the GPU), never a vector at a time; the coefficients are added
 * into h (j values) when h is not NULL. Timed into o->reorth_s. */
static gwb_status cgs2(sp_op *o, const double *V, int j, double *w, double *h, double *tmp)
{
	gwb_status st = GWB_OK;
	double t0 = gwb_now();
	for (int pass = 0; pass < 2 && !st; pass++) {
		if ((st = sp_gemm_tn(o, V, j, w, 1, tmp)))
			break;
		for (int i = 0; i < j; i++) {
			if (h)
				h[i] += tmp[i];
			tmp[i] = -tmp[i];
		}
		st = sp_gemm_nn(o, V, j, tmp, 1, 1.0, w);
	}
	o->reorth_s += gwb_now() - t0;
	o->nreorth++;
	return st;
}

/* Q <- Q R^-1 with R the Cholesky factor of Q^T Q (n x b, nearly orthonormal): one Gram
 * matrix (DGEMM) and one update (DGEMM), twice (CholQR2). The update goes into the work
 * block *W (n x b at least) and the two pointers are swapped, not copied back: *Q may come
 * back as the other buffer (columns past b are the caller's to carry over). G: b x b host
 * scratch. A direction that Cholesky finds dependent is left as it is (the caller's CGS2 and
 * measured checks take over). */
static gwb_status chol_qr(sp_op *o, double **Qp, int b, double **Wp, double *G)
{
	double *Q = *Qp, *W = *Wp;
	gwb_status st = GWB_OK;
	double t0 = gwb_now();
	double *R = malloc((size_t)b * b * sizeof(double));
	if (!R)
		return gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
	for (int pass = 0; pass < 2 && !st; pass++) {
		if ((st = sp_gemm_tn(o, Q, b, Q, b, G)))
			break;
		double off = 0;
		for (int t = 0; t < b * b; t++)
			off = fmax(off, fabs(G[t] - (t % (b + 1) == 0)));
		/* G = R^T R (upper R, column-major), then R <- R^-1 in place */
		bool okc = true;
		memset(R, 0, (size_t)b * b * sizeof(double));
		for (int j = 0; j < b && okc; j++) {
			for (int i = 0; i <= j; i++) {
				double s = 0.5 * (G[i + (size_t)j * b] + G[j + (size_t)i * b]);
				for (int q = 0; q < i; q++)
					s -= R[q + (size_t)i * b] * R[q + (size_t)j * b];
				if (i < j)
					R[i + (size_t)j * b] = s / R[i + (size_t)i * b];
				else if (s > 0.25)
					R[j + (size_t)j * b] = sqrt(s);
				else
					okc = false;
			}
		}
		if (!okc)
			break;
		for (int j = b - 1; j >= 0; j--) {  /* invert the upper triangle, column by column */
			double d = 1.0 / R[j + (size_t)j * b];
			R[j + (size_t)j * b] = d;
			for (int i = j - 1; i >= 0; i--) {
				double s = 0;
				for (int q = i + 1; q <= j; q++)
					s += R[i + (size_t)q * b] * R[q + (size_t)j * b];
				R[i + (size_t)j * b] = -s / R[i + (size_t)i * b];
			}
		}
		/* upper-triangular inverse computed right to left: entry (i, j) uses the
		 * original R(i, i) */
		if (!st)
			st = sp_gemm_nn(o, Q, b, R, b, 0.0, W);
		if (!st) {
			double *t = Q;
			Q = W;
			W = t;
		}
		if (off < 1e-8)
			break;  /* R was I + O(loss): orthonormal to rounding after one pass */
	}
	*Qp = Q;
	*Wp = W;
	free(R);
	o->reorth_s += gwb_now() - t0;
	return st;
}

/* Thick-restart Lanczos (Wu & Simon 2000) on s*A with partial reorthogonalization (Simon
 * 1984). The omega recurrence, generalised to the restarted projected matrix H (the kept
 * Ritz values on its diagonal, their couplings to the first new vector in an arrow), estimates
 * |v_i^T v_{j+1}| for every basis vector, the kept Ritz vectors included; a step costs one
 * product and the local three-term orthogonalization until the largest estimate passes
 * reorth_tol, and only then are the new vector and the next one orthogonalized against the
 * whole basis by CGS2 (cgs2 above). The first vector after a restart, full_reorth and an
 * exact (n-dimensional) basis always take CGS2. The estimate is checked against the measured
 * V^T v_m every cycle (the whole Gram matrix every 8th): a basis that lost more goes on with
 * CGS2 every step. reorth_tol defaults to min(sqrt(eps), tol / 10): semi-orthogonality
 * (sqrt(eps)) keeps the Ritz values exact, but the returned vectors inherit the basis' loss,
 * which must stay under the residual asked for.
 * v0 (backend memory, may be NULL) is the start vector. With S->stop_above finite (the
 * deflated check), the run stops as soon as its leading converged pairs reach a value >=
 * stop_above; S->found says how many leading pairs X holds (k otherwise). */
static gwb_status lanczos_run(solve *S, const double *v0)
{
	sp_op *o = S->o;
	int k = S->k, m = S->opt->ncv;
	size_t n = (size_t)o->n;
	double eps = DBL_EPSILON;
	double rtol = S->opt->reorth_tol > 0 ? S->opt->reorth_tol : fmin(sqrt(eps), 0.1 * S->opt->tol);
	double *V = NULL, *Wk = NULL, *H = NULL, *Y = NULL, *th = NULL, *h = NULL, *tmp = NULL;
	double *om0 = NULL, *om1 = NULL, *om2 = NULL, *G = NULL, *dtmp = NULL;
	gwb_status st;
	long full0 = o->nreorth;

	S->found = 0;
	int64_t room = o->N - S->ndefl;  /* dimension of the space Lanczos works in */
	/* a basis of 60 (randsym 100k, k = 10: 570 products against 610 with 40; the partial
	 * scheme makes its longer cycles cheap), 40 past 4M rows (memory: n x 61 doubles) */
	int base = o->N > 4000000 ? 40 : 60;
	if (m <= 0)
		m = 2 * k + 20 > base ? 2 * k + 20 : base;
	if (m > room)
		m = (int)room;
	if (m <= k)
		m = k + 1 <= room ? k + 1 : (int)room;
	bool exact = m == room;
	/* Wk: the restart product V Y (m columns) and, at the end, A X and a residual block
	 * (2k columns; more than m + 1 when deflation shrank the basis). The restart and its
	 * Cholesky QR swap V and Wk instead of copying back, so both get the larger size */
	size_t vcols = (size_t)(m + 1 > 2 * k ? m + 1 : 2 * k);
	if ((st = sp_alloc(o, n * vcols, &V)) || (st = sp_alloc(o, n * vcols, &Wk)))
		goto out;
	H = calloc((size_t)m * m, sizeof(double));
	Y = malloc((size_t)m * m * sizeof(double));
	th = malloc((size_t)m * sizeof(double));
	h = calloc((size_t)m + 1, sizeof(double));
	tmp = calloc((size_t)m + 1, sizeof(double));
	om0 = calloc((size_t)m + 2, sizeof(double));
	om1 = calloc((size_t)m + 2, sizeof(double));
	om2 = calloc((size_t)m + 2, sizeof(double));
	G = malloc((size_t)(m + 1) * (m + 1) * sizeof(double));
	dtmp = malloc((size_t)(S->ndefl + 1) * sizeof(double));
	if (!H || !Y || !th || !h || !tmp || !om0 || !om1 || !om2 || !G || !dtmp) {
		st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		goto out;
	}
	if (v0)
		st = sp_copy(o, V, v0, n);
	else
		st = sp_random_block(o, V, 1, S->opt->seed + 7919 * (uint64_t)S->ndefl);
	if (!st && S->ndefl)
		st = sp_orth_against(o, S->defl, S->ndefl, V, 1);
	if (st)
		goto out;
	double nv;
	if ((st = sp_norm(o, V, &nv)))
		goto out;
	if ((st = sp_axpby(o, n, 0, NULL, 0, NULL, 1.0 / nv, V)))
		goto out;

	int l = 0;            /* kept Ritz vectors */
	bool force = false;   /* CGS2 for the next vector */
	bool full_forced = false;  /* the partial scheme lost orthogonality: CGS2 from now on */
	double beta = 0;
	om1[0] = 1;           /* omega_{j,.}: om1; omega_{j-1,.}: om0 */
	/* A partial step drops its CGS2 coefficients (Simon's scheme), so the kept Ritz vectors
	 * of the next cycle satisfy A y = theta y + s v only up to the dropped part, which lies
	 * in the discarded directions: each step it feeds up to `drop` / beta into the new
	 * vector's overlap with them, a source the recurrence adds for the kept indices. */
	double drop = 0;
	int outer;
	for (outer = 0; outer < S->maxiter; outer++) {
		if ((st = sp_check_intr("eig.solve")))
			goto out;
		double cyc_loss = 0;  /* largest loss of orthogonality seen this cycle */
		double cyc_drop = 0;  /* largest ||V^T w|| beta dropped by a partial step */
		for (int j = l; j < m; j++) {
			double *vj = V + n * j, *w = V + n * (j + 1);
			bool full = S->opt->full_reorth || full_forced || j == l || force || exact;
			bool have_beta = false;   /* beta = ||w|| already (the local step's fused norm) */
			double a_j = 0;
			force = false;
			if ((st = full ? sp_spmm(o, vj, w, 1) : sp_spmv_dot(o, vj, w, &a_j)))
				goto out;
			if (full) {
				memset(h, 0, (size_t)(j + 1) * sizeof(double));
				if ((st = cgs2(o, V, j + 1, w, h, tmp)))
					goto out;
				for (int i = 0; i <= j; i++)
					H[i + j * m] = H[j + i * m] = h[i];
			} else {
				/* local: w -= alpha v_j + beta_{j-1} v_{j-1}, one fused pass; a second
				 * pass against both only when the step cancelled most of A v_j (beta
				 * under 1e-3 of ||A v_j||), where the local error would grow */
				double bprev = H[j - 1 + j * m], bn;
				if ((st = sp_axpby_norm(o, n, -a_j, vj, -bprev, vj - n, 1.0, w, &bn)))
					goto out;
				if (bn > 1e-3 * sqrt(a_j * a_j + bprev * bprev + bn * bn)) {
					beta = bn;
					have_beta = true;
				} else {
					if ((st = sp_gemm_tn(o, V + n * (j - 1), 2, w, 1, tmp)))
						goto out;
					a_j += tmp[1];
					tmp[0] = -tmp[0];
					tmp[1] = -tmp[1];
					if ((st = sp_gemm_nn(o, V + n * (j - 1), 2, tmp, 1, 1.0, w)))
						goto out;
				}
				H[j + j * m] = a_j;
			}
			/* deflation: the locked directions (where the projected operator is 0) out of
			 * w, after every orthogonalization against V (one pass: w's components along
			 * them are of the order of their residuals) */
			if (S->ndefl) {
				if ((st = sp_orth_once(o, S->defl, S->ndefl, w, dtmp)))
					goto out;
				have_beta = false;
			}
			if (!have_beta && (st = sp_norm(o, w, &beta)))
				goto out;
			/* omega recurrence for the new vector (om2 = omega_{j+1,.}); column i of H
			 * holds A v_i's coefficients, so sum_q H(q,i) omega_{j,q} estimates
			 * v_i^T A v_j for kept and Lanczos vectors alike */
			if (!full && beta > 0) {
				double mx = 0;
				for (int i = 0; i + 1 < j; i++) {
					double s = 0;
					for (int q = 0; q <= j; q++)
						s += H[q + i * m] * om1[q];
					s -= H[j + j * m] * om1[i];
					s -= H[j - 1 + j * m] * om0[i];
					s /= beta;
					s += (s >= 0 ? 1 : -1) * (eps * S->normA + (i < l ? drop : 0)) / beta;
					om2[i] = s;
					if (fabs(s) > mx)
						mx = fabs(s);
				}
				if (mx > cyc_loss)
					cyc_loss = mx;
				if (mx > rtol) {
					memset(h, 0, (size_t)(j + 1) * sizeof(double));
					if ((st = cgs2(o, V, j + 1, w, h, tmp)))
						goto out;
					double cn = 0;
					for (int i = 0; i <= j; i++)
						cn += h[i] * h[i];
					cn = sqrt(cn) * beta;
					cyc_drop = cn > cyc_drop ? cn : cyc_drop;
					if (S->ndefl && (st = sp_orth_against(o, S->defl, S->ndefl, w, 1)))
						goto out;
					if ((st = sp_norm(o, w, &beta)))
						goto out;
					for (int i = 0; i < j; i++)
						om2[i] = eps;
					force = true;
				}
			} else
				for (int i = 0; i < j; i++)
					om2[i] = eps;
			if (j >= 1)
				om2[j - 1] = eps;
			om2[j] = eps;
			om2[j + 1] = 1;
			if (j + 1 < m) {
				if (!(beta > 100 * eps * S->normA)) {
					/* invariant subspace: continue with a random vector orthogonal to V */
					if ((st = sp_random_block(o, w, 1, S->opt->seed + 1000 + j + 97 * outer)))
						goto out;
					if (S->ndefl && (st = sp_orth_against(o, S->defl, S->ndefl, w, 1)))
						goto out;
					if ((st = cgs2(o, V, j + 1, w, NULL, tmp)) || (st = sp_norm(o, w, &nv)))
						goto out;
					if ((st = sp_axpby(o, n, 0, NULL, 0, NULL, 1.0 / nv, w)))
						goto out;
					H[j + 1 + j * m] = H[j + (j + 1) * m] = 0;
					beta = 0;
					force = true;
				} else {
					if ((st = sp_axpby(o, n, 0, NULL, 0, NULL, 1.0 / beta, w)))
						goto out;
					H[j + 1 + j * m] = H[j + (j + 1) * m] = beta;
				}
			} else if (beta > 0 && (st = sp_axpby(o, n, 0, NULL, 0, NULL, 1.0 / beta, w)))
				goto out;
			double *t = om0;
			om0 = om1;
			om1 = om2;
			om2 = t;
		}
		/* the omega recurrence is an estimate: measure the residual vector against the
		 * basis every cycle (one DGEMV) and the whole basis every 8th; when it lost
		 * orthogonality beyond reorth_tol, start again from the sum of the current Ritz
		 * vectors with CGS2 every step */
		bool measured = !S->opt->full_reorth && !full_forced && !exact;
		if (measured) {
			double lost = 0;
			bool whole = outer % 8 == 0;
			int cols = whole ? m + 1 : 1;
			if ((st = sp_gemm_tn(o, V, m + 1, whole ? V : V + n * m, cols, G)))
				goto out;
			for (int b = 0; b < cols; b++)
				for (int a = 0; a <= m; a++) {
					double d = fabs(G[a + b * (m + 1)] - (a == (whole ? b : m)));
					lost = d > lost ? d : lost;
				}
			if (whole)  /* V^T v_m first, for the restart */
				memmove(G, G + (size_t)m * (m + 1), (size_t)(m + 1) * sizeof(double));
			if (lost > cyc_loss)
				cyc_loss = lost;
			if (lost > 10 * rtol) {
				/* V(:,0) <- sum of the k wanted Ritz vectors of this cycle, normalized */
				full_forced = true;
				memcpy(Y, H, (size_t)m * m * sizeof(double));
				sp_symmetrize(Y, m);
				if ((st = sp_syev(o, Y, m, th)))
					goto out;
reset_full:
				for (int q = 0; q < m; q++) {
					tmp[q] = 0;
					for (int i = 0; i < k; i++)
						tmp[q] += Y[q + (size_t)i * m];
				}
				if ((st = sp_gemm_nn(o, V, m, tmp, 1, 0.0, Wk)) || (st = sp_norm(o, Wk, &nv)) ||
				    (st = sp_axpby(o, n, 1.0 / nv, Wk, 0, NULL, 0, V)))
					goto out;
				memset(H, 0, (size_t)m * m * sizeof(double));
				for (int i = 0; i <= m; i++)
					om0[i] = om1[i] = eps;
				om1[0] = 1;
				l = 0;
				force = true;
				continue;
			}
		}
		/* Ritz pairs of H */
		memcpy(Y, H, (size_t)m * m * sizeof(double));
		sp_symmetrize(Y, m);
		if ((st = sp_syev(o, Y, m, th)))
			goto out;
		int conv = 0;
		double mx = 0;
		for (int i = 0; i < k; i++) {
			double r = fabs(beta * Y[m - 1 + (size_t)i * m]);
			if (exact)
				r = 0;
			if (r <= S->opt->tol * S->normA && conv == i)
				conv++;
			if (r > mx)
				mx = r;
		}
		/* the deflated check: once its smallest Ritz pair is accurate to sqrt(tol) and lies
		 * (with its residual interval) above the k-th value found, nothing was missed. A
		 * random start sees every direction, and the extreme one converges first: a missed
		 * copy below would have pulled the smallest Ritz value down before this pair got
		 * there (or lies within the residual of it) */
		if (S->stop_above < INFINITY && !exact) {
			double r1 = fabs(beta * Y[m - 1]);
			if (r1 <= sqrt(S->opt->tol) * S->normA &&
			    th[0] - r1 >= S->stop_above + S->opt->tol * S->normA) {
				if ((st = sp_record(S, 0, r1)))
					goto out;
				S->found = 0;
				S->converged = true;
				outer++;
				break;
			}
		}
		/* pairs that must converge: k, or (deflated check) up to the first converged value
		 * at or above stop_above */
		int need = k;
		for (int i = 0; i < conv; i++)
			if (th[i] >= S->stop_above) {
				need = i + 1;
				break;
			}
		if ((st = sp_record(S, conv < need ? conv : need, mx)))
			goto out;
		bool last = outer + 1 == S->maxiter;
		if (conv >= need || last) {
			/* Ritz vectors and their true residuals */
			if ((st = sp_gemm_nn(o, V, m, Y, need, 0.0, S->X)))
				goto out;
			if ((st = sp_spmm(o, S->X, Wk, need)))
				goto out;
			if ((st = sp_residual_norms(o, S->X, Wk, need, th, Wk + n * need, S->res, NULL)))
				goto out;
			memcpy(S->theta, th, (size_t)need * sizeof(double));
			S->found = need;
			bool ok = true;
			for (int i = 0; i < need; i++)
				if (!(S->res[i] <= S->opt->tol * S->normA))
					ok = false;
			if (ok) {
				S->converged = true;
				outer++;
				break;
			}
			if (last || exact) {
				outer++;
				break;
			}
			if (!full_forced && !S->opt->full_reorth) {
				/* the estimates say converged, the true residuals do not: the basis is
				 * not orthogonal enough; go on with CGS2 every step (Y holds this
				 * cycle's Ritz vectors) */
				full_forced = true;
				goto reset_full;
			}
		}
		/* thick restart: keep l Ritz vectors, the residual vector next */
		l = k + (m - k) / 2;
		if (l > m - 1)
			l = m - 1;
		if ((st = sp_gemm_nn(o, V, m, Y, l, 0.0, Wk)) || (st = sp_copy(o, Wk + n * l, V + n * m, n)))
			goto out;
		double *swp = V;   /* the kept vectors and the residual vector are the new basis */
		V = Wk;
		Wk = swp;
		memset(H, 0, (size_t)m * m * sizeof(double));
		for (int i = 0; i < l; i++) {
			H[i + i * m] = th[i];
			H[i + l * m] = H[l + i * m] = beta * Y[m - 1 + (size_t)i * m];
		}
		for (int i = 0; i <= m; i++)
			om0[i] = om1[i] = eps;
		om1[l] = 1;
		drop = cyc_drop;
		if (measured && cyc_loss > 0.01 * rtol) {
			/* the kept Ritz vectors inherit the basis' loss of orthogonality, and CGS2
			 * against a basis that is not orthonormal leaves the new vector as far off:
			 * the recurrence, restarted at eps, would fall behind (~30x a cycle). So the
			 * kept block is made orthonormal again (Cholesky QR: blocked, BLAS-3; its R is
			 * I + O(loss), so H's diagonal and arrow stay right to that order) and the
			 * residual vector orthogonalized against it by CGS2 */
			double *v_before = V;
			if ((st = chol_qr(o, &V, l, &Wk, G)))
				goto out;
			if (V != v_before && (st = sp_copy(o, V + n * l, Wk + n * l, n)))
				goto out;   /* the residual vector follows the swapped block */
			if ((st = cgs2(o, V, l, V + n * l, NULL, tmp)) ||
			    (st = sp_norm(o, V + n * l, &nv)) ||
			    (st = sp_axpby(o, n, 0, NULL, 0, NULL, 1.0 / nv, V + n * l)))
				goto out;
		} else if (measured) {
			/* the residual vector's measured overlap with the kept Ritz vectors,
			 * y_i^T v_m = Y_i^T (V^T v_m), starts the recurrence of the next cycle */
			for (int i = 0; i < l; i++) {
				double s = 0;
				for (int a = 0; a < m; a++)
					s += Y[a + (size_t)i * m] * G[a];
				om1[i] = s + (s >= 0 ? eps : -eps);
			}
		}
		force = true;
	}
	snprintf(S->note, sizeof(S->note), "thick-restart Lanczos, basis %d, %d restarts, %s "
		 "reorthogonalization (%ld CGS2 passes)", m, outer, S->opt->full_reorth ? "full" :
		 full_forced ? "partial then full" : "partial", o->nreorth - full0);
out:
	sp_free(o, V);
	sp_free(o, Wk);
	free(H);
	free(Y);
	free(th);
	free(h);
	free(tmp);
	free(om0);
	free(om1);
	free(om2);
	free(G);
	free(dtmp);
	return st;
}

/* Lanczos from one start vector sees one vector of each eigenspace, so a copy of a repeated
 * eigenvalue can be missed. After it converges, Lanczos runs again from a random start with
 * every vector kept orthogonal to the pairs found (deflation), until its leading converged
 * value reaches the k-th one (most often its first pair: a check costs the products of one
 * pair, not of k); any value it finds below the k-th joins them, and the check repeats until
 * none does. */
gwb_status sp_lanczos(solve *S, const double *v0)
{
	sp_op *o = S->o;
	int k = S->k, rounds = 0;
	size_t n = (size_t)o->n;
	double *X2 = NULL, *M = NULL, *th2 = NULL, *res2 = NULL;
	gwb_status st;
	char note[256];

	S->stop_above = INFINITY;
	if ((st = lanczos_run(S, v0)) || !S->converged)
		return st;
	if (S->opt->no_defl_check) {  /* deflated_check = false: as ARPACK and SLEPc */
		snprintf(note, sizeof(note), "%.200s; no deflated check (deflated_check = false)",
			 S->note);
		memcpy(S->note, note, sizeof(note));
		return GWB_OK;
	}
	memcpy(note, S->note, sizeof(note));
	if (o->N < 2 * (int64_t)k + 2)
		return GWB_OK;   /* no room for a deflated run */
	if ((st = sp_alloc(o, n * k, &X2)) || (st = sp_alloc(o, n * 2 * k, &M)))
		goto out;
	th2 = malloc((size_t)k * sizeof(double));
	res2 = malloc((size_t)k * sizeof(double));
	if (!th2 || !res2) {
		st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		goto out;
	}
	long prods0 = o->spmv;
	for (rounds = 1; rounds <= 8; rounds++) {
		double tol = S->opt->tol * S->normA;
		solve D = *S;
		D.X = X2;
		D.theta = th2;
		D.res = res2;
		D.defl = S->X;
		D.ndefl = k;
		D.converged = false;
		D.iter = S->iter;
		D.stop_above = S->theta[k - 1] - tol;
		D.hist_res = 0;
		for (int i = 0; i < k; i++)
			D.hist_res = S->res[i] > D.hist_res ? S->res[i] : D.hist_res;
		st = lanczos_run(&D, NULL);
		S->iter = D.iter;
		if (st)
			goto out;
		if (!D.converged) {
			snprintf(S->note, sizeof(S->note), "%.100s; multiplicity check incomplete", note);
			S->converged = false;
			goto out;
		}
		/* merge: the k smallest of theta and th2 (X2 is orthogonal to X) */
		int f = D.found;
		if (!(f > 0 && th2[0] < S->theta[k - 1] - tol))
			break;
		int a = 0, b = 0;
		double *C = calloc((size_t)2 * k * k, sizeof(double));
		double *nt = malloc((size_t)k * sizeof(double)), *nr = malloc((size_t)k * sizeof(double));
		if (!C || !nt || !nr) {
			free(C);
			free(nt);
			free(nr);
			st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
			goto out;
		}
		for (int i = 0; i < k; i++) {
			bool from_x = b >= f || (a < k && S->theta[a] <= th2[b]);
			int src = from_x ? a : k + b;
			nt[i] = from_x ? S->theta[a] : th2[b];
			nr[i] = from_x ? S->res[a] : res2[b];
			C[src + (size_t)i * 2 * k] = 1.0;
			if (from_x)
				a++;
			else
				b++;
		}
		/* [X X2] C -> selected columns */
		st = sp_copy(o, M, S->X, n * k);
		if (!st)
			st = sp_copy(o, M + n * k, X2, n * f);
		if (!st && f < k)
			st = sp_axpby(o, n * (k - f), 0, NULL, 0, NULL, 0, M + n * (k + f));
		if (!st)
			st = sp_gemm_nn(o, M, 2 * k, C, k, 0.0, S->X);
		memcpy(S->theta, nt, (size_t)k * sizeof(double));
		memcpy(S->res, nr, (size_t)k * sizeof(double));
		free(C);
		free(nt);
		free(nr);
		if (st)
			goto out;
	}
	snprintf(S->note, sizeof(S->note), "%.100s; %d deflated check%s (%ld products)", note,
		 rounds > 8 ? 8 : rounds, rounds == 1 ? "" : "s", o->spmv - prods0);
out:
	sp_free(o, X2);
	sp_free(o, M);
	free(th2);
	free(res2);
	return st;
}

