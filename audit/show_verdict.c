/*
 * show_verdict.c — the verifier's verdict in `xferdb show`: status and time,
 * the axioms of the unsat core each with its one-line description (from the
 * verify module's axiom table), and for a refuted rule the counterexample
 * decoded: every input with its name, shape and values, then both sides run
 * on those inputs in the float32 interpreter and, per output, how many
 * elements differ, the first one with both values, and both value lists.
 *
 * The blob stores only the inputs (verify/bounded_cex.c), so the outputs are
 * recomputed here. Problems with a stored verdict (an axiom this build does
 * not know, a blob that does not decode, inputs that do not fit the rule)
 * are printed in place: the rest of the rule is still worth showing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify.h"
#include "audit_impl.h"

#define SHOW_MAX_VALUES 64
#define SHOW_MAX_OUTPUTS 64

static void print_axioms(FILE *out, const char *names)
{
    char *list = xf_strdup(names);
    if (!list) {
        fprintf(out, "  axioms: %s\n", names);
        return;
    }
    fprintf(out, "  axioms (unsat core):\n");
    char *save = NULL;
    for (char *n = strtok_r(list, ", ", &save); n; n = strtok_r(NULL, ", ", &save)) {
        int i = xf_verify_axiom_find(n);
        const xf_axiom_info *a = i >= 0 ? xf_verify_axiom(i) : NULL;
        fprintf(out, "    %-24s %s\n", n, a ? a->description : "(not in this build's axiom table)");
    }
    xf_free(list);
}

/* Up to SHOW_MAX_VALUES values of a float32 tensor, then "...". */
static void print_values(FILE *out, const float *v, int64_t n)
{
    for (int64_t e = 0; e < n && e < SHOW_MAX_VALUES; e++)
        fprintf(out, "%s%.9g", e ? " " : "", (double)v[e]);
    if (n > SHOW_MAX_VALUES) fprintf(out, " ...");
    fprintf(out, "\n");
}


/* "[i,j,...]": the multi-index of flat element e in shape s. */
static void index_str(const xf_shape *s, int64_t e, char *buf, size_t n)
{
    int64_t strides[XF_MAX_DIMS];
    xf_shape_strides(s, strides);
    xf_strbuf b = {buf, n, 0, 0};
    xf_strbuf_printf(&b, "[");
    for (int d = 0; d < s->rank; d++) {
        xf_strbuf_printf(&b, "%s%lld", d ? "," : "", (long long)(e / strides[d]));
        e %= strides[d];
    }
    xf_strbuf_printf(&b, "]");
}

static void compare_output(FILE *out, int o, const xf_tensor *a, const xf_tensor *b)
{
    char s[96];
    fprintf(out, "    output %d %s: ", o, xf_shape_str(&a->shape, s, sizeof s));
    if (a->dtype != XF_F32 || b->dtype != XF_F32 || !xf_shape_equal(&a->shape, &b->shape)) {
        fprintf(out, "not compared (%s vs %s)\n", xf_dtype_name(a->dtype), xf_dtype_name(b->dtype));
        return;
    }
    const float *va = a->data, *vb = b->data;
    int64_t n = xf_shape_numel(&a->shape), n_diff = 0, first = -1;
    for (int64_t e = 0; e < n; e++)
        if (!xf_value_agree(va[e], vb[e], XF_TOL_ROUNDING)) {
            if (first < 0) first = e;
            n_diff++;
        }
    if (first < 0) {
        fprintf(out, "equal (up to float rounding)\n");
        return;
    }
    char at[128];
    index_str(&a->shape, first, at, sizeof at);
    fprintf(out, "%lld of %lld elements differ, first at %s: source %.9g, target %.9g\n",
           (long long)n_diff, (long long)n, at, (double)va[first], (double)vb[first]);
    fprintf(out, "      source: ");
    print_values(out, va, n);
    fprintf(out, "      target: ");
    print_values(out, vb, n);
}

/* Runs both sides on the counterexample and compares output by output. */
static void print_outputs(FILE *out, const xf_rule *r, const xf_tensor *in, int n)
{
    int n_out = r->src.n_outputs;
    if (n_out > SHOW_MAX_OUTPUTS || r->dst.n_outputs != n_out) {
        fprintf(out, "  outputs: not recomputed (%d source, %d target outputs)\n", n_out,
               r->dst.n_outputs);
        return;
    }
    xf_tensor ys[SHOW_MAX_OUTPUTS], yd[SHOW_MAX_OUTPUTS];
    xf_error err;
    if (xf_interp_run(&r->src, in, n, ys, &err) != XF_OK) {
        fprintf(out, "  outputs: source does not run on these inputs: %s\n", err.msg);
        return;
    }
    if (xf_interp_run(&r->dst, in, n, yd, &err) != XF_OK) {
        fprintf(out, "  outputs: target does not run on these inputs: %s\n", err.msg);
    } else {
        fprintf(out, "  outputs on these inputs (float32 interpreter):\n");
        for (int o = 0; o < n_out; o++) {
            compare_output(out, o, &ys[o], &yd[o]);
            xf_tensor_free(&yd[o]);
        }
    }
    for (int o = 0; o < n_out; o++) xf_tensor_free(&ys[o]);
}

#define XF_SHOW_MAX_CEX_INPUTS 64

static void print_counterexample(FILE *out, const xf_rulesdb_rule_info *info, const xf_rule *r)
{
    xf_tensor *in = NULL;
    int n = 0;
    xf_error err;
    if (xf_verify_cex_decode(info->counterexample, info->counterexample_len, &in, &n, &err) !=
        XF_OK) {
        fprintf(out, "  counterexample: %zu bytes, unreadable: %s\n", info->counterexample_len,
               err.msg);
        return;
    }
    fprintf(out, "  counterexample: %d inputs\n", n);
    for (int i = 0; i < n; i++) {
        const char *name = i < r->src.n_inputs ? r->src.values[r->src.inputs[i]].name : NULL;
        char s[96];
        fprintf(out, "    %-8s %s %s: ", name ? name : "?", xf_dtype_name(in[i].dtype),
               xf_shape_str(&in[i].shape, s, sizeof s));
        print_values(out, in[i].data, xf_shape_numel(&in[i].shape));
    }
    if (n != r->src.n_inputs) {
        fprintf(out, "  outputs: not recomputed (the rule has %d inputs)\n", r->src.n_inputs);
    } else {
        /* a counterexample found at other shapes than the rule's own (the
         * bounded check tries every admissible shape): rebuild the rule at
         * the counterexample's shapes before replaying it */
        xf_shape shapes[XF_SHOW_MAX_CEX_INPUTS];
        int other = 0;
        for (int i = 0; i < n && i < XF_SHOW_MAX_CEX_INPUTS; i++) {
            shapes[i] = in[i].shape;
            other |= !xf_shape_equal(&in[i].shape, &r->src.values[r->src.inputs[i]].shape);
        }
        xf_rule at;
        if (!other) {
            print_outputs(out, r, in, n);
        } else if (n > XF_SHOW_MAX_CEX_INPUTS) {
            fprintf(out, "  outputs: not recomputed (%d inputs at other shapes)\n", n);
        } else if (xf_verify_rule_at_shapes(r, shapes, &at, &err) != XF_OK) {
            fprintf(out, "  outputs: the rule does not rebuild at these shapes: %s\n", err.msg);
            xf_rule_free(&at);
        } else {
            fprintf(out, "  (found at other input shapes than the rule's own; rule rebuilt there)\n");
            print_outputs(out, &at, in, n);
            xf_rule_free(&at);
        }
    }
    for (int i = 0; i < n; i++) xf_tensor_free(&in[i]);
    xf_free(in);
}

void audit_show_verdict(FILE *out, const xf_rulesdb_rule_info *info, const xf_rule *r)
{
    if (!info->has_verdict) {
        fprintf(out, "verdict: none (not verified yet)\n");
        return;
    }
    fprintf(out, "verdict: %s in %.1f ms\n", xf_rulesdb_status_name(info->status), info->time_ms);
    if (info->axioms && *info->axioms) print_axioms(out, info->axioms);
    if (info->detail) fprintf(out, "  detail: %s\n", info->detail);
    if (info->counterexample) print_counterexample(out, info, r);
}
