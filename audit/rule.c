/*
 * rule.c — small helpers the per-rule subcommands share: parsing a rule id,
 * visiting the rules a filter selects, loading a rule with everything stored about it, the label of one node as
 * the infix form prints it, and the names values get in exports (inputs by
 * their names, node outputs numbered in topological order).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_internal.h"

xf_status audit_parse_id(const char *s, int64_t *id, xf_error *err)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    *id = 0;
    if (*s == '\0' || *end != '\0' || v < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "rule id must be a positive integer, got '%s'", s);
    *id = v;
    return XF_OK;
}

xf_status audit_each_rule(xf_rulesdb *db, const xf_rulesdb_filter *filter,
                          int (*fn)(void *user, xf_rulesdb *db, const xf_rulesdb_rule_info *info),
                          void *user, int64_t *failed, xf_error *err)
{
    *failed = 0;
    xf_rulesdb_iter *it = NULL;
    xf_status st = xf_rulesdb_iter_begin(db, filter, &it, err);
    if (st != XF_OK) return st;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    int has = 0;
    while ((st = xf_rulesdb_iter_next(it, &info, &has, err)) == XF_OK && has)
        if (fn(user, db, &info)) (*failed)++; /* reported; the other rules still count */
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    return st;
}

xf_status audit_load(xf_rulesdb *db, int64_t id, xf_rulesdb_rule_info *info, xf_rule *r,
                     xf_error *err)
{
    xf_rulesdb_rule_info_init(info);
    xf_rule_init(r);
    xf_status st = xf_rulesdb_get_rule(db, id, info, err);
    if (st == XF_OK) st = xf_rulesdb_load_rule(db, id, r, err);
    return st;
}

/* The infix text of the node's first output stops at the '(' that opens
 * its arguments; parameters never contain one. For a multi-output op the
 * output index printed after the name ("split0[...]") is dropped. */
void audit_node_label(const xf_graph *g, int node, char *buf, size_t n)
{
    const xf_node *nd = &g->nodes[node];
    const char *name = nd->op == XF_OP_OPAQUE && nd->opaque ? nd->opaque->op_type
                                                            : xf_op_get(nd->op)->name;
    snprintf(buf, n, "%s", name);
    if (nd->n_outputs < 1) return;
    xf_graph view = *g;
    int out = nd->outputs[0];
    view.outputs = &out;
    view.n_outputs = 1;
    xf_error err;
    char *text = audit_format(&view, &err);
    if (!text) return;
    size_t skip = strlen(name);
    if (strncmp(text, name, skip) == 0) {
        if (nd->n_outputs > 1)
            while (text[skip] >= '0' && text[skip] <= '9') skip++;
        size_t len = strcspn(text + skip, "(");
        snprintf(buf, n, "%s%.*s", name, (int)len, text + skip);
    }
    xf_free(text);
}

void audit_value_name(const xf_graph *g, const int *order, char prefix, int v, char *buf,
                       size_t n)
{
    if (v < 0) {
        snprintf(buf, n, "_");
        return;
    }
    const xf_value *val = &g->values[v];
    if (val->kind != XF_VALUE_NODE) {
        if (val->name && val->name[0]) {
            snprintf(buf, n, "%s", val->name);
            return;
        }
        for (int i = 0; i < g->n_inputs; i++)
            if (g->inputs[i] == v) {
                snprintf(buf, n, "in%d", i);
                return;
            }
        snprintf(buf, n, "const%d", v);
        return;
    }
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *nd = &g->nodes[order[i]];
        for (int j = 0; j < nd->n_outputs; j++, k++)
            if (nd->outputs[j] == v) {
                snprintf(buf, n, "%c%d", prefix, k);
                return;
            }
    }
    snprintf(buf, n, "%c?", prefix);
}

void audit_diag(const xf_audit_options *o, const xf_error *msg)
{
    if (o->diag) o->diag(o->diag_user, msg);
}
