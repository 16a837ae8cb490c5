/*
 * report.c — the parts of xf_optimize_report made from the run's objects
 * before they are freed: the head (what preparing changed, the rule set's
 * actions, the rules with a location in the model and, on request, each
 * one's best one-step change, peeked without building a graph), the rules
 * applied to the model written (one entry per distinct rule, most frequent
 * first, with its database id and readable form) and the symbolic dims as
 * written, the memory of the input and of the model written and the
 * input's nodes the model written lacks. Also the report's init and free.
 */
#include "optimize_internal.h"

#include <stdlib.h>
#include <string.h>

void xf_optimize_report_init(xf_optimize_report *r)
{
    memset(r, 0, sizeof *r);
    r->check.max_abs = r->check.max_rel = -1;
}

void xf_optimize_report_free(xf_optimize_report *r)
{
    if (!r) return;
    for (int i = 0; i < r->n_peeks; i++) xf_free(r->peeks[i].text);
    for (int i = 0; i < r->n_distinct; i++) xf_free(r->applied[i].text);
    for (int i = 0; i < r->n_dims; i++) {
        xf_free(r->dims[i].name);
        xf_free(r->dims[i].fixed);
    }
    for (int i = 0; i < r->n_replaced_listed; i++) {
        xf_free(r->replaced[i].name);
        xf_free(r->replaced[i].op);
    }
    xf_free(r->peeks);
    xf_free(r->applied);
    xf_free(r->dims);
    xf_free(r->trace);
    xf_free(r->replaced);
    xf_arbiter_result_free(&r->arb);
    xf_optimize_report_init(r);
}

static char *dup_text(const char *t, xf_error *err)
{
    char *c = xf_strdup(t ? t : "");
    if (!c) XF_FAIL(err, XF_ERR_NOMEM, "out of memory copying the report's texts");
    return c;
}

/* Rules with a location in env's graph, and their locations. */
static void count_applicable(xf_env *env, int *applicable, int *locations)
{
    int n = xf_env_num_xfers(env);
    const uint8_t *mask = xf_env_xfer_mask(env);
    *applicable = *locations = 0;
    for (int r = 0; r < n; r++) {
        if (!mask[r]) continue;
        (*applicable)++;
        *locations += xf_env_num_locations(env, r);
    }
}

/* Every applicable rule with its location count and the best cost change
 * one application of it would make. */
static xf_status peeks(opt_run *s, xf_error *err)
{
    xf_env *env = s->ms[0].env;
    const xf_ruleset *rs = s->ms[0].rs;
    int n = xf_env_num_xfers(env);
    const uint8_t *mask = xf_env_xfer_mask(env);
    double base = xf_env_cost(env);
    if (s->r->applicable == 0) return XF_OK;
    s->r->peeks = xf_calloc((size_t)s->r->applicable, sizeof *s->r->peeks);
    if (!s->r->peeks) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing the rules");
    for (int r = 0; r < n; r++) {
        if (!mask[r]) continue;
        double best = 0;
        int nl = xf_env_num_locations(env, r);
        for (int l = 0; l < nl; l++) {
            double ms = 0, bytes = 0;
            xf_status st = xf_env_peek(env, r, l, &ms, &bytes, err);
            if (st == XF_ERR_NOMEM) return st; /* another failure: that location is left out */
            if (st == XF_OK && (l == 0 || ms - base < best)) best = ms - base;
        }
        xf_optimize_peek *p = &s->r->peeks[s->r->n_peeks];
        p->rule_id = xf_ruleset_rule_id(rs, r);
        p->locations = nl;
        p->best_delta_ms = best;
        if (!(p->text = dup_text(xf_ruleset_text(rs, r), err))) return XF_ERR_NOMEM;
        s->r->n_peeks++;
    }
    return XF_OK;
}

xf_status opt_report_head(opt_run *s, xf_error *err)
{
    xf_optimize_report *r = s->r;
    const xf_ruleset *rs = s->ms[0].rs;
    xf_env *env = s->ms[0].env;
    r->prep = *xf_env_prepare_stats(env);
    r->nodes_prepared = xf_env_graph(env)->n_nodes;
    r->actions = xf_env_num_xfers(env);
    r->skipped = xf_ruleset_skipped(rs, NULL);
    r->duplicates = xf_ruleset_duplicates(rs);
    r->irrelevant = xf_ruleset_irrelevant(rs);
    count_applicable(env, &r->applicable, &r->locations);
    r->n_searches = s->n_searches;
    if (s->n_searches > 1) {
        count_applicable(s->ms[1].env, &r->alt_applicable, &r->alt_locations);
        r->alt_actions = xf_env_num_xfers(s->ms[1].env);
    }
    return s->o.list_applicable ? peeks(s, err) : XF_OK;
}

typedef struct applied_count {
    int action, n;
} applied_count;

static int by_count(const void *a, const void *b)
{
    const applied_count *x = a, *y = b;
    if (x->n != y->n) return y->n - x->n;
    return x->action - y->action;
}

xf_status opt_report_applied(opt_run *s, const xf_model_search *ms,
                             const xf_search_result *applied, xf_error *err)
{
    xf_optimize_report *r = s->r;
    int n = applied ? applied->n_applied : 0;
    r->n_applied = n;
    for (int i = 0; i < n; i++) {
        int a = applied->applied[i];
        if (a < -1) a = XF_ACTION_OF_BACKWARD(a);
        r->n_views += xf_model_search_rule_has_view(ms, a);
    }
    if (n == 0) return XF_OK;
    applied_count *c = xf_calloc((size_t)n, sizeof *c);
    r->applied = xf_calloc((size_t)n, sizeof *r->applied);
    if (!c || !r->applied) {
        xf_free(c);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing the rules applied");
    }
    int nd = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < nd && c[k].action != applied->applied[i]) k++;
        if (k == nd) c[nd++].action = applied->applied[i];
        c[k].n++;
    }
    qsort(c, (size_t)nd, sizeof *c, by_count);
    xf_status st = XF_OK;
    for (int k = 0; k < nd && !st; k++) {
        int a = c[k].action, back = a < -1;
        if (back) a = XF_ACTION_OF_BACKWARD(a);
        xf_optimize_applied *e = &r->applied[k];
        e->count = c[k].n;
        e->rule_id = xf_model_search_rule_id(ms, a);
        e->backward = back;
        if (!(e->text = dup_text(xf_model_search_rule_text(ms, a), err))) st = XF_ERR_NOMEM;
        else r->n_distinct++;
    }
    xf_free(c);
    return st;
}

xf_status opt_report_dims(opt_run *s, xf_error *err)
{
    xf_optimize_report *r = s->r;
    int n = xf_onnx_dynamic_count(s->dyn);
    if (n == 0) return XF_OK;
    r->dims = xf_calloc((size_t)n, sizeof *r->dims);
    if (!r->dims) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing the symbolic dims");
    for (int i = 0; i < n; i++) {
        xf_optimize_dim *d = &r->dims[i];
        const char *fixed = xf_onnx_dynamic_fixed(s->dyn, i);
        if (!(d->name = dup_text(xf_onnx_dynamic_name(s->dyn, i), err)) ||
            (fixed && !(d->fixed = dup_text(fixed, err)))) {
            r->n_dims = i + 1;
            return XF_ERR_NOMEM;
        }
        for (int p = 0; p < 3; p++) d->size[p] = xf_onnx_dynamic_size(s->dyn, i, p);
        r->n_dims = i + 1;
    }
    return XF_OK;
}

static uint64_t name_key(const char *name)
{
    return xf_htab_key(xf_hash_bytes(0, name, strlen(name)));
}

/* Whether g has a node named `name` (t: g's node names by name_key). */
static int has_node(const xf_htab *t, const xf_graph *g, const char *name)
{
    size_t pos = XF_HTAB_START;
    for (uint64_t *v; (v = xf_htab_next(t, name_key(name), &pos));)
        if (!strcmp(g->nodes[*v].name, name)) return 1;
    return 0;
}

static const char *node_op(const xf_node *nd)
{
    return nd->op == XF_OP_OPAQUE && nd->opaque ? nd->opaque->op_type : xf_op_get(nd->op)->name;
}

/* Names of a's nodes (those with one) into t. */
static xf_status index_names(const xf_graph *a, xf_htab *t, xf_error *err)
{
    xf_status st = xf_htab_reserve(t, (size_t)a->n_nodes, err);
    for (int i = 0; !st && i < a->n_nodes; i++)
        if (a->nodes[i].name) st = xf_htab_add(t, name_key(a->nodes[i].name), (uint64_t)i, err);
    return st;
}

xf_status opt_report_changes(opt_run *s, const xf_graph *written, xf_error *err)
{
    xf_optimize_report *r = s->r;
    const xf_graph *in = &s->input;
    xf_status st;
    if ((st = xf_graph_memory_use(in, &r->memory_before, err)) ||
        (st = xf_graph_memory_use(written, &r->memory_after, err)))
        return st;
    if (written == in) return XF_OK;
    xf_htab tw, ti;
    xf_htab_init(&tw);
    xf_htab_init(&ti);
    if ((st = index_names(written, &tw, err)) || (st = index_names(in, &ti, err))) goto out;
    for (int i = 0; i < written->n_nodes; i++)
        if (!written->nodes[i].name || !has_node(&ti, in, written->nodes[i].name)) r->n_new++;
    for (int i = 0; i < in->n_nodes; i++) {
        const xf_node *nd = &in->nodes[i];
        if (!nd->name || has_node(&tw, written, nd->name)) continue;
        r->n_replaced++;
        if (r->n_replaced_listed == XF_OPTIMIZE_MAX_LISTED) continue;
        if (!r->replaced &&
            !(r->replaced = xf_calloc(XF_OPTIMIZE_MAX_LISTED, sizeof *r->replaced))) {
            st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing the nodes replaced");
            goto out;
        }
        xf_optimize_node_ref *e = &r->replaced[r->n_replaced_listed++];
        if (!(e->name = dup_text(nd->name, err)) || !(e->op = dup_text(node_op(nd), err))) {
            st = XF_ERR_NOMEM;
            goto out;
        }
    }
out:
    xf_htab_free(&tw);
    xf_htab_free(&ti);
    return st;
}
