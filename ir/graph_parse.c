/*
 * graph_parse.c — reads the infix text xf_graph_format writes back into a
 * graph: "op[params](arg, ...)" expressions, one per graph output,
 * separated by ", " (or ";") at the top level. A bare name is a graph input
 * of the graph being built (added beforehand, with its dtype and shape,
 * which the text does not carry), by its name or as in<i>; "_" is an
 * omitted optional input. An operator
 * name may end in an output index ("split1"); what an operator name and its
 * bracketed parameters mean is the caller's to say through a callback, and
 * the default one reads the operator table's names with default
 * parameters. Shared subexpressions are built once per occurrence, as they
 * print.
 */
#include "ir.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_NAME 64
#define MAX_PARAMS 256
#define MAX_ARGS 16

typedef struct parser {
    const char *text, *p;
    xf_graph *g;
    xf_graph_parse_op op;
    void *user;
    xf_error *err;
} parser;

static void skip_space(parser *ps)
{
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

static xf_status fail(parser *ps, const char *what)
{
    return XF_FAIL(ps->err, XF_ERR_PARSE, "graph text, column %d: %s", (int)(ps->p - ps->text) + 1,
                   what);
}

static int input_named(const xf_graph *g, const char *name)
{
    for (int i = 0; i < g->n_inputs; i++) {
        const char *n = g->values[g->inputs[i]].name;
        if (n && strcmp(n, name) == 0) return g->inputs[i];
    }
    int i, end = 0;
    if (sscanf(name, "in%d%n", &i, &end) == 1 && name[end] == '\0' && i >= 0 && i < g->n_inputs)
        return g->inputs[i];
    return -1;
}

/* One expression at ps->p; its value id in *v. */
static xf_status parse_expr(parser *ps, int depth, int *v)
{
    if (depth > 256) return fail(ps, "expressions nested too deeply");
    skip_space(ps);
    char name[MAX_NAME], params[MAX_PARAMS] = "";
    size_t n = 0;
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.') {
        if (n + 1 == sizeof name) return fail(ps, "name too long");
        name[n++] = *ps->p++;
    }
    name[n] = '\0';
    if (n == 0) return fail(ps, "expected a name");
    if (*ps->p == '[') {
        const char *close = strchr(ps->p, ']');
        if (!close) return fail(ps, "'[' without ']'");
        size_t k = (size_t)(close - ps->p - 1);
        if (k + 1 > sizeof params) return fail(ps, "parameters too long");
        memcpy(params, ps->p + 1, k);
        params[k] = '\0';
        ps->p = close + 1;
    }
    if (*ps->p != '(') {
        if (params[0]) return fail(ps, "parameters without arguments");
        if (strcmp(name, "_") == 0 && depth > 0) { /* an omitted optional input */
            *v = -1;
            return XF_OK;
        }
        *v = input_named(ps->g, name);
        if (*v < 0)
            return XF_FAIL(ps->err, XF_ERR_PARSE, "graph text: '%s' is not a graph input", name);
        return XF_OK;
    }
    ps->p++;
    int args[MAX_ARGS], na = 0;
    for (;;) {
        skip_space(ps);
        if (*ps->p == ')') break;
        if (na == MAX_ARGS) return fail(ps, "too many arguments");
        xf_status st = parse_expr(ps, depth + 1, &args[na++]);
        if (st != XF_OK) return st;
        skip_space(ps);
        if (*ps->p == ',') ps->p++;
        else if (*ps->p != ')') return fail(ps, "expected ',' or ')'");
    }
    ps->p++;
    *v = ps->op(ps->g, name, params, args, na, ps->user, ps->err);
    return *v >= 0 ? XF_OK : (ps->err && ps->err->code ? ps->err->code : XF_ERR_PARSE);
}

/* The default parse op: operator table names with default parameters (text
 * with parameters is XF_ERR_UNSUPPORTED), an output index suffix for
 * multi-output operators. */
static int table_op(xf_graph *g, const char *name, const char *params, const int *args,
                    int n_args, void *user, xf_error *err)
{
    (void)user;
    if (params[0]) {
        XF_FAIL(err, XF_ERR_UNSUPPORTED, "graph text: %s[%s]: parameters are not read by default",
                name, params);
        return -1;
    }
    /* the longest prefix that is an operator, then an output index */
    size_t n = strlen(name);
    for (size_t k = n; k > 0; k--) {
        char op_name[MAX_NAME];
        memcpy(op_name, name, k);
        op_name[k] = '\0';
        xf_op op = xf_op_from_name(op_name);
        if (op == XF_OP_COUNT) continue;
        int out = 0, end = 0;
        if (k < n && !(sscanf(name + k, "%d%n", &out, &end) == 1 && (size_t)end == n - k))
            continue;
        xf_params p = xf_params_default();
        int n_out = xf_op_default_outputs(op, &p);
        if (out >= n_out) break;
        int node = xf_graph_add_node(g, op, &p, args, n_args, n_out, NULL, err);
        return node < 0 ? -1 : g->nodes[node].outputs[out];
    }
    XF_FAIL(err, XF_ERR_PARSE, "graph text: '%s' is not an operator", name);
    return -1;
}

xf_status xf_graph_parse(xf_graph *g, const char *text, xf_graph_parse_op op, void *user,
                         xf_error *err)
{
    parser ps = {text, text, g, op ? op : table_op, user, err};
    for (;;) {
        int v;
        xf_status st = parse_expr(&ps, 0, &v);
        if (st == XF_OK) st = xf_graph_mark_output(g, v, err);
        if (st != XF_OK) return st;
        skip_space(&ps);
        if (*ps.p == '\0') return XF_OK;
        if (*ps.p != ',' && *ps.p != ';') return fail(&ps, "expected ',' or ';' between outputs");
        ps.p++;
    }
}
