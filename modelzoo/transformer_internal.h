/*
 * transformer_internal.h — transformer building blocks shared by bert.c, vit.c and gpt.c,
 * in the form PyTorch's exporter writes them: nn.Linear on 3-D inputs as
 * MatMul + Add, LayerNorm either decomposed into ReduceMean/Sub/Pow/
 * ReduceMean/Add/Sqrt/Div/Mul/Add (HuggingFace exports) or as one
 * LayerNormalization node, GELU decomposed as x*0.5*(1+Erf(x/sqrt 2)), and
 * multi-head self-attention with Reshape/Transpose to heads, scaled
 * scores, an optional additive mask and Softmax over the last axis.
 * All follow builder_internal.h's sticky-error convention.
 */
#ifndef XF_MODELZOO_TRANSFORMER_INTERNAL_H
#define XF_MODELZOO_TRANSFORMER_INTERNAL_H

#include "builder_internal.h"

/* Embedding table "<module>.weight" [rows,hidden] (uniform in
 * [-bound, bound)) gathered by `ids` as node "<module>". */
int zoo_embedding(zb *b, const char *module, int ids, int64_t rows, int64_t hidden, float bound);
/* int64 constant [1,seq] named `name`: 0,1,2,... when `arange`, else zeros
 * (position and token-type ids as the exporter traces them). */
int zoo_constant_ids(zb *b, const char *name, int64_t seq, int arange);
/* x [..., in] @ "<name>.weight" [in, out] + "<name>.bias" [out]; nodes
 * "<name>.matmul" and "<name>.add". */
int zoo_linear(zb *b, int x, const char *name, int64_t out);
/* LayerNorm over the last axis, decomposed; "<name>.weight"/".bias". */
int zoo_layernorm_decomposed(zb *b, int x, const char *name, float epsilon);
/* One LayerNormalization node (axis -1); "<name>.weight"/".bias". */
int zoo_layernorm(zb *b, int x, const char *name, float epsilon);
/* GELU decomposed into Div, Erf, Add, Mul, Mul named "<name>.*". */
int zoo_gelu_erf(zb *b, int x, const char *name);
/* x [B,S,H] -> [B,heads,S,d] (or [B,heads,d,S] for keys, already
 * transposed for the score MatMul); nodes "<name>.reshape" and
 * "<name>.transpose". */
int zoo_to_heads(zb *b, int x, const char *name, int64_t heads, int keys);
/* Scaled dot-product attention over heads: q, v [B,heads,S,d], k
 * [B,heads,d,S]; scores divided by sqrt(d), then (causal) the causal mask
 * applied as Where(lower-triangular bool, scores, lowest float), then
 * (mask >= 0) the additive mask added; softmax, context, heads merged back
 * to [B,S,H] (nodes "<name>.scores" ... "<name>.context_reshape"). */
int zoo_attend(zb *b, int q, int k, int v, int mask, int causal, const char *name);
/* Self-attention of x [B,S,H] with `heads` heads: projections
 * "<name>.query", ".key", ".value" (zoo_linear), `mask` (-1: none) an
 * additive [B,1,1,S] mask added to the scaled scores. Returns the context
 * [B,S,H] before the output projection, which callers name themselves. */
int zoo_self_attention(zb *b, int x, int mask, const char *name, int64_t heads);

#endif /* XF_MODELZOO_TRANSFORMER_INTERNAL_H */
