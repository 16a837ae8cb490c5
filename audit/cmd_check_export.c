/*
 * cmd_check_export.c — `xferdb check-export DB [filters] [--trials N]
 * [--seed S]`: an end-to-end check of the pipeline that does not trust the
 * verifier. Every matching rule (default: the proved ones) is exported as
 * its two ONNX models exactly as `export --format onnx` writes them, read
 * back with the ONNX importer, and both models are run in the float32
 * interpreter on N sets of random inputs. A rule passes when, on every set,
 * the target model's outputs equal the source model's (within 1e-4
 * relative, XF_TOL_RULE) and each model equals the side it came from
 * (the exporter kept its meaning). Lines for the rules that do not pass,
 * then one summary line; exit status 1 when any rule does not pass.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"
#include "audit_impl.h"

#define CHECK_MAX_IO 64

typedef enum verdict { PASS = 0, DIFFER, ROUND_TRIP, FAILED } verdict;


/* -1 when the tensors agree, else the first differing element (or 0 for a
 * shape or dtype mismatch); *n_diff counts differing elements. */
static int64_t first_diff(const xf_tensor *a, const xf_tensor *b, int64_t *n_diff)
{
    *n_diff = 0;
    if (a->dtype != b->dtype || !xf_shape_equal(&a->shape, &b->shape)) {
        *n_diff = 1;
        return 0;
    }
    int64_t n = xf_shape_numel(&a->shape), first = -1;
    if (a->dtype != XF_F32) {
        size_t es = xf_dtype_size(a->dtype);
        for (int64_t e = 0; e < n; e++)
            if (memcmp((const char *)a->data + (size_t)e * es, (const char *)b->data + (size_t)e * es,
                       es) != 0) {
                if (first < 0) first = e;
                (*n_diff)++;
            }
        return first;
    }
    const float *x = a->data, *y = b->data;
    for (int64_t e = 0; e < n; e++)
        if (!xf_value_agree(x[e], y[e], XF_TOL_RULE)) {
            if (first < 0) first = e;
            (*n_diff)++;
        }
    return first;
}

/* Exports one side to ONNX bytes and imports it back. */
static xf_status round_trip(const xf_graph *side, const char *name, xf_graph *back, xf_error *err)
{
    xf_graph g;
    xf_graph_init(back);
    xf_status st = xf_audit_onnx_side(side, name, &g, err);
    if (st != XF_OK) return st;
    uint8_t *buf = NULL;
    size_t len = 0;
    st = xf_onnx_save_buffer(&g, &buf, &len, err);
    xf_graph_free(&g);
    if (st == XF_OK) st = xf_onnx_load_buffer(buf, len, name, NULL, NULL, back, err);
    xf_free(buf);
    if (st == XF_OK && (back->n_inputs != side->n_inputs || back->n_outputs != side->n_outputs))
        st = XF_FAIL(err, XF_ERR_MISMATCH,
                     "%s: the model read back has %d inputs and %d outputs, the rule side %d and %d",
                     name, back->n_inputs, back->n_outputs, side->n_inputs, side->n_outputs);
    return st;
}

static void free_all(xf_tensor *t, int n)
{
    for (int i = 0; i < n; i++) xf_tensor_free(&t[i]);
}

/* Compares output lists a and b; fills msg on the first difference. */
static int outputs_differ(const xf_tensor *a, const xf_tensor *b, int n, const char *what,
                          char *msg, size_t msg_n)
{
    for (int o = 0; o < n; o++) {
        int64_t nd = 0, e = first_diff(&a[o], &b[o], &nd);
        if (e < 0) continue;
        char sa[96], sb[96];
        if (a[o].dtype != XF_F32 || b[o].dtype != XF_F32 || !xf_shape_equal(&a[o].shape, &b[o].shape))
            snprintf(msg, msg_n, "%s: output %d is %s %s vs %s %s", what, o,
                     xf_dtype_name(a[o].dtype), xf_shape_str(&a[o].shape, sa, sizeof sa),
                     xf_dtype_name(b[o].dtype), xf_shape_str(&b[o].shape, sb, sizeof sb));
        else
            snprintf(msg, msg_n, "%s: output %d differs in %lld of %lld elements, first at flat "
                     "index %lld: %.9g vs %.9g", what, o, (long long)nd,
                     (long long)xf_shape_numel(&a[o].shape), (long long)e,
                     (double)((const float *)a[o].data)[e], (double)((const float *)b[o].data)[e]);
        return 1;
    }
    return 0;
}

/* Runs the rule's sides and both models on one random input set. */
static verdict run_trial(const xf_rule *r, const xf_graph *ms, const xf_graph *md, uint64_t seed,
                         char *msg, size_t msg_n)
{
    int n_in = r->src.n_inputs, n_out = r->src.n_outputs;
    xf_tensor in[CHECK_MAX_IO], ys[CHECK_MAX_IO], yd[CHECK_MAX_IO], ms_y[CHECK_MAX_IO],
        md_y[CHECK_MAX_IO];
    xf_error err;
    if (xf_graph_random_inputs(&r->src, seed, in, &err) != XF_OK) {
        snprintf(msg, msg_n, "random inputs: %s", err.msg);
        return FAILED;
    }
    verdict v = FAILED;
    const xf_graph *graphs[4] = {&r->src, &r->dst, ms, md};
    xf_tensor *outs[4] = {ys, yd, ms_y, md_y};
    static const char *const what[4] = {"source side", "target side", "source model",
                                        "target model"};
    int ran = 0;
    for (; ran < 4; ran++)
        if (xf_interp_run(graphs[ran], in, n_in, outs[ran], &err) != XF_OK) {
            snprintf(msg, msg_n, "running the %s: %s", what[ran], err.msg);
            break;
        }
    if (ran == 4) {
        if (outputs_differ(ms_y, md_y, n_out, "source and target models", msg, msg_n))
            v = DIFFER;
        else if (outputs_differ(ys, ms_y, n_out, "source side and its model", msg, msg_n) ||
                 outputs_differ(yd, md_y, n_out, "target side and its model", msg, msg_n))
            v = ROUND_TRIP;
        else
            v = PASS;
    }
    for (int k = 0; k < ran; k++) free_all(outs[k], n_out);
    free_all(in, n_in);
    return v;
}

static verdict check_rule(xf_rulesdb *db, int64_t id, const xf_audit_options *o, char *msg,
                          size_t msg_n)
{
    xf_error err;
    xf_rule r;
    if (xf_rulesdb_load_rule(db, id, &r, &err) != XF_OK) {
        snprintf(msg, msg_n, "%s", err.msg);
        return FAILED;
    }
    verdict v = FAILED;
    xf_graph ms, md;
    xf_graph_init(&ms);
    xf_graph_init(&md);
    char name[64];
    if (r.src.n_inputs > CHECK_MAX_IO || r.src.n_outputs > CHECK_MAX_IO) {
        snprintf(msg, msg_n, "more than %d inputs or outputs", CHECK_MAX_IO);
    } else {
        snprintf(name, sizeof name, "rule%" PRId64 ".src.onnx", id);
        xf_status st = round_trip(&r.src, name, &ms, &err);
        if (st == XF_OK) {
            snprintf(name, sizeof name, "rule%" PRId64 ".dst.onnx", id);
            st = round_trip(&r.dst, name, &md, &err);
        }
        if (st != XF_OK) snprintf(msg, msg_n, "%s", err.msg);
        for (int64_t t = 0; st == XF_OK && t < o->trials; t++) {
            v = run_trial(&r, &ms, &md, (uint64_t)(o->seed + t), msg, msg_n);
            if (v != PASS) break;
        }
    }
    xf_graph_free(&ms);
    xf_graph_free(&md);
    xf_rule_free(&r);
    return v;
}

/* The tally check_one keeps over the rules. */
typedef struct tally {
    FILE *out;
    const xf_audit_options *o;
    int64_t count[4];
} tally;

static int check_one(void *user, xf_rulesdb *db, const xf_rulesdb_rule_info *info)
{
    static const char *const label[4] = {"pass", "outputs differ", "export changed a side",
                                         "failed"};
    tally *t = user;
    char msg[1400];
    verdict v = check_rule(db, info->id, t->o, msg, sizeof msg);
    t->count[v]++;
    if (v != PASS)
        fprintf(t->out, "rule %" PRId64 " (%s): %s: %s\n", info->id, xf_rulesdb_status_name(info->status),
               label[v], msg);
    return 0;
}

int xf_audit_check_export(FILE *out, xf_rulesdb *db, const xf_audit_options *o)
{
    tally t = {out, o, {0, 0, 0, 0}};
    int rc = audit_each_rule(db, &o->filter, check_one, &t);
    if (rc == 2) return 2;
    const int64_t *count = t.count;
    int64_t total = count[0] + count[1] + count[2] + count[3];
    fprintf(out, "check-export: %" PRId64 " rules, %" PRId64 " pass, %" PRId64 " outputs differ, %" PRId64
           " export changed a side, %" PRId64 " failed (%" PRId64
           " random input sets each, 1e-4 relative)\n",
           total, count[PASS], count[DIFFER], count[ROUND_TRIP], count[FAILED], o->trials);
    return rc || count[PASS] != total ? 1 : 0;
}
