/*
 * cmd_families.c — `xferdb families DB [filters]`: the rules that use the
 * layout and indexing operators of the extended vocabulary (reshape,
 * flatten, squeeze, unsqueeze, slice, gather), counted by family and status,
 * with the first rule of each family per status, so the families issue 28
 * asks for can be read off a database (docs/xferdb.md):
 *
 *   commute-elementwise, commute-matmul, commute-layernorm, commute-softmax,
 *   commute-mean, commute-transpose
 *       a layout operator feeds the operator on one side and is fed by it
 *       on the other (the layout operator moved across it);
 *   cancel-inverse
 *       one side applies two layout operators in a row and the other side
 *       has fewer of them (a squeeze/unsqueeze or flatten/unflatten pair
 *       cancelled, possibly with what sat between);
 *   split-concat-heads
 *       a head reshape ([.., H] <-> [.., h, d], xf_view_classify's split-last
 *       and merge-last) next to a split or a concat on either side.
 *
 * A rule can be in several families; "any new family" counts it once. All
 * of them are new against the TASO-vocabulary rules, whose vocabulary has
 * none of these operators. A rule that does not load is reported through
 * o->diag and the others are still counted (it counts in *failed).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "audit_internal.h"

enum {
    FAM_EW, FAM_MATMUL, FAM_LAYERNORM, FAM_SOFTMAX, FAM_MEAN, FAM_TRANSPOSE,
    FAM_CANCEL, FAM_HEADS, FAM_ANY, FAM_COUNT
};

static const char *const fam_names[FAM_COUNT] = {
    "commute-elementwise", "commute-matmul", "commute-layernorm", "commute-softmax",
    "commute-mean", "commute-transpose", "cancel-inverse", "split-concat-heads", "any new family"};

/* The statuses counted, in column order. */
static const xf_rule_status statuses[] = {XF_RULE_PROVED, XF_RULE_DERIVED, XF_RULE_UNKNOWN,
                                          XF_RULE_REFUTED, XF_RULE_CANDIDATE};
#define N_STATUS ((int)(sizeof statuses / sizeof statuses[0]))

typedef struct tally {
    int64_t count[FAM_COUNT][N_STATUS];
    int64_t first[FAM_COUNT][N_STATUS];
    int64_t rules;
    const xf_audit_options *o;
} tally;

static int is_layout(xf_op op)
{
    return xf_op_reshapes(op) || op == XF_OP_SLICE || op == XF_OP_GATHER;
}

/* The commutation family of op, or -1. */
static int partner_family(xf_op op)
{
    switch (op) {
    case XF_OP_ADD: case XF_OP_SUB: case XF_OP_MUL: case XF_OP_DIV: case XF_OP_POW:
    case XF_OP_SCALAR_MUL: case XF_OP_RELU: case XF_OP_SIGMOID: case XF_OP_TANH:
    case XF_OP_ERF: case XF_OP_GELU: case XF_OP_EXP: case XF_OP_SQRT: case XF_OP_NEG:
        return FAM_EW;
    case XF_OP_MATMUL: return FAM_MATMUL;
    case XF_OP_LAYERNORM: return FAM_LAYERNORM;
    case XF_OP_SOFTMAX: return FAM_SOFTMAX;
    case XF_OP_REDUCE_MEAN: return FAM_MEAN;
    case XF_OP_TRANSPOSE: return FAM_TRANSPOSE;
    default: return -1;
    }
}

static int is_head_view(const xf_graph *g, const xf_node *nd)
{
    if (nd->op != XF_OP_RESHAPE) return 0;
    int k = 0;
    xf_view_kind kind = xf_view_classify(&g->values[nd->inputs[0]].shape, &g->values[nd->outputs[0]].shape, &k);
    return kind == XF_VIEW_SPLIT_LAST || kind == XF_VIEW_MERGE_LAST;
}

/* What one side shows: for each commutation family, whether a layout
 * operator feeds one of its operators (bit 1) or is fed by one (bit 2);
 * layout operators in a row; layout operators; a head reshape next to a
 * split or concat. */
typedef struct side_facts {
    int dir[FAM_COUNT];
    int chained, n_layout, heads;
} side_facts;

static void read_side(const xf_graph *g, side_facts *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *nd = &g->nodes[i];
        if (is_layout(nd->op)) f->n_layout++;
        for (int j = 0; j < nd->n_inputs; j++) {
            int v = nd->inputs[j];
            int p = v >= 0 ? g->values[v].producer : -1;
            if (p < 0) continue;
            const xf_node *pd = &g->nodes[p];
            int fc = partner_family(nd->op), fp = partner_family(pd->op);
            if (is_layout(pd->op) && fc >= 0) f->dir[fc] |= 1;
            if (is_layout(nd->op) && fp >= 0) f->dir[fp] |= 2;
            if (is_layout(pd->op) && is_layout(nd->op)) f->chained = 1;
            int cat_c = nd->op == XF_OP_CONCAT || nd->op == XF_OP_SPLIT;
            int cat_p = pd->op == XF_OP_CONCAT || pd->op == XF_OP_SPLIT;
            if ((cat_c && is_head_view(g, pd)) || (cat_p && is_head_view(g, nd))) f->heads = 1;
        }
    }
}

static int status_column(xf_rule_status s)
{
    for (int i = 0; i < N_STATUS; i++)
        if (statuses[i] == s) return i;
    return -1;
}

static int count_rule(void *user, xf_rulesdb *db, const xf_rulesdb_rule_info *info)
{
    tally *t = user;
    int col = status_column(info->status);
    if (col < 0) return 0; /* pruned rows are not rules in use */
    xf_error err;
    xf_rule r;
    if (xf_rulesdb_load_rule(db, info->id, &r, &err) != XF_OK) {
        audit_diag(t->o, &err);
        return 1;
    }
    side_facts s, d;
    read_side(&r.src, &s);
    read_side(&r.dst, &d);
    int in[FAM_COUNT] = {0};
    for (int f = FAM_EW; f <= FAM_TRANSPOSE; f++)
        in[f] = ((s.dir[f] & 1) && (d.dir[f] & 2)) || ((s.dir[f] & 2) && (d.dir[f] & 1));
    in[FAM_CANCEL] = (s.chained && d.n_layout < s.n_layout) || (d.chained && s.n_layout < d.n_layout);
    in[FAM_HEADS] = s.heads || d.heads;
    for (int f = 0; f < FAM_ANY; f++) in[FAM_ANY] |= in[f];
    for (int f = 0; f < FAM_COUNT; f++) {
        if (!in[f]) continue;
        if (t->count[f][col]++ == 0) t->first[f][col] = info->id;
    }
    t->rules++;
    xf_rule_free(&r);
    return 0;
}

/* The table is printed even when reading stopped early (with what was
 * read), as the error says. */
xf_status xf_audit_families(FILE *out, xf_rulesdb *db, const xf_audit_options *o, int64_t *failed,
                            xf_error *err)
{
    tally t;
    memset(&t, 0, sizeof t);
    t.o = o;
    xf_status st = audit_each_rule(db, &o->filter, count_rule, &t, failed, err);
    fprintf(out, "%" PRId64 " rules read; rules using reshape, flatten, squeeze, unsqueeze, slice or gather, by family\n",
           t.rules);
    fprintf(out, "%-22s", "family");
    for (int c = 0; c < N_STATUS; c++) fprintf(out, " %9s", xf_rulesdb_status_name(statuses[c]));
    fprintf(out, "   first proved / derived\n");
    for (int f = 0; f < FAM_COUNT; f++) {
        fprintf(out, "%-22s", fam_names[f]);
        for (int c = 0; c < N_STATUS; c++) fprintf(out, " %9" PRId64, t.count[f][c]);
        fprintf(out, "   %" PRId64 " / %" PRId64 "\n", t.first[f][0], t.first[f][1]);
    }
    return st;
}
