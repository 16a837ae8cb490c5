/*
 * vit.c — a Vision Transformer in torchvision's VisionTransformer layout
 * (compare ../shared/models/vit_tiny): patch embedding as a conv with
 * kernel = stride = --patch, reshaped to [B,H,N] and transposed to tokens
 * [B,N,H]; the class token expanded over the batch and concatenated in
 * front; the position embedding added; pre-LN encoder blocks (one
 * LayerNormalization node each, epsilon 1e-6; the exporter writes opset 17
 * for it) with self-attention and an MLP of width 4H with GELU; a final
 * LayerNorm, token 0 gathered and the classifier head Gemm.
 */
#include <stdio.h>

#include "builder_internal.h"
#include "transformer_internal.h"

#define LN_EPSILON 1e-6f
#define EMBED_BOUND 0.02f

/* [B,3,I,I] -> class token + patch tokens + position embedding [B,N+1,H]. */
static int embed(zb *b, int image, int64_t hidden, int64_t patch)
{
    int x = zoo_conv(b, image, "conv_proj", hidden, (int)patch, (int)patch, 0, 1);
    if (b->st != XF_OK) return -1;
    const xf_shape *s = zoo_shape(b, x);
    int64_t batch = s->dims[0], tokens = s->dims[2] * s->dims[3];
    xf_params r = xf_params_default();
    r.n_shape = 3;
    r.shape[0] = batch;
    r.shape[1] = hidden;
    r.shape[2] = tokens;
    x = zoo_node(b, XF_OP_RESHAPE, &r, &x, 1, "conv_proj.reshape");
    xf_params t = xf_params_default();
    t.n_axes = 3;
    t.axes[0] = 0;
    t.axes[1] = 2;
    t.axes[2] = 1;
    x = zoo_node(b, XF_OP_TRANSPOSE, &t, &x, 1, "conv_proj.transpose");
    int64_t cls_dims[3] = {1, 1, hidden};
    int cls = zoo_param(b, "class_token", 3, cls_dims, EMBED_BOUND);
    xf_params e = xf_params_default();
    e.n_shape = 3;
    e.shape[0] = batch;
    e.shape[1] = 1;
    e.shape[2] = hidden;
    cls = zoo_node(b, XF_OP_EXPAND, &e, &cls, 1, "class_token.expand");
    xf_params cat = xf_params_default();
    cat.axis = 1;
    const int in[2] = {cls, x};
    x = zoo_node(b, XF_OP_CONCAT, &cat, in, 2, "tokens");
    int64_t pos_dims[3] = {1, tokens + 1, hidden};
    int pos = zoo_param(b, "encoder.pos_embedding", 3, pos_dims, EMBED_BOUND);
    return zoo_binary(b, XF_OP_ADD, x, pos, "encoder.add");
}

static int encoder_block(zb *b, int x, int index, int64_t hidden, int64_t heads)
{
    char layer[64], m[128], n[192];
    snprintf(layer, sizeof layer, "encoder.layers.encoder_layer_%d", index);
    int y = zoo_layernorm(b, x, ZB_SUB(n, layer, "ln_1"), LN_EPSILON);
    y = zoo_self_attention(b, y, -1, ZB_SUB(m, layer, "self_attention"), heads);
    y = zoo_linear(b, y, ZB_SUB(n, m, "out_proj"), hidden);
    x = zoo_binary(b, XF_OP_ADD, x, y, ZB_SUB(n, layer, "add"));
    y = zoo_layernorm(b, x, ZB_SUB(n, layer, "ln_2"), LN_EPSILON);
    ZB_SUB(m, layer, "mlp");
    y = zoo_linear(b, y, ZB_SUB(n, m, "0"), 4 * hidden);
    y = zoo_unary(b, XF_OP_GELU, y, ZB_SUB(n, m, "1"));
    y = zoo_linear(b, y, ZB_SUB(n, m, "3"), hidden);
    return zoo_binary(b, XF_OP_ADD, x, y, ZB_SUB(n, layer, "add_1"));
}

xf_status zoo_build_vit(const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    int64_t image = c->v[XF_ZOO_IMAGE], patch = c->v[XF_ZOO_PATCH], hidden = c->v[XF_ZOO_HIDDEN];
    int64_t heads = c->v[XF_ZOO_HEADS];
    zb b;
    zoo_init(&b, g, "vit", c->seed, err);
    if (patch > image || image % patch != 0)
        zoo_fail(&b, XF_ERR_INVALID, "--image %lld is not a multiple of --patch %lld",
                (long long)image, (long long)patch);
    if (hidden % heads != 0)
        zoo_fail(&b, XF_ERR_INVALID, "--hidden %lld is not a multiple of --heads %lld",
                (long long)hidden, (long long)heads);
    int64_t in_dims[4] = {c->v[XF_ZOO_BATCH], 3, image, image};
    int x = zoo_input(&b, "input", XF_F32, 4, in_dims);
    x = embed(&b, x, hidden, patch);
    for (int i = 0; i < c->v[XF_ZOO_LAYERS]; i++) x = encoder_block(&b, x, i, hidden, heads);
    x = zoo_layernorm(&b, x, "encoder.ln", LN_EPSILON);
    const int64_t zero = 0;
    xf_params first = xf_params_default();
    first.axis = 1;
    const int in[2] = {x, zoo_ints(&b, "class_token_index", 0, NULL, &zero)};
    x = zoo_node(&b, XF_OP_GATHER, &first, in, 2, "class_token_output");
    x = zoo_gemm(&b, x, "heads.head", c->v[XF_ZOO_CLASSES]);
    zoo_output(&b, x, "logits");
    return zoo_finish(&b);
}
