/*
 * cmd_show.c — `xferdb show DB ID`: one rule in full. Source and target in
 * infix form, the graph inputs with dtype and shape, how outputs map,
 * operator counts, fingerprint, status (with why it was pruned and which
 * rule subsumes it), the run that found it, the verifier's verdict when
 * there is one (show_verdict.c), where a proved or derived rule holds (its
 * validity domain) and a derived rule's chain (cmd_explain.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "audit_impl.h"

static void print_inputs(FILE *out, const xf_graph *g)
{
    fprintf(out, "inputs:\n");
    for (int i = 0; i < g->n_inputs; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        char s[96];
        fprintf(out, "  %-8s %s %s\n", v->name ? v->name : "?", xf_dtype_name(v->dtype),
               xf_shape_str(&v->shape, s, sizeof s));
    }
}

static void print_outputs(FILE *out, const xf_rule *r)
{
    fprintf(out, "outputs: %d mapped\n", r->src.n_outputs);
    for (int i = 0; i < r->src.n_outputs; i++) {
        const xf_value *v = &r->src.values[r->src.outputs[i]];
        char s[96];
        fprintf(out, "  source output %d -> target output %d  %s %s\n", i, i, xf_dtype_name(v->dtype),
               xf_shape_str(&v->shape, s, sizeof s));
    }
}

/* Where a proved or derived rule holds (its validity domain, ir/domain.c):
 * as recorded, or what its operators demand when none was recorded. */
static void print_domain(FILE *out, const xf_rulesdb_rule_info *in, const xf_rule *r)
{
    if (in->status != XF_RULE_PROVED && in->status != XF_RULE_DERIVED) return;
    if (!r->domain.known) {
        fprintf(out, "holds where: not recorded (derived before schema 4: applied nowhere)\n");
        return;
    }
    const char *names[64];
    int n = r->src.n_inputs < 64 ? r->src.n_inputs : 64;
    for (int i = 0; i < n; i++) names[i] = r->src.values[r->src.inputs[i]].name;
    char buf[2048];
    if (xf_domain_format(&r->domain, names, n, buf, sizeof buf, NULL) != XF_OK)
        snprintf(buf, sizeof buf, "(%d conditions, too long to print)", r->domain.n);
    fprintf(out, "holds where: %s%s\n", buf[0] ? buf : "every shape it applies to",
           in->domain ? "" : " (not recorded: what its operators demand)");
}

static int print_rule(FILE *out, xf_rulesdb *db, const xf_rulesdb_rule_info *in, const xf_rule *r)
{
    xf_error err;
    char *src = audit_format(&r->src, &err);
    char *dst = src ? audit_format(&r->dst, &err) : NULL;
    if (!dst) {
        xf_free(src);
        audit_error(&err);
        return 1;
    }
    fprintf(out, "rule %" PRId64 "\n", in->id);
    fprintf(out, "source: %s\n", src);
    fprintf(out, "target: %s\n", dst);
    print_inputs(out, &r->src);
    print_outputs(out, r);
    fprintf(out, "operators: %d -> %d\n", in->src_ops, in->dst_ops);
    fprintf(out, "fingerprint: 0x%016" PRIx64 "\n", in->fingerprint);
    fprintf(out, "status: %s\n", xf_rulesdb_status_name(in->status));
    if (in->why) fprintf(out, "  why: %s\n", in->why);
    if (in->subsumed_by) fprintf(out, "  subsumed by rule %" PRId64 "\n", in->subsumed_by);
    if (in->run_id) fprintf(out, "found by run: %" PRId64 "\n", in->run_id);
    audit_show_verdict(out, in, r);
    print_domain(out, in, r);
    audit_show_derivation(out, db, in);
    xf_free(src);
    xf_free(dst);
    return 0;
}

int xf_audit_show(FILE *out, xf_rulesdb *db, const xf_audit_options *o)
{
    int64_t id = audit_parse_id(o->id);
    if (!id) return 2;
    xf_rulesdb_rule_info info;
    xf_rule r;
    int rc = audit_load(db, id, &info, &r);
    if (rc == 0) rc = print_rule(out, db, &info, &r);
    xf_rule_free(&r);
    xf_rulesdb_rule_info_free(&info);
    return rc;
}
