/*
 * flat.c — a rule fed to pruning side by side through two xf_graph_sinks
 * (prune_internal.h, "fed rules"): the inputs' types and names, each
 * node's canonical parameters, operator-key hash and inferred output
 * types, and the outputs, in arrays reused from rule to rule. xfergen
 * decodes its stored candidates straight into these (the term view needs
 * no xf_graph: building, validating and freeing two graphs per candidate
 * was half of its preparation's CPU), and xf_rules are fed from their graphs
 * (xf_graph_feed), so one builder makes every term view.
 */
#include "prune/prune_internal.h"

#include <string.h>

static const char *const side_name[2] = {"source", "target"};

uint64_t pr_opkey_hash(xf_op op, const xf_params *p)
{
    return xf_hash_bytes(xf_hash_u64(0x0E4u, (uint64_t)op), p, sizeof *p);
}

static xf_status keep_name(pr_flat *f, int k, const char *name, xf_error *err)
{
    f->in[k].name_at = -1;
    if (!name) return XF_OK;
    size_t len = strlen(name) + 1;
    if (len > (size_t)(INT32_MAX / 2 - f->n_names))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "input names too long");
    if (!xf_grow((void **)&f->names, &f->cap_names, f->n_names + (int)len, 1))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory (input names)");
    memcpy(f->names + f->n_names, name, len);
    f->in[k].name_at = f->n_names;
    f->n_names += (int)len;
    return XF_OK;
}

static xf_status fed_input(void *user, const char *name, xf_dtype dtype, const xf_shape *shape,
                           xf_error *err)
{
    pr_flat_feed *fd = user;
    pr_flat *f = fd->f;
    pr_flat_side *s = &f->side[fd->side];
    int k = s->n_inputs;
    if (s->n_nodes > 0)
        return XF_FAIL(err, XF_ERR_INVALID, "%s: input %d after the nodes", side_name[fd->side], k);
    xf_status st = xf_shape_check(shape, dtype, NULL, NULL, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "%s: input %d", side_name[fd->side], k);
        return st;
    }
    if (!xf_grow((void **)&s->values, &s->cap_values, k + 1, sizeof *s->values) ||
        (fd->side == 0 && (!xf_grow((void **)&f->in, &f->cap_in, k + 1, sizeof *f->in) ||
                           !xf_grow((void **)&f->group, &f->cap_group, k + 1, sizeof *f->group))))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory (rule inputs)");
    if (fd->side == 0) st = keep_name(f, k, name, err);
    if (st != XF_OK) return st;
    s->values[k] = (pr_flat_value){*shape, dtype, -1};
    s->n_inputs++;
    s->n_values++;
    return XF_OK;
}

static xf_status fed_node(void *user, xf_op op, const xf_params *params, const int *inputs,
                          int n_inputs, int n_outputs, xf_error *err)
{
    pr_flat_feed *fd = user;
    pr_flat *f = fd->f;
    pr_flat_side *s = &f->side[fd->side];
    const char *side = side_name[fd->side];
    int k = s->n_nodes;
    if (op == XF_OP_OPAQUE || !xf_op_get(op))
        return XF_FAIL(err, XF_ERR_INVALID, "%s: node %d has no operator of the table", side, k);
    if (n_inputs < 0 || n_outputs < 1 || n_inputs + n_outputs > PR_MAX_NODE_IO)
        return XF_FAIL(err, XF_ERR_INVALID, "%s: node %d has %d inputs and %d outputs", side, k,
                       n_inputs, n_outputs);
    xf_dtype dt[PR_MAX_NODE_IO];
    xf_shape sh[PR_MAX_NODE_IO];
    for (int j = 0; j < n_inputs; j++) {
        int v = inputs[j];
        if (v < -1 || v >= s->n_values)
            return XF_FAIL(err, XF_ERR_INVALID, "%s: node %d: input %d refers to value %d, only %d "
                           "defined before it", side, k, j, v, s->n_values);
        dt[j] = v >= 0 ? s->values[v].dtype : XF_DTYPE_INVALID;
        if (v >= 0) sh[j] = s->values[v].shape;
        else memset(&sh[j], 0, sizeof sh[j]);
    }
    xf_params p = params ? *params : xf_params_default();
    xf_status st = xf_op_infer(op, &p, n_inputs, dt, sh, n_outputs, dt + n_inputs, sh + n_inputs,
                               err);
    if (st != XF_OK) {
        xf_error_prefix(err, "%s: node %d (%s)", side, k, xf_op_get(op)->name);
        return st;
    }
    xf_params_canonical(op, &p); /* as xf_graph_add_node keeps them */
    if (!xf_grow((void **)&s->nodes, &s->cap_nodes, s->n_nodes + 1, sizeof *s->nodes) ||
        !xf_grow((void **)&s->ins, &s->cap_ins, s->n_ins + n_inputs, sizeof *s->ins) ||
        !xf_grow((void **)&s->values, &s->cap_values, s->n_values + n_outputs, sizeof *s->values))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory (rule nodes)");
    pr_flat_node *nd = &s->nodes[s->n_nodes++];
    nd->op = op;
    nd->n_in = n_inputs;
    nd->n_out = n_outputs;
    nd->in = s->n_ins;
    nd->out = s->n_values;
    nd->hash = pr_opkey_hash(op, &p);
    nd->params = p;
    for (int j = 0; j < n_inputs; j++) s->ins[s->n_ins++] = inputs[j];
    for (int j = 0; j < n_outputs; j++)
        s->values[s->n_values++] = (pr_flat_value){sh[n_inputs + j], dt[n_inputs + j], k};
    return XF_OK;
}

static xf_status fed_output(void *user, int value, xf_error *err)
{
    pr_flat_feed *fd = user;
    pr_flat_side *s = &fd->f->side[fd->side];
    if (value < 0 || value >= s->n_values)
        return XF_FAIL(err, XF_ERR_INVALID, "%s: output %d refers to value %d, only %d defined",
                       side_name[fd->side], s->n_outputs, value, s->n_values);
    if (!xf_grow((void **)&s->outputs, &s->cap_outputs, s->n_outputs + 1, sizeof *s->outputs))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory (rule outputs)");
    s->outputs[s->n_outputs++] = value;
    return XF_OK;
}

void pr_flat_init(pr_flat *f)
{
    memset(f, 0, sizeof *f);
    for (int side = 0; side < 2; side++) {
        f->feed[side] = (pr_flat_feed){f, side};
        f->sink[side] = (xf_graph_sink){&f->feed[side], fed_input, fed_node, fed_output};
    }
}

void pr_flat_free(pr_flat *f)
{
    for (int side = 0; side < 2; side++) {
        pr_flat_side *s = &f->side[side];
        xf_free(s->values);
        xf_free(s->nodes);
        xf_free(s->ins);
        xf_free(s->outputs);
    }
    xf_free(f->names);
    xf_free(f->in);
    xf_free(f->group);
    xf_free(f->seen);
    pr_flat_init(f);
}

void pr_flat_reset(pr_flat *f)
{
    for (int side = 0; side < 2; side++) {
        pr_flat_side *s = &f->side[side];
        s->n_inputs = s->n_values = s->n_nodes = s->n_outputs = 0;
        s->n_ins = 0;
    }
    f->n_names = 0;
}

static int same_type(const pr_flat_side *a, int va, const pr_flat_side *b, int vb)
{
    return a->values[va].dtype == b->values[vb].dtype &&
           xf_shape_equal(&a->values[va].shape, &b->values[vb].shape);
}

/* The sides' agreement, as xf_rule_validate checks it. */
static xf_status check_sides(const pr_flat *f, xf_error *err)
{
    const pr_flat_side *a = &f->side[0], *b = &f->side[1];
    if (a->n_inputs != b->n_inputs)
        return XF_FAIL(err, XF_ERR_INVALID, "source has %d inputs, target %d", a->n_inputs,
                       b->n_inputs);
    for (int i = 0; i < a->n_inputs; i++)
        if (!same_type(a, i, b, i))
            return XF_FAIL(err, XF_ERR_INVALID, "input %d has another type in the target than in "
                           "the source", i);
    if (a->n_outputs != b->n_outputs || a->n_outputs == 0)
        return XF_FAIL(err, XF_ERR_INVALID, "source has %d outputs, target %d (need equal, > 0)",
                       a->n_outputs, b->n_outputs);
    for (int i = 0; i < a->n_outputs; i++)
        if (!same_type(a, a->outputs[i], b, b->outputs[i]))
            return XF_FAIL(err, XF_ERR_INVALID, "output %d has another type in the target than in "
                           "the source", i);
    return XF_OK;
}

xf_status pr_flat_finish(pr_flat *f, int canonical, xf_error *err)
{
    xf_status st = check_sides(f, err);
    if (st != XF_OK) return st;
    int n = f->side[0].n_inputs;
    if (canonical) return pr_flat_canonical(f, err);
    for (int k = 0; k < n; k++) {
        f->in[k].order = k;
        f->in[k].name_of = f->in[k].name_at;
    }
    return XF_OK;
}
