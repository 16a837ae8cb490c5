/*
 * rule.c — small helpers the per-rule subcommands share: parsing a rule id,
 * visiting the rules a filter selects, loading a rule with everything stored about it, the label of one node as
 * the infix form prints it, and the names values get in exports (inputs by
 * their names, node outputs numbered in topological order).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_impl.h"

int64_t audit_parse_id(const char *s)
{
    char *end;
    long long id = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || id < 1) {
        fprintf(stderr, "xferdb: rule id must be a positive integer, got '%s'\n", s);
        return 0;
    }
    return id;
}

int audit_each_rule(xf_rulesdb *db, const xf_rulesdb_filter *filter,
                     int (*fn)(void *user, xf_rulesdb *db, const xf_rulesdb_rule_info *info),
                     void *user)
{
    xf_error err;
    xf_rulesdb_iter *it = NULL;
    if (xf_rulesdb_iter_begin(db, filter, &it, &err) != XF_OK) {
        audit_error(&err);
        return err.code == XF_ERR_INVALID ? 2 : 1;
    }
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    int rc = 0, has = 0, bad = 0;
    while (rc == 0) {
        if (xf_rulesdb_iter_next(it, &info, &has, &err) != XF_OK) {
            audit_error(&err);
            rc = 1;
        } else if (!has) {
            break;
        } else {
            int r = fn(user, db, &info);
            if (r < 0) rc = 1;
            else if (r > 0) bad = r; /* reported; the other rules still count */
        }
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    return rc ? rc : bad;
}

int audit_load(xf_rulesdb *db, int64_t id, xf_rulesdb_rule_info *info, xf_rule *r)
{
    xf_error err;
    xf_rulesdb_rule_info_init(info);
    xf_rule_init(r);
    if (xf_rulesdb_get_rule(db, id, info, &err) != XF_OK ||
        xf_rulesdb_load_rule(db, id, r, &err) != XF_OK) {
        audit_error(&err);
        return 1;
    }
    return 0;
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

void audit_error(const xf_error *err)
{
    fprintf(stderr, "xferdb: %s\n", err->msg);
}
