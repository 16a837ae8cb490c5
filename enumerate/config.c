/*
 * config.c — what an enumeration covers: defaults, the two presets
 * ("default": TASO's operators plus the transformer ones; "taso": TASO's
 * only), the input spec "x0:4x4x4x4,w0:4x4x3x3,s0:scalar", validation and
 * the hash that ties a checkpoint to its configuration. The presets are
 * written in the vocabulary text format, so they are parsed exactly like a
 * user's file and `xf_enum_vocab_format` shows them.
 */
#include "enumerate_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char taso_vocab[] =
    "matmul rank=2\n"
    "ewadd\n"
    "ewmul\n"
    "scalar_mul\n"
    "relu\n"
    "conv2d kernel=3x3 pad=same\n"
    "conv2d kernel=3x3 pad=same act=relu\n"
    "conv2d kernel=1x1\n"
    "conv2d kernel=1x1 act=relu\n"
    "conv2d kernel=1x3 pad=same\n"
    "conv2d kernel=1x3 pad=same act=relu\n"
    "conv2d kernel=3x1 pad=same\n"
    "conv2d kernel=3x1 pad=same act=relu\n"
    "conv2d kernel=3x3 pad=same group=depthwise\n"
    "avgpool kernel=3x3 pad=same count_include_pad=1\n"
    "maxpool kernel=3x3 pad=same\n"
    "concat axis=0\n"
    "concat axis=1\n"
    "split axis=0\n"
    "split axis=1\n"
    "transpose\n"
    "enlarge kernel=3x3\n"
    "const_iconv shape=4x4x3x3\n"
    "const_imatrix shape=4x4\n"
    "const_ones shape=4x4\n"
    "const_pool shape=4x1x3x3\n";

static const char transformer_vocab[] =
    "conv2d kernel=3x3 stride=2x2 pad=same\n"
    "matmul rank=3\n"
    "gelu\n"
    "softmax axis=-1\n"
    "layernorm axis=-1\n"
    "reduce_mean axes=-1 keepdims=1\n";

/* Shape and indexing operators (issue 28): the reshapes a transformer's
 * layout lives on (flatten of the batch and sequence axes and back, the
 * head split of the last axis and back), one position taken along the
 * sequence axis (a class token) and its unit axis squeezed, a matmul of
 * 3-D activations by a 2-D weight, bias and scalar adds and scalar products
 * that broadcast (a scaling kept as exported: GELU's x0.5), and
 * erf, tanh and a power by a scalar (GELU as exported, exact and
 * approximated: x + 0.044715 x^3 as Pow(x, 3)), and attention's 4-D
 * layout: the head transpose [B,S,h,d] <-> [B,h,S,d], the batched 4-D
 * matmuls and one position taken along its sequence axis before and after
 * the transpose, so that a class token's slice moves up through the
 * attention of the last block (scores, softmax, context, the query).
 * Rank-restricted so they only meet the tensors they are for. */
static const char view_vocab[] =
    "reshape view=flatten rank=3\n"
    "reshape view=unflatten lead=2 rank=2\n"
    "reshape view=split_last heads=2 rank=3\n"
    "reshape view=merge_last rank=4\n"
    "slice axis=1 start=0 end=1 rank=3\n"
    "slice axis=1 start=0 end=1 rank=4\n"
    "slice axis=2 start=0 end=1 rank=4\n"
    "transpose perm=0,2,1,3\n"
    "matmul rank=4\n"
    "squeeze axes=1 rank=3\n"
    "matmul rank=3,2\n"
    "ewadd broadcast=1 rank=2|3,1\n"
    "ewadd broadcast=1 rank=1,2|3\n"
    "ewadd broadcast=1 rank=2|3,0\n"
    "ewmul broadcast=1 rank=2|3,0\n"
    "erf rank=2|3\n"
    "tanh rank=2|3\n"
    "pow broadcast=1 rank=2|3,0\n";

/* "unbatched": GPT's heads in the layout ONNX Runtime folds into its
 * FusedMatMul (issue 28), over a part u0 with a unit first axis: the head
 * transpose 0,2,1,3 of a [1,S,h,d] reshape is 1,2,0,3 of the [S,1,h,d]
 * reshape of the part squeezed and unsqueezed (the key's 0,2,3,1 is
 * 1,2,3,0), rules of 4 operators a side that hold where u0[-3] == 1. The
 * default rules database adds its 4-operator rules to the default
 * vocabulary's (optimize/default_rules.c). */
static const char unbatched_vocab[] =
    "squeeze axes=0 rank=3\n"
    "unsqueeze axes=1 rank=2\n"
    "reshape view=split_last heads=2 rank=3\n"
    "transpose perm=0,2,1,3\n"
    "transpose perm=1,2,0,3\n"
    "transpose perm=0,2,3,1\n"
    "transpose perm=1,2,3,0\n";
static const char unbatched_inputs[] = "u0:1x4x4";

static const char taso_inputs[] =
    "x0:2x4x4x4,x1:2x4x4x4,w0:4x4x3x3,w1:4x4x3x3,w2:4x4x1x1,m0:4x4,m1:4x4,m2:4x4,s0:scalar";
static const char default_inputs[] =
    "x0:2x4x4x4,x1:2x4x4x4,w0:4x4x3x3,w1:4x4x3x3,w2:4x4x1x1,m0:4x4,m1:4x4,m2:4x4,s0:scalar,"
    "b0:2x4x4,g0:4";
/* default's: a second [B, S, H] activation, so that a view or a slice
 * moves past an operator of two different ones (a residual add), and
 * attention's [B, S, h, d] (q0), whose heads merge into a [B, S, H] within
 * the enumerator's largest dim (x0's would not) */
static const char view_inputs[] =
    "x0:2x4x4x4,x1:2x4x4x4,w0:4x4x3x3,w1:4x4x3x3,w2:4x4x1x1,m0:4x4,m1:4x4,m2:4x4,s0:scalar,"
    "b0:2x4x4,g0:4,b1:2x4x4,q0:2x4x2x2";

void xf_enum_config_init(xf_enum_config *c)
{
    memset(c, 0, sizeof *c);
    c->max_ops = 3;
    c->max_outputs = 2;
    c->max_dim = 8;
    c->max_numel = 1024;
    c->seed = 1;
}

void xf_enum_config_free(xf_enum_config *c)
{
    xf_free(c->ops);
    c->ops = NULL;
    c->n_ops = 0;
}

static xf_status preset_vocab(xf_enum_config *c, const char *name, xf_error *err)
{
    if (strcmp(name, "taso") == 0) return xf_enum_vocab_parse(c, taso_vocab, "preset taso", err);
    if (strcmp(name, "unbatched") == 0)
        return xf_enum_vocab_parse(c, unbatched_vocab, "preset unbatched", err);
    if (strcmp(name, "default") == 0 || strcmp(name, "noviews") == 0) {
        char text[sizeof taso_vocab + sizeof transformer_vocab + sizeof view_vocab];
        int views = strcmp(name, "default") == 0;
        snprintf(text, sizeof text, "%s%s%s", taso_vocab, transformer_vocab, views ? view_vocab : "");
        return xf_enum_vocab_parse(c, text, views ? "preset default" : "preset noviews", err);
    }
    return XF_FAIL(err, XF_ERR_INVALID,
                   "unknown vocabulary preset '%s' (known: default, noviews, taso, unbatched)", name);
}

xf_status xf_enum_config_preset(xf_enum_config *c, const char *name, xf_error *err)
{
    xf_status st = preset_vocab(c, name, err);
    if (st != XF_OK) return st;
    const char *in = !strcmp(name, "taso")        ? taso_inputs
                     : !strcmp(name, "default")   ? view_inputs
                     : !strcmp(name, "unbatched") ? unbatched_inputs
                                                  : default_inputs;
    return xf_enum_inputs_parse(c, in, err);
}

int xf_enum_is_preset(const char *name)
{
    return !strcmp(name, "taso") || !strcmp(name, "default") || !strcmp(name, "noviews") ||
           !strcmp(name, "unbatched");
}

xf_status xf_enum_vocab_load(xf_enum_config *c, const char *preset_or_path, xf_error *err)
{
    if (xf_enum_is_preset(preset_or_path)) return preset_vocab(c, preset_or_path, err);
    FILE *f;
    xf_status st0 = xf_infile_open(preset_or_path, &f, err);
    if (st0 != XF_OK) {
        xf_error_prefix(err, "vocabulary file");
        return st0;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    xf_status st = XF_OK;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *t = xf_realloc(text, cap);
            if (!t) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading %s", preset_or_path);
                break;
            }
            text = t;
        }
        size_t k = fread(text + len, 1, 4096, f);
        len += k;
        if (len > XF_ENUM_VOCAB_MAX_BYTES) {
            char most[32];
            st = XF_FAIL(err, XF_ERR_INVALID,
                         "vocabulary file %s is larger than %s: a vocabulary lists operator "
                         "variants, one per line (see docs/enumerate.md); is it the right file?",
                         preset_or_path,
                         xf_bytes_str((double)XF_ENUM_VOCAB_MAX_BYTES, most, sizeof most));
            break;
        }
        if (k < 4096) break;
    }
    if (st == XF_OK && ferror(f))
        st = XF_FAIL(err, XF_ERR_IO, "error reading vocabulary file %s", preset_or_path);
    fclose(f);
    if (st == XF_OK) {
        text[len] = 0;
        st = xf_enum_vocab_parse(c, text, preset_or_path, err);
    }
    xf_free(text);
    return st;
}

/* ------------------------------------------------------------------ inputs */

xf_status xf_enum_inputs_parse(xf_enum_config *c, const char *spec, xf_error *err)
{
    xf_enum_input in[XF_ENUM_MAX_INPUTS];
    int n = 0;
    const char *s = spec;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        const char *colon = memchr(s, ':', len);
        if (!colon || colon == s)
            return XF_FAIL(err, XF_ERR_PARSE, "input spec '%.*s' is not name:AxBx... or name:scalar",
                           (int)len, s);
        if (n == XF_ENUM_MAX_INPUTS)
            return XF_FAIL(err, XF_ERR_PARSE, "more than %d inputs in '%s'", XF_ENUM_MAX_INPUTS, spec);
        size_t nl = (size_t)(colon - s);
        if (nl >= XF_ENUM_NAME_LEN)
            return XF_FAIL(err, XF_ERR_PARSE, "input name '%.*s' is too long", (int)nl, s);
        if (!isalpha((unsigned char)s[0]) && s[0] != '_')
            return XF_FAIL(err, XF_ERR_PARSE, "input name '%.*s' must start with a letter", (int)nl, s);
        for (size_t i = 0; i < nl; i++)
            if (!isalnum((unsigned char)s[i]) && s[i] != '_')
                return XF_FAIL(err, XF_ERR_PARSE, "input name '%.*s' is not an identifier", (int)nl, s);
        memset(&in[n], 0, sizeof in[n]);
        memcpy(in[n].name, s, nl);
        for (int k = 0; k < n; k++)
            if (strcmp(in[k].name, in[n].name) == 0)
                return XF_FAIL(err, XF_ERR_PARSE, "input %s is listed twice", in[n].name);
        const char *d = colon + 1, *end = s + len;
        xf_shape sh = xf_shape_make(0, NULL);
        if (!((size_t)(end - d) == 6 && strncmp(d, "scalar", 6) == 0)) {
            while (d < end) {
                char *e;
                long v = isdigit((unsigned char)*d) ? strtol(d, &e, 10) : 0;
                if (v == 0) e = (char *)d;
                if (e == d || e > end || v < 1 || v > 4096 || sh.rank == XF_MAX_DIMS)
                    return XF_FAIL(err, XF_ERR_PARSE, "input %s: bad shape '%.*s' (want AxBx..., dims >= 1)",
                                   in[n].name, (int)(end - colon - 1), colon + 1);
                sh.dims[sh.rank++] = v;
                d = e;
                if (d < end && (*d++ != 'x' || d == end)) /* a separator, then a dim */
                    return XF_FAIL(err, XF_ERR_PARSE, "input %s: bad shape '%.*s' (want AxBx...)",
                                   in[n].name, (int)(end - colon - 1), colon + 1);
            }
            if (sh.rank == 0)
                return XF_FAIL(err, XF_ERR_PARSE, "input %s has no shape (use name:scalar for rank 0)",
                               in[n].name);
        }
        in[n++].shape = sh;
        s = comma ? comma + 1 : s + len;
    }
    if (n == 0) return XF_FAIL(err, XF_ERR_PARSE, "the input spec is empty");
    memcpy(c->inputs, in, sizeof in[0] * (size_t)n);
    c->n_inputs = n;
    return XF_OK;
}

xf_status xf_enum_inputs_format(const xf_enum_config *c, char *buf, size_t n, xf_error *err)
{
    size_t len = 0;
    if (n) buf[0] = 0;
    for (int i = 0; i < c->n_inputs; i++) {
        const xf_shape *s = &c->inputs[i].shape;
        char part[256];
        int k = snprintf(part, sizeof part, "%s%s:", i ? "," : "", c->inputs[i].name);
        if (s->rank == 0) k += snprintf(part + k, sizeof part - (size_t)k, "scalar");
        for (int d = 0; d < s->rank; d++)
            k += snprintf(part + k, sizeof part - (size_t)k, d ? "x%lld" : "%lld", (long long)s->dims[d]);
        if (len + (size_t)k + 1 > n)
            return XF_FAIL(err, XF_ERR_INVALID, "input spec does not fit in %zu bytes", n);
        memcpy(buf + len, part, (size_t)k + 1);
        len += (size_t)k;
    }
    return XF_OK;
}

/* -------------------------------------------------------------- validation */

xf_status xf_enum_config_validate(const xf_enum_config *c, xf_error *err)
{
    if (c->n_ops < 1 || !c->ops) return XF_FAIL(err, XF_ERR_INVALID, "enumerate: empty vocabulary");
    if (c->n_ops > XF_ENUM_MAX_VOCAB)
        return XF_FAIL(err, XF_ERR_INVALID, "enumerate: %d variants, at most %d", c->n_ops,
                       XF_ENUM_MAX_VOCAB);
    if (c->n_inputs < 1) return XF_FAIL(err, XF_ERR_INVALID, "enumerate: no inputs");
    if (c->max_ops < 1 || c->max_ops > XF_ENUM_MAX_OPS)
        return XF_FAIL(err, XF_ERR_INVALID, "enumerate: max_ops %d is outside 1..%d", c->max_ops,
                       XF_ENUM_MAX_OPS);
    if (c->max_outputs < 1 || c->max_outputs > XF_ENUM_MAX_OUTPUTS)
        return XF_FAIL(err, XF_ERR_INVALID, "enumerate: max_outputs %d is outside 1..%d",
                       c->max_outputs, XF_ENUM_MAX_OUTPUTS);
    if (c->max_dim < 1 || c->max_numel < 1 || c->max_numel > FP_MAX_NUMEL)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "enumerate: max_dim %d must be >= 1 and max_numel %lld in 1..%d", c->max_dim,
                       (long long)c->max_numel, FP_MAX_NUMEL);
    for (int i = 0; i < c->n_inputs; i++) {
        const xf_shape *s = &c->inputs[i].shape;
        for (int d = 0; d < s->rank; d++)
            if (s->dims[d] > c->max_dim)
                return XF_FAIL(err, XF_ERR_INVALID, "enumerate: input %s has dim %lld > max_dim %d",
                               c->inputs[i].name, (long long)s->dims[d], c->max_dim);
        if (xf_shape_numel(s) > c->max_numel)
            return XF_FAIL(err, XF_ERR_INVALID, "enumerate: input %s has more than max_numel %lld "
                           "elements", c->inputs[i].name, (long long)c->max_numel);
    }
    for (int i = 0; i < c->n_ops; i++) {
        const xf_enum_opvar *v = &c->ops[i];
        if ((int)v->op < 0 || v->op >= XF_OP_COUNT || !en_fp_op_supported(v->op))
            return XF_FAIL(err, XF_ERR_UNSUPPORTED, "enumerate: variant %d (%s) has no fingerprint "
                           "semantics", i, v->name);
        if (v->op == XF_OP_SPLIT && (v->params.n_split < 1 || v->params.n_split > NODE_OUTS))
            return XF_FAIL(err, XF_ERR_INVALID, "enumerate: %s: split into %d parts, at most %d",
                           v->name, v->params.n_split, NODE_OUTS);
    }
    return XF_OK;
}

uint64_t xf_enum_config_hash(const xf_enum_config *c)
{
    uint64_t h = en_fp_mix(0xC0F16u, 1); /* bump the second argument when semantics change */
    for (int i = 0; i < c->n_ops; i++) {
        h = en_fp_mix(h, (uint64_t)c->ops[i].op);
        h = xf_hash_bytes(h, &c->ops[i].params, sizeof c->ops[i].params);
        h = en_fp_mix(en_fp_mix(en_fp_mix(h, (uint64_t)c->ops[i].mode), (uint64_t)c->ops[i].rank),
                   (uint64_t)c->ops[i].broadcast);
        if (c->ops[i].in_ranks[0] || c->ops[i].in_ranks[1]) /* absent: the hash of older runs */
            h = en_fp_mix(en_fp_mix(h, (uint64_t)c->ops[i].in_ranks[0]), (uint64_t)c->ops[i].in_ranks[1]);
    }
    for (int i = 0; i < c->n_inputs; i++) {
        h = xf_hash_bytes(h, c->inputs[i].name, strlen(c->inputs[i].name));
        h = en_fp_mix(h, (uint64_t)c->inputs[i].shape.rank);
        for (int d = 0; d < c->inputs[i].shape.rank; d++)
            h = en_fp_mix(h, (uint64_t)c->inputs[i].shape.dims[d]);
    }
    h = en_fp_mix(h, (uint64_t)c->max_ops);
    h = en_fp_mix(h, (uint64_t)c->max_outputs);
    h = en_fp_mix(h, (uint64_t)c->max_dim);
    h = en_fp_mix(h, (uint64_t)c->max_numel);
    return en_fp_mix(h, c->seed);
}
