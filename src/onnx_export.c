/* onnx_export.c - f:export_onnx (onnx_export.h): the forest's node arrays turned into the
 * flat per-node attribute lists of ai.onnx.ml's tree ensembles (one entry per node: tree id,
 * node id, feature, threshold, mode, children, missing-value side; one per leaf and class:
 * the weight), packed by protobuf-c and written through fileio.c's atomic save. Every
 * allocation goes into one arena freed at the end. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "onnx/onnx-ml.pb-c.h"
#include "onnx_export.h"

typedef struct arena {
	void **p;
	size_t n, cap;
	bool oom;
} arena;

static void *take(arena *a, size_t bytes)
{
	void *p;

	if (a->oom)
		return NULL;
	if (a->n == a->cap) {
		size_t c = a->cap ? a->cap * 2 : 64;
		void **q = realloc(a->p, c * sizeof(void *));
		if (!q) {
			a->oom = true;
			return NULL;
		}
		a->p = q;
		a->cap = c;
	}
	if (!(p = calloc(1, bytes ? bytes : 1))) {
		a->oom = true;
		return NULL;
	}
	a->p[a->n++] = p;
	return p;
}

static char *dup(arena *a, const char *s)
{
	char *p = take(a, strlen(s) + 1);

	if (p)
		memcpy(p, s, strlen(s) + 1);
	return p;
}

static void release(arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
}

static Onnx__AttributeProto *attr(arena *a, const char *name, Onnx__AttributeProto__AttributeType t)
{
	Onnx__AttributeProto *x = take(a, sizeof(*x));

	if (!x)
		return NULL;
	onnx__attribute_proto__init(x);
	x->name = dup(a, name);
	x->has_type = 1;
	x->type = t;
	return x;
}

static Onnx__AttributeProto *attr_ints(arena *a, const char *name, size_t n, int64_t **out)
{
	Onnx__AttributeProto *x = attr(a, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);

	if (x) {
		x->n_ints = n;
		x->ints = take(a, n * sizeof(int64_t));
	}
	*out = x ? x->ints : NULL;
	return x;
}

static Onnx__AttributeProto *attr_floats(arena *a, const char *name, size_t n, float **out)
{
	Onnx__AttributeProto *x = attr(a, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);

	if (x) {
		x->n_floats = n;
		x->floats = take(a, n * sizeof(float));
	}
	*out = x ? x->floats : NULL;
	return x;
}

static Onnx__AttributeProto *attr_strings(arena *a, const char *name, size_t n,
					  ProtobufCBinaryData **out)
{
	Onnx__AttributeProto *x = attr(a, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);

	if (x) {
		x->n_strings = n;
		x->strings = take(a, n * sizeof(ProtobufCBinaryData));
	}
	*out = x ? x->strings : NULL;
	return x;
}

static Onnx__AttributeProto *attr_string(arena *a, const char *name, const char *v)
{
	Onnx__AttributeProto *x = attr(a, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);

	if (x) {
		x->has_s = 1;
		x->s.data = (uint8_t *)dup(a, v);
		x->s.len = strlen(v);
	}
	return x;
}

static Onnx__AttributeProto *attr_int(arena *a, const char *name, int64_t v)
{
	Onnx__AttributeProto *x = attr(a, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);

	if (x) {
		x->has_i = 1;
		x->i = v;
	}
	return x;
}

/* A tensor value info: elem type, dims (-1: the batch, a named dimension "N"). */
static Onnx__ValueInfoProto *tensor_info(arena *a, const char *name, int32_t elem, int nd,
					 const int64_t *dims, const char *doc)
{
	Onnx__ValueInfoProto *v = take(a, sizeof(*v));
	Onnx__TypeProto *t = take(a, sizeof(*t));
	Onnx__TypeProto__Tensor *tt = take(a, sizeof(*tt));
	Onnx__TensorShapeProto *sh = take(a, sizeof(*sh));
	Onnx__TensorShapeProto__Dimension **dd = take(a, (size_t)nd * sizeof(void *));

	if (!v || !t || !tt || !sh || !dd)
		return NULL;
	onnx__value_info_proto__init(v);
	onnx__type_proto__init(t);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	for (int i = 0; i < nd; i++) {
		Onnx__TensorShapeProto__Dimension *d = take(a, sizeof(*d));
		if (!d)
			return NULL;
		onnx__tensor_shape_proto__dimension__init(d);
		if (dims[i] < 0) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = dup(a, "N");
		} else {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[i];
		}
		dd[i] = d;
	}
	sh->n_dim = (size_t)nd;
	sh->dim = dd;
	tt->has_elem_type = 1;
	tt->elem_type = elem;
	tt->shape = sh;
	t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	t->tensor_type = tt;
	v->name = dup(a, name);
	v->type = t;
	if (doc)
		v->doc_string = dup(a, doc);
	return v;
}

static bool integer_name(const char *s)
{
	char *end;

	if (!s || !*s)
		return false;
	(void)strtoll(s, &end, 10);
	return !*end;
}

/* The input's doc string: the feature names in order (and codes = levels for categorical
 * features exported as codes). */
static char *input_doc(arena *a, const gwb_forest *f)
{
	size_t n = 64;
	char *s, *p;

	for (int j = 0; j < f->features; j++) {
		n += (f->names && f->names[j] ? strlen(f->names[j]) : 12) + 2;
		if (f->cat_levels && f->cat_levels[j])
			for (int k = 0; k < f->cat_count[j]; k++)
				n += strlen(f->cat_levels[j][k]) + 16;
	}
	if (!(s = take(a, n)))
		return NULL;
	p = s + sprintf(s, "features: ");
	for (int j = 0; j < f->features; j++) {
		if (f->names && f->names[j])
			p += sprintf(p, "%s%s", j ? ", " : "", f->names[j]);
		else
			p += sprintf(p, "%sx%d", j ? ", " : "", j + 1);
	}
	for (int j = 0; j < f->features; j++)
		if (f->cat_levels && f->cat_levels[j]) {
			p += sprintf(p, "; column %d takes level codes:", j + 1);
			for (int k = 0; k < f->cat_count[j]; k++)
				p += sprintf(p, " %d = %s", k, f->cat_levels[j][k]);
		}
	return s;
}

gwb_status gwb_forest_export_onnx(const gwb_forest *f, const char *path, bool codes)
{
	arena A = {0};
	arena *a = &A;
	Onnx__ModelProto model;
	Onnx__GraphProto graph;
	Onnx__NodeProto node;
	Onnx__OperatorSetIdProto ml, def;
	Onnx__OperatorSetIdProto *ops[2] = {&ml, &def};
	Onnx__AttributeProto *at[24];
	Onnx__ValueInfoProto *in[1], *out[2];
	size_t N = f->nodes, leaves = 0, i, L, pos;
	bool cls = f->task == GWB_TASK_CLASSIFICATION, ints = cls;
	int64_t *tid, *nid, *fid, *tn, *fn, *mv, *ltid, *lnid, *lcid;
	float *val, *lw;
	ProtobufCBinaryData *modes;
	int na = 0, K = f->outputs, t;
	uint8_t *buf = NULL;
	size_t len;
	gwb_status st;
	static const char *const leq = "BRANCH_LEQ", *const leaf = "LEAF";

	for (int j = 0; j < f->features; j++)
		if (f->cat_levels && f->cat_levels[j] && !codes)
			return gwb_error(GWB_EINVAL, "export_onnx: feature '%s' is categorical (%d levels): "
					 "ONNX's tree ensemble compares numbers, so the model would take "
					 "its level codes, not its labels; export with {categorical = "
					 "\"codes\"} to accept that (the input's doc string lists code = "
					 "level)", f->names && f->names[j] ? f->names[j] : "?",
					 f->cat_count[j]);
	if (f->trees < 1 || !N)
		return gwb_error(GWB_EINVAL, "export_onnx: the forest has no trees");
	for (i = 0; i < N; i++)
		leaves += f->feature[i] < 0;
	for (int k = 0; cls && k < f->classes; k++)
		ints = ints && integer_name(f->class_names[k]);

	onnx__model_proto__init(&model);
	onnx__graph_proto__init(&graph);
	onnx__node_proto__init(&node);
	onnx__operator_set_id_proto__init(&ml);
	onnx__operator_set_id_proto__init(&def);
	ml.domain = "ai.onnx.ml";
	ml.has_version = 1;
	ml.version = 3;
	def.domain = "";
	def.has_version = 1;
	def.version = 17;

	L = leaves * (size_t)K;
	at[na++] = attr_ints(a, "nodes_treeids", N, &tid);
	at[na++] = attr_ints(a, "nodes_nodeids", N, &nid);
	at[na++] = attr_ints(a, "nodes_featureids", N, &fid);
	at[na++] = attr_floats(a, "nodes_values", N, &val);
	at[na++] = attr_strings(a, "nodes_modes", N, &modes);
	at[na++] = attr_ints(a, "nodes_truenodeids", N, &tn);
	at[na++] = attr_ints(a, "nodes_falsenodeids", N, &fn);
	at[na++] = attr_ints(a, "nodes_missing_value_tracks_true", N, &mv);
	at[na++] = attr_ints(a, cls ? "class_treeids" : "target_treeids", L, &ltid);
	at[na++] = attr_ints(a, cls ? "class_nodeids" : "target_nodeids", L, &lnid);
	at[na++] = attr_ints(a, cls ? "class_ids" : "target_ids", L, &lcid);
	at[na++] = attr_floats(a, cls ? "class_weights" : "target_weights", L, &lw);
	at[na++] = attr_string(a, "post_transform", "NONE");
	if (A.oom)
		goto oom;
	pos = 0;
	for (t = 0; t < f->trees; t++) {
		size_t b = (size_t)f->tree_offset[t], e = (size_t)f->tree_offset[t + 1];
		for (i = b; i < e; i++) {
			bool isleaf = f->feature[i] < 0;
			tid[i] = t;
			nid[i] = (int64_t)(i - b);
			fid[i] = isleaf ? 0 : f->feature[i];
			val[i] = isleaf ? 0.0f : f->threshold[i];
			modes[i].data = (uint8_t *)(isleaf ? leaf : leq);
			modes[i].len = strlen(isleaf ? leaf : leq);
			tn[i] = isleaf ? 0 : f->left[i];
			fn[i] = isleaf ? 0 : f->right[i];
			mv[i] = isleaf ? 0 : f->nan_left[i];
			if (!isleaf)
				continue;
			for (int k = 0; k < K; k++, pos++) {
				ltid[pos] = t;
				lnid[pos] = (int64_t)(i - b);
				lcid[pos] = k;
				/* classification: the sum over trees of value / trees is the mean */
				lw[pos] = cls ? (float)((double)f->value[i * (size_t)K + (size_t)k] /
							f->trees)
					      : f->value[i];
			}
		}
	}
	if (cls) {
		if (ints) {
			int64_t *lab;
			at[na++] = attr_ints(a, "classlabels_int64s", (size_t)f->classes, &lab);
			for (int k = 0; lab && k < f->classes; k++)
				lab[k] = strtoll(f->class_names[k], NULL, 10);
		} else {
			ProtobufCBinaryData *lab;
			at[na++] = attr_strings(a, "classlabels_strings", (size_t)f->classes, &lab);
			for (int k = 0; lab && k < f->classes; k++) {
				char num[16];
				const char *s = f->class_names[k];
				if (!s) {
					snprintf(num, sizeof(num), "%d", k + 1);
					s = num;
				}
				lab[k].data = (uint8_t *)dup(a, s);
				lab[k].len = strlen(s);
			}
		}
	} else {
		at[na++] = attr_int(a, "n_targets", 1);
		at[na++] = attr_string(a, "aggregate_function", "AVERAGE");
	}
	{
		int64_t dx[2] = {-1, f->features}, dy[1] = {-1}, dz[2] = {-1, cls ? f->classes : 1};
		in[0] = tensor_info(a, "X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dx, input_doc(a, f));
		if (cls) {
			out[0] = tensor_info(a, "label", ints ? ONNX__TENSOR_PROTO__DATA_TYPE__INT64 :
					     ONNX__TENSOR_PROTO__DATA_TYPE__STRING, 1, dy, NULL);
			out[1] = tensor_info(a, "probabilities", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2,
					     dz, NULL);
		} else {
			out[0] = tensor_info(a, "variable", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dz,
					     f->target ? f->target : NULL);
		}
	}
	if (A.oom)
		goto oom;
	{
		char *inputs[1] = {"X"}, *outputs[2] = {cls ? "label" : "variable", "probabilities"};
		node.n_input = 1;
		node.input = inputs;
		node.n_output = cls ? 2 : 1;
		node.output = outputs;
		node.name = "forest";
		node.op_type = cls ? "TreeEnsembleClassifier" : "TreeEnsembleRegressor";
		node.domain = "ai.onnx.ml";
		node.n_attribute = (size_t)na;
		node.attribute = at;
		Onnx__NodeProto *nodes[1] = {&node};
		graph.n_node = 1;
		graph.node = nodes;
		graph.name = "gwb_forest";
		graph.n_input = 1;
		graph.input = in;
		graph.n_output = cls ? 2 : 1;
		graph.output = out;
		model.has_ir_version = 1;
		model.ir_version = 8;
		model.n_opset_import = 2;
		model.opset_import = ops;
		model.producer_name = "gwb";
		model.producer_version = GWB_VERSION;
		model.graph = &graph;
		len = onnx__model_proto__get_packed_size(&model);
		if (!(buf = malloc(len + 1)))
			goto oom;
		onnx__model_proto__pack(&model, buf);
	}
	st = gwb_file_save(path, buf, len, "export_onnx");
	goto out;
oom:
	st = gwb_error(GWB_ENOMEM, "export_onnx: out of memory for %zu nodes", N);
out:
	free(buf);
	release(&A);
	return st;
}
