/* rf.c - gwb_rf_train, the training dispatcher (forest.h): checks the parameters, resolves
 * criterion, class weights and the regression centre, chooses the backend once (CPU, GPU,
 * several GPUs, hybrid), quantizes, calls the chosen trainer (rf_cpu.c, rf_hybrid.c,
 * rf_multi.c, kernels/rf_train.cu) and finishes the model (OOB, importances, timings). It sits
 * above the trainers, which sit above the model (forest.c). */
#define _GNU_SOURCE
#include "forest.h"

#include <stdio.h>
#include <stdlib.h>

#include "gpu.h"
#include "intr.h"
#include "mpi.h"
#include "quantize.h"
#include "switches.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/rf.h"
/* "auto" trains on the GPU from this estimate up (rows x mtry x min(depth, 16) x trees): on an
 * H200 host (16 cores) the GPU won end to end from 5 MB (1,000 rows x 32 features, 100 trees,
 * depth 10: 10.3 ms against 12.2) and lost below 1 MB (iris: 4.2 ms against 1.0);
 * scripts/bench/rf_gpu.lua measures it, man/gwb.1 repeats it. */
#define RF_AUTO_MIN_BYTES GWB_RF_GPU_TRAIN_MIN_BYTES
#else
#define RF_AUTO_MIN_BYTES 0
#endif

/* The trainer the dispatcher chose (b), for the whole forest or, under mpirun, for this
 * rank's range (gwb_rf_train_ranks calls it back). */
typedef struct chosen {
	gwb_backend b;
	bool hybrid_cpu;
} chosen;

static gwb_status train_chosen(void *ctx, const gwb_rf_job *job, gwb_forest *f)
{
	const chosen *c = ctx;

	if (job->p->hybrid)
		return gwb_rf_train_hybrid(job, f, c->hybrid_cpu);  /* rf_hybrid.c */
	switch (c->b) {
#ifdef GWB_HAVE_CUDA
	case GWB_BACKEND_GPU:
		return gwb_rf_train_devices(job, f);  /* rf_multi.c: gpus = 1 is rf_train.cu */
#endif
	default:
		return job->p->gpus.cpu ? gwb_rf_train_devices(job, f) : gwb_rf_train_cpu(job, f);
	}
}

static gwb_status train_impl(const gwb_dataset *d, const gwb_rf_params *p0, gwb_rf_judge *judge,
			     gwb_forest **out)
{
	chosen ch;
	gwb_rf_params p = *p0;
	gwb_rf_job job = {0};
	gwb_quant *q = NULL;
	gwb_forest *f = NULL;
	double *cw = NULL, t0 = gwb_now(), t1, bytes;
	gwb_backend b;
	char why[160];
	gwb_status st;
	size_t i;
	int k;
	bool hybrid_cpu;

	*out = NULL;
	/* the panel's and the log's time of rf.train is this call's, quantizing and OOB included */
	gwb_progress_call_begin();
	if ((st = gwb_rf_params_check(&p, d)))
		goto out_free;
	/* several ranks: the same data everywhere, or a message naming the rank that differs */
	if (p.ranks && gwb_mpi_size() > 1 && (st = gwb_rf_ranks_check_data(d, "rf.train")))
		goto out_free;
	if (p.criterion == GWB_CRIT_DEFAULT)
		p.criterion = d->task == GWB_TASK_CLASSIFICATION ? GWB_CRIT_GINI : GWB_CRIT_MSE;
	if (p.gpus.n < 1)  /* params not from gwb_rf_params_init: device 0 alone */
		gwb_gpu_set_default(&p.gpus);
	if (!p.threads)
		p.threads = gwb_cpu_count();
	job.d = d;
	job.p = &p;
	job.mtry = gwb_rf_mtry(&p, d->features, d->task);
	job.threads = p.threads;
	job.criterion = p.criterion;
	job.tree_first = p.tree_first;
	if (p.tree_first && p.hybrid) {  /* the hybrid queue numbers trees from 0 */
		st = gwb_error(GWB_EINVAL, "rf: backend = \"hybrid\" cannot grow trees after "
			       "existing ones; use \"cpu\" or \"gpu\"");
		goto out_free;
	}
	if (d->task == GWB_TASK_CLASSIFICATION) {
		cw = calloc((size_t)d->classes + 1, sizeof(double));
		if (!cw) {
			st = gwb_error(GWB_ENOMEM, "rf.train: out of memory");
			goto out_free;
		}
		for (k = 0; k < d->classes; k++)
			cw[k] = p.class_weight ? p.class_weight[k] : 1.0;
		if (p.class_weight_balanced) {
			size_t *cnt = calloc((size_t)d->classes + 1, sizeof(size_t));
			if (!cnt) {
				st = gwb_error(GWB_ENOMEM, "rf.train: out of memory");
				goto out_free;
			}
			for (i = 0; i < d->rows; i++)
				cnt[d->y[i]]++;
			for (k = 0; k < d->classes; k++)
				cw[k] = cnt[k] ? (double)d->rows / ((double)d->classes * (double)cnt[k]) : 0;
			free(cnt);
		}
		job.class_weight = cw;
	} else {
		double sw = 0, sy = 0;
		for (i = 0; i < d->rows; i++) {
			double w = p.sample_weight ? p.sample_weight[i] : 1.0;
			sw += w;
			sy += w * d->yr[i];
		}
		job.y_center = sw > 0 ? sy / sw : 0;
	}

	/* What the GPU path would read from device memory: the codes of mtry features per level. */
	bytes = (double)d->rows * job.mtry * (p.depth < 16 ? p.depth : 16) * p.trees;
	hybrid_cpu = p.hybrid && p.hybrid_cpu_front;
	if (p.hybrid && !hybrid_cpu) {
		/* hybrid: the GPU and the CPU together; without a GPU the CPU alone (said in why),
		 * or an error when the caller requires the GPU */
		if (gwb_gpu_available()) {
			b = GWB_BACKEND_GPU;
			snprintf(why, sizeof(why), "hybrid: the GPU and %d CPU threads grow the trees "
				 "together", p.threads > 1 ? p.threads - 1 : 1);
		} else if (p.require_gpu) {
			st = gwb_error(GWB_ENODEV, "rf.train: backend = \"hybrid\" with require_gpu = "
				       "true, but there is no GPU: %s", gwb_gpu_unavailable_reason());
			goto out_free;
		} else {
			p.hybrid = false;
			b = GWB_BACKEND_CPU;
			snprintf(why, sizeof(why), "hybrid asked for, but no GPU (%.80s): trained on the "
				 "CPU alone", gwb_gpu_unavailable_reason());
		}
	} else if (hybrid_cpu) {
		b = GWB_BACKEND_CPU;
		snprintf(why, sizeof(why), "hybrid with two CPU pools (hybrid_front = \"cpu\")");
	} else if (p.gpus.cpu) {
		b = GWB_BACKEND_CPU;  /* tests: CPU stand-ins for the devices of gpus (mgpu.h) */
		snprintf(why, sizeof(why), "%d CPU stand-ins for GPUs (gpu_standin = \"cpu\")",
			 p.gpus.n);
	} else if ((st = gwb_backend_choose(p.gpus.n > 1 && p.backend == GWB_BACKEND_AUTO ?
					    GWB_BACKEND_GPU : p.backend, bytes, RF_AUTO_MIN_BYTES,
					    &b, why, sizeof(why)))) {
		goto out_free;  /* several devices asked for: the GPU, whatever the size */
	} else if (b == GWB_BACKEND_GPU && p.backend == GWB_BACKEND_AUTO && p.gpus.n <= 1 &&
		   gwb_backend_default == GWB_BACKEND_AUTO &&
		   gwb_rf_hybrid_pays(&p, d->rows, job.mtry, why, sizeof(why))) {
		p.hybrid = true;  /* "auto": the CPU's share pays (rf_hybrid.c's rule, in why) */
	}
	t1 = gwb_now();
#ifdef GWB_HAVE_CUDA
	if (b == GWB_BACKEND_GPU)
		st = GWB_OK;  /* job.q = NULL: the GPU trainer quantizes on the device (rf.h) */
	else
#endif
	if (p.hybrid)
		st = GWB_OK;  /* the hybrid trainer builds the host codes itself, beside the GPU */
	else
		st = gwb_quant_build(d, p.bins, p.quantile_sample, p.seed, p.threads, &q);
	if (st)
		goto out_free;
	job.q = q;
	if ((st = gwb_forest_new(d, &p, job.mtry, cw, &f)))
		goto out_free;
	f->timing.quantize_ms = (gwb_now() - t1) * 1e3;
	f->backend = b;
	snprintf(f->backend_why, sizeof(f->backend_why), "%s", why);
	ch.b = b;
	ch.hybrid_cpu = hybrid_cpu;
#ifdef GWB_HAVE_CUDA
	if (judge && b == GWB_BACKEND_GPU && !p.hybrid && p.gpus.n <= 1 && !p.gpus.cpu &&
	    !(p.ranks && gwb_mpi_size() > 1) && !p.oob && gwb_switch_on(GWB_SW_RF_JUDGE_GPU))
		job.judge = judge;  /* one GPU: the forest is judged there, not read back */
#endif
	if (judge)
		judge->done = false;
	if (p.ranks && gwb_mpi_size() > 1) {
		/* (f:grow's new trees too: their ranges start at tree_first) */
		st = gwb_rf_train_ranks(&job, f, train_chosen, &ch);  /* rf_ranks.c */
	} else {
		st = train_chosen(&ch, &job, f);
	}
	if (st)
		goto out_free;
	if (judge && judge->done) {  /* the sums are the result; the forest was never read back */
		judge->total_ms = (gwb_now() - t0) * 1e3;
		judge->kernel_ms = f->timing.kernel_ms;
		judge->transfer_ms = f->timing.transfer_ms;
		goto out_free;
	}
	if (f->trees < p.trees) {  /* keep = true and Ctrl-C: the trees finished so far */
		f->trees_asked = p.trees;
		f->params.trees = f->trees;
	}
	gwb_quant_free(q);
	q = NULL;
	if ((st = gwb_forest_finish(f, d, p.threads)))
		goto out_free;
	f->timing.total_ms = (gwb_now() - t0) * 1e3;
	/* kernels and copies overlap on their streams: what is left is at least 0 */
	f->timing.host_ms = f->timing.total_ms - f->timing.kernel_ms - f->timing.transfer_ms;
	f->timing.overlap_ms = 0;
	if (f->timing.host_ms < 0) {
		f->timing.overlap_ms = -f->timing.host_ms;
		f->timing.host_ms = 0;
	}
	*out = f;
	f = NULL;
out_free:
	gwb_forest_free(f);
	gwb_quant_free(q);
	free(cw);
	gwb_progress_call_end();
	return st;
}

gwb_status gwb_rf_train(const gwb_dataset *d, const gwb_rf_params *p, gwb_forest **out)
{
	return train_impl(d, p, NULL, out);
}

gwb_status gwb_rf_train_judged(const gwb_dataset *d, const gwb_rf_params *p, gwb_rf_judge *j,
			       gwb_forest **out)
{
	return train_impl(d, p, j, out);
}
