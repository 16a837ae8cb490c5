/*
 * gpt.c — a GPT-2-style decoder in the form HuggingFace's GPT2LMHeadModel
 * exports: int64 input_ids [B,S]; token and position embeddings gathered
 * and summed; pre-LN blocks (LayerNorm decomposed, epsilon 1e-5) whose
 * attention projects Q, K and V with one merged linear layer (c_attn,
 * H -> 3H) split three ways, applies the causal mask as
 * Where(tril, scores, lowest float), and whose feed-forward uses the tanh
 * approximation of GELU ("gelu_new": 0.5x(1 + tanh(sqrt(2/pi)(x +
 * 0.044715 x^3)))); a final LayerNorm and the LM head, a MatMul to
 * vocabulary logits [B,S,V] (untied from the embedding, so the weights
 * stay one copy each; gpt-tied: the embedding transposed, GPT-2's tied
 * head, the vocabulary's weights once in the file). It is the decoder among the zoo's
 * transformers: merged sibling MatMuls, a causal mask and a different
 * GELU are what ONNX Runtime's fusions see in GPT-like models.
 */
#include <stdlib.h>

#include "builder_internal.h"
#include "transformer_internal.h"

#define LN_EPSILON 1e-5f
#define MAX_POSITIONS 1024 /* GPT-2's position table; a longer --seq grows it */
#define EMBED_BOUND 0.02f

/* gelu_new as the exporter writes it: Mul(0.5, x), Pow(x, 3), Mul, Add,
 * Mul(sqrt(2/pi)), Tanh, Add(1), Mul. */
static int gelu_tanh(zb *b, int x, const char *name)
{
    char n[256];
    int half = zoo_scalar(b, ZB_SUB(n, name, "half"), 0.5f);
    int three = zoo_scalar(b, ZB_SUB(n, name, "three"), 3.0f);
    int coef = zoo_scalar(b, ZB_SUB(n, name, "coef"), 0.044715f);
    int root = zoo_scalar(b, ZB_SUB(n, name, "sqrt_2_over_pi"), 0.7978845608f);
    int one = zoo_scalar(b, ZB_SUB(n, name, "one"), 1.0f);
    int hx = zoo_binary(b, XF_OP_MUL, half, x, ZB_SUB(n, name, "mul_half"));
    int cube = zoo_binary(b, XF_OP_POW, x, three, ZB_SUB(n, name, "pow"));
    int c = zoo_binary(b, XF_OP_MUL, coef, cube, ZB_SUB(n, name, "mul_coef"));
    int inner = zoo_binary(b, XF_OP_ADD, x, c, ZB_SUB(n, name, "add"));
    inner = zoo_binary(b, XF_OP_MUL, root, inner, ZB_SUB(n, name, "mul_root"));
    int t = zoo_unary(b, XF_OP_TANH, inner, ZB_SUB(n, name, "tanh"));
    t = zoo_binary(b, XF_OP_ADD, one, t, ZB_SUB(n, name, "add_one"));
    return zoo_binary(b, XF_OP_MUL, hx, t, ZB_SUB(n, name, "mul"));
}

/* Causal self-attention with merged Q/K/V projection (attn.c_attn) and
 * output projection attn.c_proj. */
static int attention(zb *b, int x, const char *name, int64_t heads)
{
    if (b->st != XF_OK) return -1;
    int64_t hidden = zoo_shape(b, x)->dims[2];
    char n[256];
    int qkv = zoo_linear(b, x, ZB_SUB(n, name, "c_attn"), 3 * hidden);
    const int64_t sizes[3] = {hidden, hidden, hidden};
    int part[3];
    zoo_split(b, qkv, 2, 3, sizes, ZB_SUB(n, name, "split"), part);
    int q = zoo_to_heads(b, part[0], ZB_SUB(n, name, "query"), heads, 0);
    int k = zoo_to_heads(b, part[1], ZB_SUB(n, name, "key"), heads, 1);
    int v = zoo_to_heads(b, part[2], ZB_SUB(n, name, "value"), heads, 0);
    int ctx = zoo_attend(b, q, k, v, -1, 1, name);
    return zoo_linear(b, ctx, ZB_SUB(n, name, "c_proj"), hidden);
}

static int block(zb *b, int x, int index, int64_t hidden, int64_t heads)
{
    char layer[64], m[128], n[192];
    snprintf(layer, sizeof layer, "h.%d", index);
    int y = zoo_layernorm_decomposed(b, x, ZB_SUB(n, layer, "ln_1"), LN_EPSILON);
    y = attention(b, y, ZB_SUB(n, layer, "attn"), heads);
    x = zoo_binary(b, XF_OP_ADD, y, x, ZB_SUB(n, layer, "add"));
    y = zoo_layernorm_decomposed(b, x, ZB_SUB(n, layer, "ln_2"), LN_EPSILON);
    ZB_SUB(m, layer, "mlp");
    y = zoo_linear(b, y, ZB_SUB(n, m, "c_fc"), 4 * hidden);
    y = gelu_tanh(b, y, ZB_SUB(n, m, "act"));
    y = zoo_linear(b, y, ZB_SUB(n, m, "c_proj"), hidden);
    return zoo_binary(b, XF_OP_ADD, x, y, ZB_SUB(n, layer, "add_1"));
}

/* The decoder; tied: its LM head is the token embedding transposed (one
 * copy of the vocabulary's weights, as GPT-2 has them). */
static xf_status build(const xf_zoo_config *c, int tied, xf_graph *g, xf_error *err)
{
    int64_t batch = c->v[XF_ZOO_BATCH], seq = c->v[XF_ZOO_SEQ], hidden = c->v[XF_ZOO_HIDDEN];
    int64_t heads = c->v[XF_ZOO_HEADS], vocab = c->v[XF_ZOO_VOCAB];
    zb b;
    zoo_init(&b, g, "gpt", c->seed, err);
    if (hidden % heads != 0)
        zoo_fail(&b, XF_ERR_INVALID, "--hidden %lld is not a multiple of --heads %lld",
                (long long)hidden, (long long)heads);
    int64_t in_dims[2] = {batch, seq};
    int ids = zoo_input(&b, "input_ids", XF_I64, 2, in_dims);

    int64_t wte_dims[2] = {vocab, hidden};
    int wte = zoo_param(&b, "wte.weight", 2, wte_dims, EMBED_BOUND);
    int x = zoo_binary(&b, XF_OP_GATHER, wte, ids, "wte");
    int pos = zoo_constant_ids(&b, "position_ids", seq, 1);
    pos = zoo_embedding(&b, "wpe", pos, seq > MAX_POSITIONS ? seq : MAX_POSITIONS, hidden,
                       EMBED_BOUND);
    x = zoo_binary(&b, XF_OP_ADD, x, pos, "embeddings.add");

    for (int i = 0; i < c->v[XF_ZOO_LAYERS]; i++) x = block(&b, x, i, hidden, heads);
    x = zoo_layernorm_decomposed(&b, x, "ln_f", LN_EPSILON);
    int64_t head_dims[2] = {hidden, vocab};
    int head;
    if (tied) {
        xf_params t = xf_params_default();
        t.n_axes = 2;
        t.axes[0] = 1;
        head = zoo_node(&b, XF_OP_TRANSPOSE, &t, &wte, 1, "lm_head.transpose");
    } else {
        head = zoo_param(&b, "lm_head.weight", 2, head_dims, EMBED_BOUND);
    }
    x = zoo_binary(&b, XF_OP_MATMUL, x, head, "lm_head");
    zoo_output(&b, x, "logits");
    return zoo_finish(&b);
}

xf_status zoo_build_gpt(const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    return build(c, 0, g, err);
}

xf_status zoo_build_gpt_tied(const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    return build(c, 1, g, err);
}
