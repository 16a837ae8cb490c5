/*
 * bert.c — a BERT encoder in the form HuggingFace's BertModel exports
 * (compare ../shared/models/bert_small): int64 input_ids and
 * attention_mask [B,S]; word, position and token-type embeddings gathered
 * and summed; LayerNorm decomposed into elementary ops (epsilon 1e-12);
 * the mask turned additive as (1 - float(mask[:,None,None,:])) * -10000;
 * post-LN blocks of self-attention and a GELU feed-forward of width 4H;
 * outputs last_hidden_state [B,S,H] and pooled = tanh(dense(token 0)) [B,H].
 * Position and token-type ids are int64 constants (arange and zeros), as
 * the exporter traces them.
 */
#include <stdlib.h>

#include "builder_internal.h"
#include "transformer_internal.h"

#define LN_EPSILON 1e-12f
#define MAX_POSITIONS 512 /* BERT's position table; a longer --seq grows it */
#define EMBED_BOUND 0.05f

/* attention_mask [B,S] int64 -> additive float mask [B,1,1,S]. */
static int additive_mask(zb *b, int mask)
{
    xf_params u = xf_params_default();
    u.n_axes = 1;
    u.axes[0] = 1;
    int m = zoo_node(b, XF_OP_UNSQUEEZE, &u, &mask, 1, "extended_attention_mask.unsqueeze");
    u.axes[0] = 2;
    m = zoo_node(b, XF_OP_UNSQUEEZE, &u, &m, 1, "extended_attention_mask.unsqueeze_1");
    xf_params cast = xf_params_default();
    cast.to = XF_F32;
    m = zoo_node(b, XF_OP_CAST, &cast, &m, 1, "extended_attention_mask.cast");
    int one = zoo_scalar(b, "extended_attention_mask.one", 1.0f);
    m = zoo_binary(b, XF_OP_SUB, one, m, "extended_attention_mask.sub");
    int big = zoo_scalar(b, "extended_attention_mask.min_value", -10000.0f);
    return zoo_binary(b, XF_OP_MUL, m, big, "extended_attention_mask");
}

static int encoder_layer(zb *b, int x, int mask, int index, int64_t hidden, int64_t heads)
{
    char layer[64], m[128], n[192];
    snprintf(layer, sizeof layer, "encoder.layer.%d", index);
    int ctx = zoo_self_attention(b, x, mask, ZB_SUB(m, layer, "attention.self"), heads);
    ZB_SUB(m, layer, "attention.output");
    int y = zoo_linear(b, ctx, ZB_SUB(n, m, "dense"), hidden);
    y = zoo_binary(b, XF_OP_ADD, x, y, ZB_SUB(n, m, "add"));
    x = zoo_layernorm_decomposed(b, y, ZB_SUB(n, m, "LayerNorm"), LN_EPSILON);
    y = zoo_linear(b, x, ZB_SUB(n, layer, "intermediate.dense"), 4 * hidden);
    y = zoo_gelu_erf(b, y, ZB_SUB(n, layer, "intermediate.gelu"));
    ZB_SUB(m, layer, "output");
    y = zoo_linear(b, y, ZB_SUB(n, m, "dense"), hidden);
    y = zoo_binary(b, XF_OP_ADD, x, y, ZB_SUB(n, m, "add"));
    return zoo_layernorm_decomposed(b, y, ZB_SUB(n, m, "LayerNorm"), LN_EPSILON);
}

xf_status zoo_build_bert(const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    int64_t batch = c->v[XF_ZOO_BATCH], seq = c->v[XF_ZOO_SEQ], hidden = c->v[XF_ZOO_HIDDEN];
    int64_t heads = c->v[XF_ZOO_HEADS];
    zb b;
    zoo_init(&b, g, "bert", c->seed, err);
    if (hidden % heads != 0)
        zoo_fail(&b, XF_ERR_INVALID, "--hidden %lld is not a multiple of --heads %lld",
                (long long)hidden, (long long)heads);
    int64_t in_dims[2] = {batch, seq};
    int ids = zoo_input(&b, "input_ids", XF_I64, 2, in_dims);
    int mask = zoo_input(&b, "attention_mask", XF_I64, 2, in_dims);

    int x = zoo_embedding(&b, "embeddings.word_embeddings", ids, c->v[XF_ZOO_VOCAB], hidden,
                         EMBED_BOUND);
    int pos = zoo_constant_ids(&b, "embeddings.position_ids", seq, 1);
    pos = zoo_embedding(&b, "embeddings.position_embeddings", pos,
                       seq > MAX_POSITIONS ? seq : MAX_POSITIONS, hidden, EMBED_BOUND);
    x = zoo_binary(&b, XF_OP_ADD, x, pos, "embeddings.add");
    int typ = zoo_constant_ids(&b, "embeddings.token_type_ids", seq, 0);
    typ = zoo_embedding(&b, "embeddings.token_type_embeddings", typ, 2, hidden, EMBED_BOUND);
    x = zoo_binary(&b, XF_OP_ADD, x, typ, "embeddings.add_1");
    x = zoo_layernorm_decomposed(&b, x, "embeddings.LayerNorm", LN_EPSILON);

    int ext_mask = additive_mask(&b, mask);
    for (int i = 0; i < c->v[XF_ZOO_LAYERS]; i++)
        x = encoder_layer(&b, x, ext_mask, i, hidden, heads);

    const int64_t zero = 0;
    xf_params first = xf_params_default();
    first.axis = 1;
    const int in[2] = {x, zoo_ints(&b, "pooler.first_token_index", 0, NULL, &zero)};
    int pooled = zoo_node(&b, XF_OP_GATHER, &first, in, 2, "pooler.first_token");
    pooled = zoo_gemm(&b, pooled, "pooler.dense", hidden);
    pooled = zoo_unary(&b, XF_OP_TANH, pooled, "pooler.activation");
    zoo_output(&b, x, "last_hidden_state");
    zoo_output(&b, pooled, "pooled");
    return zoo_finish(&b);
}
