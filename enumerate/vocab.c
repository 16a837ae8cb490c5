/*
 * vocab.c — the vocabulary text format: one operator variant per line,
 * "op key=value ...", '#' starts a comment. Parsing fills xf_enum_opvar
 * entries; formatting writes the same lines back (and is what a variant's
 * name is made of), so a vocabulary round-trips and a run can record the
 * exact vocabulary it used. Keys and their meaning: docs/enumerate.md.
 */
#include "enumerate_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A comma or 'x' separated list of integers, e.g. "3x3" or "0,2,1". */
static int parse_ints(const char *s, char sep, int64_t *out, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno || n == max) return -1;
        out[n++] = v;
        if (*end == 0) break;
        if (*end != sep) return -1;
        s = end + 1;
        if (!*s) return -1;
    }
    return n;
}

/* "3x3" or "3" into two int32 (h, w). */
static int parse_pair(const char *s, int32_t *pair)
{
    int64_t v[2];
    int n = parse_ints(s, 'x', v, 2);
    if (n < 1 || v[0] < 1 || v[0] > 64 || v[n - 1] < 1 || v[n - 1] > 64) return -1;
    pair[0] = (int32_t)v[0];
    pair[1] = (int32_t)v[n - 1];
    return 0;
}

/* "2|3,1" into bit sets of ranks per input (two inputs). */
static int parse_rank_sets(const char *s, int *sets)
{
    sets[0] = sets[1] = 0;
    for (int i = 0; i < 2; i++) {
        for (;;) {
            char *end;
            errno = 0;
            long r = strtol(s, &end, 10);
            if (end == s || errno || r < 0 || r > XF_MAX_DIMS) return -1;
            sets[i] |= 1 << r;
            s = end;
            if (*s != '|') break;
            s++;
        }
        if (i == 0 && *s++ != ',') return -1;
    }
    return *s ? -1 : 0;
}

static const char *act_names[] = {"none", "relu", "sigmoid", "tanh"};

typedef struct line_ctx {
    const char *origin;
    int line;
    xf_error *err;
} line_ctx;

static xf_status bad(const line_ctx *c, const char *op, const char *key, const char *val,
                     const char *want)
{
    return XF_FAIL(c->err, XF_ERR_PARSE, "%s:%d: %s: bad value '%s' for %s (expected %s)",
                   c->origin, c->line, op, val, key, want);
}

/* Applies one key=value to v; `same_pad` is set by pad=same. */
static xf_status apply_key(const line_ctx *c, xf_enum_opvar *v, const char *key, const char *val,
                           int *same_pad)
{
    xf_params *p = &v->params;
    const char *op = xf_op_get(v->op)->name;
    int64_t ints[XF_MAX_SPLIT];
    int n;
    if (strcmp(key, "axis") == 0 && v->op == XF_OP_SLICE) {
        if (parse_ints(val, ',', ints, 1) != 1 || ints[0] < -XF_MAX_DIMS || ints[0] >= XF_MAX_DIMS)
            return bad(c, op, key, val, "an axis");
        p->n_axes = 1;
        p->axes[0] = ints[0];
        p->steps[0] = 1;
    } else if (strcmp(key, "kernel") == 0) {
        if (parse_pair(val, p->kernel) != 0) return bad(c, op, key, val, "HxW, 1..64");
    } else if (strcmp(key, "stride") == 0) {
        if (parse_pair(val, p->stride) != 0) return bad(c, op, key, val, "HxW, 1..64");
    } else if (strcmp(key, "pad") == 0) {
        if (strcmp(val, "same") == 0) {
            *same_pad = 1;
            return XF_OK;
        }
        n = parse_ints(val, ',', ints, 4);
        if (n != 1 && n != 4) return bad(c, op, key, val, "same, N or top,left,bottom,right");
        for (int i = 0; i < 4; i++) {
            int64_t x = ints[n == 1 ? 0 : i];
            if (x < 0 || x > 64) return bad(c, op, key, val, "pads in 0..64");
            p->pads[i] = (int32_t)x;
        }
    } else if (strcmp(key, "act") == 0) {
        int a = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(val, act_names[i]) == 0) a = i;
        if (a < 0) return bad(c, op, key, val, "none, relu, sigmoid or tanh");
        p->activation = a;
    } else if (strcmp(key, "group") == 0) {
        if (strcmp(val, "depthwise") == 0) {
            v->mode = XF_ENUM_DEPTHWISE;
            return XF_OK;
        }
        if (parse_ints(val, ',', ints, 1) != 1 || ints[0] < 1 || ints[0] > 4096)
            return bad(c, op, key, val, "a positive group count or depthwise");
        p->group = (int32_t)ints[0];
    } else if (strcmp(key, "axis") == 0) {
        if (parse_ints(val, ',', ints, 1) != 1 || ints[0] < -XF_MAX_DIMS || ints[0] >= XF_MAX_DIMS)
            return bad(c, op, key, val, "an axis");
        p->axis = (int32_t)ints[0];
    } else if (strcmp(key, "axes") == 0 || strcmp(key, "perm") == 0) {
        n = parse_ints(val, ',', ints, XF_MAX_DIMS);
        if (n < 1) return bad(c, op, key, val, "comma-separated axes");
        p->n_axes = n;
        for (int i = 0; i < n; i++) p->axes[i] = ints[i];
    } else if (strcmp(key, "sizes") == 0) {
        n = parse_ints(val, ',', ints, XF_MAX_SPLIT);
        if (n < 1) return bad(c, op, key, val, "comma-separated split sizes");
        p->n_split = n;
        for (int i = 0; i < n; i++) p->split[i] = ints[i];
        v->mode = XF_ENUM_FIXED;
    } else if (strcmp(key, "parts") == 0) {
        if (v->op != XF_OP_SPLIT || parse_ints(val, ',', ints, 1) != 1 || ints[0] < 2 ||
            ints[0] > NODE_OUTS)
            return bad(c, op, key, val, "2 or 3 equal parts (split only)");
        p->n_split = (int32_t)ints[0];
        v->mode = XF_ENUM_SPLIT_HALF;
    } else if (strcmp(key, "shape") == 0) {
        if (strcmp(val, "scalar") == 0) {
            p->n_shape = 0;
            return XF_OK;
        }
        n = parse_ints(val, 'x', ints, XF_MAX_DIMS);
        if (n < 1) return bad(c, op, key, val, "AxBx... or scalar");
        p->n_shape = n;
        for (int i = 0; i < n; i++) p->shape[i] = ints[i];
    } else if (strcmp(key, "keepdims") == 0 || strcmp(key, "count_include_pad") == 0 ||
               strcmp(key, "broadcast") == 0) {
        if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0) return bad(c, op, key, val, "0 or 1");
        int b = val[0] == '1';
        if (key[0] == 'k') p->keepdims = b;
        else if (key[0] == 'c') p->count_include_pad = b;
        else v->broadcast = b;
    } else if (strcmp(key, "rank") == 0) {
        if (!strchr(val, ',') && strchr(val, '|')) { /* one input's set: "2|3" */
            int sets[2];
            char two[64];
            snprintf(two, sizeof two, "%s,0", val);
            if (strlen(val) > 40 || parse_rank_sets(two, sets) != 0)
                return bad(c, op, key, val, "a rank 0..6, or a set like 2|3");
            v->rank = 0;
            v->in_ranks[0] = sets[0];
            v->in_ranks[1] = 0;
        } else if (!strchr(val, ',')) {
            if (parse_ints(val, ',', ints, 1) != 1 || ints[0] < 0 || ints[0] > XF_MAX_DIMS)
                return bad(c, op, key, val, "a rank 0..6, or ranks per input (3,2 or 2|3,1)");
            v->rank = (int)ints[0];
        } else if (parse_rank_sets(val, v->in_ranks) != 0) {
            return bad(c, op, key, val, "ranks per input, each 0..6 or a set like 2|3 (3,2 or 2|3,1)");
        } else {
            v->rank = 0;
        }
    } else if (strcmp(key, "view") == 0) {
        static const char *views[] = {"flatten", "unflatten", "split_last", "merge_last"};
        static const xf_enum_pmode modes[] = {XF_ENUM_VIEW_FLATTEN, XF_ENUM_VIEW_UNFLATTEN,
                                              XF_ENUM_VIEW_SPLIT, XF_ENUM_VIEW_MERGE};
        int m = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(val, views[i]) == 0) m = i;
        if (v->op != XF_OP_RESHAPE || m < 0)
            return bad(c, op, key, val, "flatten, unflatten, split_last or merge_last (reshape only)");
        v->mode = modes[m];
        if ((v->mode == XF_ENUM_VIEW_UNFLATTEN || v->mode == XF_ENUM_VIEW_SPLIT) && p->group == 0)
            p->group = 2;
    } else if (strcmp(key, "lead") == 0 || strcmp(key, "heads") == 0) {
        if (parse_ints(val, ',', ints, 1) != 1 || ints[0] < 2 || ints[0] > 64)
            return bad(c, op, key, val, "a size 2..64");
        p->group = (int32_t)ints[0];
    } else if (strcmp(key, "start") == 0 || strcmp(key, "end") == 0) {
        if (parse_ints(val, ',', ints, 1) != 1 || ints[0] < 0 || ints[0] > 4096)
            return bad(c, op, key, val, "a position 0..4096");
        p->n_axes = 1;
        if (key[0] == 's') p->starts[0] = ints[0];
        else p->ends[0] = ints[0];
        p->steps[0] = 1;
    } else if (strcmp(key, "eps") == 0) {
        char *end;
        double e = strtod(val, &end);
        if (end == val || *end || !(e >= 0)) return bad(c, op, key, val, "a non-negative number");
        p->epsilon = (float)e;
    } else {
        return XF_FAIL(c->err, XF_ERR_PARSE, "%s:%d: %s: unknown key '%s' (see docs/enumerate.md)",
                       c->origin, c->line, op, key);
    }
    return XF_OK;
}

/* Defaults that depend on the op, before keys are applied. */
static void opvar_defaults(xf_enum_opvar *v)
{
    if (v->op == XF_OP_SPLIT) v->mode = XF_ENUM_SPLIT_HALF;
    if (v->op == XF_OP_TRANSPOSE) v->mode = XF_ENUM_SWAP_LAST2;
    if (v->op == XF_OP_LAYERNORM) v->params.epsilon = 1e-5f;
}

static int is_spatial(xf_op op)
{
    return op == XF_OP_CONV || op == XF_OP_MAXPOOL || op == XF_OP_AVGPOOL;
}

static xf_status parse_line(const line_ctx *c, char *line, xf_enum_opvar *v)
{
    char *save = NULL, *tok = strtok_r(line, " \t\r", &save);
    xf_op op = xf_op_from_name(tok);
    if (op == XF_OP_COUNT)
        return XF_FAIL(c->err, XF_ERR_PARSE, "%s:%d: unknown operator '%s'", c->origin, c->line, tok);
    if (!en_fp_op_supported(op))
        return XF_FAIL(c->err, XF_ERR_UNSUPPORTED,
                       "%s:%d: operator '%s' has no fingerprint semantics and cannot be enumerated",
                       c->origin, c->line, tok);
    memset(v, 0, sizeof *v);
    v->op = op;
    v->params = xf_params_default();
    opvar_defaults(v);
    int same_pad = 0;
    while ((tok = strtok_r(NULL, " \t\r", &save)) != NULL) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1])
            return XF_FAIL(c->err, XF_ERR_PARSE, "%s:%d: '%s' is not key=value", c->origin, c->line,
                           tok);
        *eq = 0;
        xf_status st = apply_key(c, v, tok, eq + 1, &same_pad);
        if (st != XF_OK) return st;
    }
    xf_params *p = &v->params;
    if ((is_spatial(op) || op == XF_OP_ENLARGE) && p->kernel[0] == 0)
        return XF_FAIL(c->err, XF_ERR_PARSE, "%s:%d: %s needs kernel=HxW", c->origin, c->line,
                       xf_op_get(op)->name);
    if (same_pad) {
        if (!is_spatial(op))
            return XF_FAIL(c->err, XF_ERR_PARSE, "%s:%d: pad=same applies to conv2d and pooling only",
                           c->origin, c->line);
        p->pads[0] = p->pads[2] = (p->kernel[0] - 1) / 2;
        p->pads[1] = p->pads[3] = (p->kernel[1] - 1) / 2;
    }
    if (op == XF_OP_SPLIT && v->mode == XF_ENUM_SPLIT_HALF && p->n_split < 2) p->n_split = 2;
    if (op == XF_OP_RESHAPE && (v->mode < XF_ENUM_VIEW_FLATTEN || v->mode > XF_ENUM_VIEW_MERGE))
        return XF_FAIL(c->err, XF_ERR_PARSE,
                       "%s:%d: reshape needs view=flatten|unflatten|split_last|merge_last", c->origin,
                       c->line);
    if (op == XF_OP_SLICE && (p->n_axes != 1 || p->ends[0] <= p->starts[0]))
        return XF_FAIL(c->err, XF_ERR_PARSE, "%s:%d: slice needs axis=N start=A end=B with A < B",
                       c->origin, c->line);
    if ((op == XF_OP_SQUEEZE || op == XF_OP_UNSQUEEZE) && p->n_axes < 1)
        return XF_FAIL(c->err, XF_ERR_PARSE, "%s:%d: %s needs axes=...", c->origin, c->line,
                       xf_op_get(op)->name);
    if (op == XF_OP_TRANSPOSE && p->n_axes > 0) v->mode = XF_ENUM_FIXED;
    if (is_spatial(op) && (int64_t)p->kernel[0] * p->kernel[1] > FP_MAX_WINDOW)
        return XF_FAIL(c->err, XF_ERR_PARSE, "%s:%d: kernel %dx%d is larger than %d taps",
                       c->origin, c->line, p->kernel[0], p->kernel[1], FP_MAX_WINDOW);
    return en_opvar_name(v, c->err);
}

xf_status xf_enum_vocab_parse(xf_enum_config *cfg, const char *text, const char *origin,
                              xf_error *err)
{
    line_ctx c = {origin ? origin : "vocabulary", 0, err};
    size_t len = strlen(text);
    char *buf = xf_malloc(len + 1);
    xf_enum_opvar *ops = xf_calloc(XF_ENUM_MAX_VOCAB, sizeof *ops);
    xf_status st = XF_OK;
    int n = 0;
    if (!buf || !ops) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory reading the vocabulary", c.origin);
        goto out;
    }
    memcpy(buf, text, len + 1);
    for (char *line = buf; line && st == XF_OK;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        c.line++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        while (isspace((unsigned char)*line)) line++;
        if (*line) {
            if (n == XF_ENUM_MAX_VOCAB) {
                st = XF_FAIL(err, XF_ERR_PARSE, "%s:%d: more than %d operator variants", c.origin,
                             c.line, XF_ENUM_MAX_VOCAB);
                break;
            }
            st = parse_line(&c, line, &ops[n]);
            for (int i = 0; st == XF_OK && i < n; i++)
                if (strcmp(ops[i].name, ops[n].name) == 0)
                    st = XF_FAIL(err, XF_ERR_PARSE, "%s:%d: variant %s is listed twice", c.origin,
                                 c.line, ops[n].name);
            n++;
        }
        line = nl ? nl + 1 : NULL;
    }
    if (st == XF_OK && n == 0)
        st = XF_FAIL(err, XF_ERR_PARSE, "%s: the vocabulary has no operators", c.origin);
    if (st == XF_OK) {
        xf_free(cfg->ops);
        cfg->ops = ops;
        cfg->n_ops = n;
        ops = NULL;
    }
out:
    xf_free(buf);
    xf_free(ops);
    return st;
}

/* ------------------------------------------------------------- formatting */

static void put_list(xf_strbuf *b, const char *key, const int64_t *v, int n, char sep)
{
    xf_strbuf_printf(b, " %s=", key);
    for (int i = 0; i < n; i++) {
        if (i) xf_strbuf_printf(b, "%c", sep);
        xf_strbuf_printf(b, "%lld", (long long)v[i]);
    }
}

/* The vocabulary line of v ("conv2d kernel=3x3 pad=same act=relu"). */
static void format_opvar(const xf_enum_opvar *v, xf_strbuf *b)
{
    const xf_params *p = &v->params;
    xf_op op = v->op;
    xf_strbuf_printf(b, "%s", xf_op_get(op)->name);
    if (v->rank) xf_strbuf_printf(b, " rank=%d", v->rank);
    else if (v->in_ranks[0] || v->in_ranks[1]) {
        xf_strbuf_printf(b, " rank=");
        int sets = v->in_ranks[1] || en_var_arity(v) > 1 ? 2 : 1;
        for (int i = 0; i < sets; i++) {
            int first = 1;
            for (int r = 0; r <= XF_MAX_DIMS; r++)
                if (v->in_ranks[i] & (1 << r)) {
                    xf_strbuf_printf(b, "%s%d", first ? "" : "|", r);
                    first = 0;
                }
            if (i == 0 && sets == 2) xf_strbuf_printf(b, ",");
        }
    }
    if (op == XF_OP_RESHAPE) {
        static const char *views[] = {"flatten", "unflatten", "split_last", "merge_last"};
        if (v->mode >= XF_ENUM_VIEW_FLATTEN && v->mode <= XF_ENUM_VIEW_MERGE)
            xf_strbuf_printf(b, " view=%s", views[v->mode - XF_ENUM_VIEW_FLATTEN]);
        if (v->mode == XF_ENUM_VIEW_UNFLATTEN) xf_strbuf_printf(b, " lead=%d", (int)p->group);
        if (v->mode == XF_ENUM_VIEW_SPLIT) xf_strbuf_printf(b, " heads=%d", (int)p->group);
    }
    if (op == XF_OP_SLICE) {
        xf_strbuf_printf(b, " axis=%lld start=%lld end=%lld", (long long)p->axes[0],
                         (long long)p->starts[0], (long long)p->ends[0]);
        return;
    }
    if (v->broadcast) xf_strbuf_printf(b, " broadcast=1");
    if (op == XF_OP_CONCAT || op == XF_OP_SPLIT || op == XF_OP_SOFTMAX || op == XF_OP_LAYERNORM)
        xf_strbuf_printf(b, " axis=%d", (int)p->axis);
    if (op == XF_OP_SPLIT && v->mode == XF_ENUM_FIXED) put_list(b, "sizes", p->split, p->n_split, ',');
    if (op == XF_OP_SPLIT && v->mode == XF_ENUM_SPLIT_HALF && p->n_split > 2)
        xf_strbuf_printf(b, " parts=%d", (int)p->n_split);
    if (p->n_axes) put_list(b, op == XF_OP_TRANSPOSE ? "perm" : "axes", p->axes, p->n_axes, ',');
    if (p->keepdims) xf_strbuf_printf(b, " keepdims=1");
    if (p->kernel[0]) xf_strbuf_printf(b, " kernel=%dx%d", (int)p->kernel[0], (int)p->kernel[1]);
    if (p->stride[0] || p->stride[1])
        xf_strbuf_printf(b, " stride=%dx%d", (int)p->stride[0], (int)p->stride[1]);
    int same = p->pads[0] == (p->kernel[0] - 1) / 2 && p->pads[2] == p->pads[0] &&
               p->pads[1] == (p->kernel[1] - 1) / 2 && p->pads[3] == p->pads[1];
    int zero = !p->pads[0] && !p->pads[1] && !p->pads[2] && !p->pads[3];
    if (!zero && same) xf_strbuf_printf(b, " pad=same");
    else if (!zero)
        xf_strbuf_printf(b, " pad=%d,%d,%d,%d", (int)p->pads[0], (int)p->pads[1], (int)p->pads[2], (int)p->pads[3]);
    if (v->mode == XF_ENUM_DEPTHWISE) xf_strbuf_printf(b, " group=depthwise");
    else if (p->group > 1 && op != XF_OP_RESHAPE) xf_strbuf_printf(b, " group=%d", (int)p->group);
    if (p->activation > 0 && p->activation < 4) xf_strbuf_printf(b, " act=%s", act_names[p->activation]);
    if (p->count_include_pad) xf_strbuf_printf(b, " count_include_pad=1");
    if (op == XF_OP_LAYERNORM && p->epsilon != 1e-5f) xf_strbuf_printf(b, " eps=%.9g", (double)p->epsilon);
    if (op >= XF_OP_CONST_IDENTITY_CONV && op <= XF_OP_CONST_POOL) {
        if (p->n_shape == 0) xf_strbuf_printf(b, " shape=scalar");
        else put_list(b, "shape", p->shape, p->n_shape, 'x');
    }
}

xf_status en_opvar_name(xf_enum_opvar *v, xf_error *err)
{
    char line[256];
    xf_strbuf b = {line, sizeof line, 0, 0};
    format_opvar(v, &b);
    if (b.overflow) return XF_FAIL(err, XF_ERR_INVALID, "variant description too long: %s", line);
    /* name: "op" or "op[k=v,k=v]" */
    char *sp = strchr(line, ' ');
    if (sp) {
        *sp = '[';
        for (char *q = sp; *q; q++)
            if (*q == ' ') *q = ',';
        size_t l = strlen(line);
        if (l + 2 > sizeof line) return XF_FAIL(err, XF_ERR_INVALID, "variant name too long");
        line[l] = ']';
        line[l + 1] = 0;
    }
    if (strlen(line) >= sizeof v->name)
        return XF_FAIL(err, XF_ERR_INVALID, "variant name %s is longer than %d characters", line,
                       XF_ENUM_NAME_LEN - 1);
    memcpy(v->name, line, strlen(line) + 1);
    return XF_OK;
}

xf_status xf_enum_vocab_format(const xf_enum_config *c, char *buf, size_t n, xf_error *err)
{
    xf_strbuf b = {buf, n, 0, 0};
    if (n) buf[0] = 0;
    for (int i = 0; i < c->n_ops; i++) {
        format_opvar(&c->ops[i], &b);
        xf_strbuf_printf(&b, "\n");
    }
    if (b.overflow)
        return XF_FAIL(err, XF_ERR_INVALID, "vocabulary text needs %zu bytes, buffer has %zu",
                       b.len + 1, n);
    return XF_OK;
}
