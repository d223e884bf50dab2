/* eig.c - the eigen result shared by all eigensolvers: allocation, history, sorting,
 * residuals through a matvec, orthogonality. */
#include "eig.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "dense.h"
#include "sparse.h"

gwb_status gwb_eigen_new(size_t n, size_t m, size_t k, size_t count, bool vectors, bool svd,
			 gwb_eigen **out)
{
	gwb_eigen *e;
	size_t i, nv = k * count;

	*out = NULL;
	if (!n || !k || !count || !m)
		return gwb_error(GWB_EINVAL, "eigen result: n, k and count must be >= 1");
	e = calloc(1, sizeof(*e));
	if (!e)
		return gwb_error(GWB_ENOMEM, "out of memory allocating an eigen result");
	e->n = n;
	e->m = m;
	e->k = k;
	e->count = count;
	e->svd = svd;
	e->values = malloc(nv * sizeof(double));
	e->residuals = malloc(nv * sizeof(double));
	if (vectors) {
		e->vectors = calloc(nv * n, sizeof(double));
		if (svd)
			e->left = calloc(nv * m, sizeof(double));
	}
	if (!e->values || !e->residuals || (vectors && !e->vectors) || (vectors && svd && !e->left)) {
		double mib = (double)nv * (2 + (vectors ? n + (svd ? m : 0) : 0)) * 8 / 1048576.0;
		gwb_eigen_free(e);
		return gwb_error(GWB_ENOMEM, "out of memory: the eigen result needs %.1f MiB", mib);
	}
	for (i = 0; i < nv; i++)
		e->values[i] = e->residuals[i] = NAN;
	e->max_residual = NAN;
	e->orthogonality = NAN;
	strcpy(e->backend, "cpu");
	strcpy(e->dtype, "f64");
	*out = e;
	return GWB_OK;
}

void gwb_eigen_free(gwb_eigen *e)
{
	if (!e)
		return;
	free(e->values);
	free(e->vectors);
	free(e->left);
	free(e->residuals);
	free(e->hist);
	gwb_buf_free(e->dvectors);
	free(e);
}

struct widen { const float *in; double *out; };
static void widen_part(void *ctx, int64_t lo, int64_t hi, int part)
{
	struct widen *w = ctx;
	int64_t i;
	(void)part;
	for (i = lo; i < hi; i++)
		w->out[i] = w->in[i];
}

/* A staged chunk of f32 vectors, widened straight into the result's f64 array. */
static void widen_sink(void *ctx, size_t off, const void *chunk, size_t len)
{
	struct widen w = {chunk, (double *)ctx + off / sizeof(float)};
	gwb_parallel_for((int64_t)(len / sizeof(float)), 1 << 18, widen_part, &w);
}

gwb_status gwb_eigen_host_vectors(gwb_eigen *e)
{
	size_t len = e->count * e->k * e->n;
	gwb_status rc;
	void *p;

	if (e->vectors || !e->dvectors)
		return GWB_OK;
	if (!(e->vectors = malloc(len * sizeof(double))))
		return gwb_error(GWB_ENOMEM, "out of memory: %.1f MiB for the eigenvectors on the host",
				 len * 8 / 1048576.0);
	if (e->dvec_dtype) {
		/* f64: straight into the result's array */
		rc = e->dvectors->ops->copy_out(e->vectors, e->dvectors->dev, len * sizeof(double));
	} else if (e->dvectors->host_valid) {
		struct widen w;
		rc = gwb_buf_host(e->dvectors, &p);
		w.in = p;
		w.out = e->vectors;
		gwb_parallel_for((int64_t)len, 1 << 18, widen_part, &w);
	} else {
		/* f32 on the device: widened chunk by chunk as the copy arrives */
		rc = gwb_gpu_copy_out_to(e->dvectors->dev, len * sizeof(float), widen_sink, e->vectors);
	}
	if (rc) {
		free(e->vectors);
		e->vectors = NULL;
	}
	return rc;
}

gwb_status gwb_eigen_vector_copy(const gwb_eigen *e, size_t b, size_t i, double *out)
{
	size_t n = e->n, off = (b * e->k + i) * n, j;
	gwb_status rc;

	if (e->vectors) {
		memcpy(out, e->vectors + off, n * sizeof(double));
		return GWB_OK;
	}
	if (!e->dvectors)
		return gwb_error(GWB_EINVAL, "this result has no vectors");
	if (e->dvec_dtype)
		return e->dvectors->ops->copy_out(out, (const double *)e->dvectors->dev + off,
						  n * sizeof(double));
	{
		float *f = malloc(n * sizeof(float));
		if (!f)
			return gwb_error(GWB_ENOMEM, "out of memory");
		rc = e->dvectors->ops->copy_out(f, (const float *)e->dvectors->dev + off,
						n * sizeof(float));
		for (j = 0; !rc && j < n; j++)
			out[j] = f[j];
		free(f);
	}
	return rc;
}

gwb_status gwb_eigen_history_push(gwb_eigen *e, int iteration, int converged, double max_residual)
{
	if (e->hist_len == e->hist_cap) {
		size_t cap = e->hist_cap ? 2 * e->hist_cap : 32;
		gwb_eig_hist *h = realloc(e->hist, cap * sizeof(*h));
		if (!h)
			return gwb_error(GWB_ENOMEM, "out of memory growing the convergence history");
		e->hist = h;
		e->hist_cap = cap;
	}
	e->hist[e->hist_len].iteration = iteration;
	e->hist[e->hist_len].converged = converged;
	e->hist[e->hist_len].max_residual = max_residual;
	e->hist_len++;
	return GWB_OK;
}

static void swap_d(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

static void swap_vec(double *a, double *b, size_t n)
{
	size_t r;

	for (r = 0; r < n; r++)
		swap_d(a + r, b + r);
}

void gwb_eigen_sort(gwb_eigen *e, size_t b)
{
	double *v = e->values + b * e->k, *res = e->residuals + b * e->k;
	size_t i, j, k = e->k;

	/* Selection sort: k is small for iterative solvers and the dense drivers already
	 * return sorted values, so this mostly verifies order in O(k^2) compares and O(k) swaps. */
	for (i = 0; i + 1 < k; i++) {
		size_t best = i;
		for (j = i + 1; j < k; j++)
			if (e->svd ? v[j] > v[best] : v[j] < v[best])
				best = j;
		if (best == i)
			continue;
		swap_d(v + i, v + best);
		swap_d(res + i, res + best);
		if (e->vectors)
			swap_vec(gwb_eigen_vector(e, b, i), gwb_eigen_vector(e, b, best), e->n);
		if (e->left)
			swap_vec(e->left + (b * k + i) * e->m, e->left + (b * k + best) * e->m, e->m);
	}
}

gwb_status gwb_eigen_residuals_op(gwb_eigen *e, size_t b, gwb_matvec_fn mv, void *ctx,
				  double normA)
{
	size_t n = e->n, i, r;
	double *y;
	gwb_status rc = GWB_OK;

	if (!e->vectors)
		return gwb_error(GWB_EINVAL, "residuals need the eigenvectors (vectors = true)");
	y = malloc(n * sizeof(double));
	if (!y)
		return gwb_error(GWB_ENOMEM, "out of memory computing residuals");
	for (i = 0; i < e->k; i++) {
		const double *v = gwb_eigen_vector(e, b, i);
		double lam = e->values[b * e->k + i], s = 0.0, c = 0.0, nv;
		if ((rc = mv(ctx, v, y)))
			break;
		for (r = 0; r < n; r++) {
			double d = y[r] - lam * v[r], t = d * d, u = s + t;
			c += s >= t ? (s - u) + t : (t - u) + s;
			s = u;
		}
		nv = sqrt(gwb_dot_kahan(v, v, n));
		e->residuals[b * e->k + i] =
			sqrt(s + c) / ((normA > 0 ? normA : 1.0) * (nv > 0 ? nv : 1.0));
	}
	free(y);
	gwb_eigen_update_max(e);
	return rc;
}

double gwb_eigen_orthogonality(gwb_eigen *e, size_t b)
{
	size_t i, j, k = e->k, n = e->n;
	double worst = 0.0;

	if (!e->vectors)
		return NAN;
	for (i = 0; i < k; i++)
		for (j = i; j < k; j++) {
			double d = gwb_dot_kahan(gwb_eigen_vector(e, b, i), gwb_eigen_vector(e, b, j), n);
			d = fabs(d - (i == j ? 1.0 : 0.0));
			if (d > worst)
				worst = d;
		}
	if (e->orthogonality != e->orthogonality || worst > e->orthogonality)
		e->orthogonality = worst;
	return worst;
}

void gwb_eigen_update_max(gwb_eigen *e)
{
	size_t i, nv = e->k * e->count;
	double m = NAN;

	for (i = 0; i < nv; i++) {
		double r = e->residuals[i];
		if (r == r && (m != m || r > m))
			m = r;
	}
	e->max_residual = m;
}
