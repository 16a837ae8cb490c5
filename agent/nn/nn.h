/*
 * nn.h — the neural-network toolkit of the agent (agent/nn/, used by agent/rl/):
 * a named parameter store, layers as forward/backward function pairs over
 * plain float buffers (llm.c style), losses, Adam, gradient clipping,
 * versioned checkpoints and a finite-difference gradient checker. The GNN
 * encoder, the PPO heads and the MDN-RNN world model are built from these.
 *
 * Conventions (all layers):
 *  - buffers are batch-major, row-major: a [B,C] buffer holds row b at
 *    b*C; the caller owns every buffer (inputs, outputs, caches, gradients);
 *  - `_forward(out, cache, in, params, dims)` writes (=) its outputs and
 *    caches; `_backward(dinput, dparams, dout, ...)` ACCUMULATES (+=) into
 *    the input and parameter gradients, so gradients of a value used twice
 *    add up and the caller zeroes them (xf_nn_params_zero_grad) once per
 *    step; any gradient pointer may be NULL to skip that gradient;
 *  - matmuls go through oneDNN's dnnl_sgemm (single-threaded below
 *    XF_NN_GEMM_THREADED_MACS multiply-adds, OpenMP's thread count above);
 *    everything else is plain C; results are deterministic for a given
 *    input, seed and thread count;
 *  - nothing prints; only the store, caches and checkpoints can fail, and
 *    they return an xf_status with a message naming the tensor or file.
 */
#ifndef XF_AGENT_NN_H
#define XF_AGENT_NN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ir.h"

/* ---------------------------------------------------------- parameter store */

#define XF_NN_MAX_NAME 64 /* tensor names, including the NUL */
#define XF_NN_MAX_RANK 4

typedef struct xf_nn_tensor_info {
    char name[XF_NN_MAX_NAME];
    int rank;
    int dims[XF_NN_MAX_RANK];
    size_t offset; /* into value/grad/m/v of the store */
    size_t size;   /* product of dims */
} xf_nn_tensor_info;

/* Named parameter tensors; each tensor's value, gradient and Adam moments
 * live at the same offset of four contiguous float buffers (so Adam and
 * clipping run over the whole store as one vector). Tensors are identified
 * by the id xf_nn_params_add returns (0, 1, ... in order of addition).
 * Pointers from xf_nn_params_value/grad stay valid until the next add. */
typedef struct xf_nn_params {
    int n, cap;
    xf_nn_tensor_info *t;
    size_t total, total_cap; /* floats used / allocated per buffer */
    float *value, *grad, *m, *v;
} xf_nn_params;

void xf_nn_params_init(xf_nn_params *p);
void xf_nn_params_free(xf_nn_params *p); /* back to the init state */
/* Adds a zero-filled tensor (value, grad and moments). XF_ERR_INVALID for a
 * duplicate or too long name, a rank outside 1..XF_NN_MAX_RANK or a dim < 1.
 * *id (may be NULL) gets the tensor's id. */
xf_status xf_nn_params_add(xf_nn_params *p, const char *name, int rank, const int *dims, int *id,
                           xf_error *err);
int xf_nn_params_find(const xf_nn_params *p, const char *name); /* id, or -1 */
int xf_nn_params_count(const xf_nn_params *p);                  /* tensors */
size_t xf_nn_params_total(const xf_nn_params *p);               /* floats in all tensors */
const xf_nn_tensor_info *xf_nn_params_info(const xf_nn_params *p, int id);
float *xf_nn_params_value(const xf_nn_params *p, int id);
float *xf_nn_params_grad(const xf_nn_params *p, int id);
size_t xf_nn_params_size(const xf_nn_params *p, int id);
void xf_nn_params_zero_grad(xf_nn_params *p);
/* Copies values (not gradients or moments) from src into dst; both must
 * hold the same names and shapes in the same order (XF_ERR_MISMATCH naming
 * the first differing tensor otherwise). For frozen copies of a network. */
xf_status xf_nn_params_copy_values(xf_nn_params *dst, const xf_nn_params *src, xf_error *err);

/* Deterministic initialisation from an xf_rng (same seed, same values). */
void xf_nn_init_uniform(float *w, size_t n, float lo, float hi, xf_rng *rng);
/* Glorot/Xavier uniform for a [fan_in, fan_out] matrix:
 * U(-sqrt(6/(fan_in+fan_out)), +sqrt(6/(fan_in+fan_out))), fan_in*fan_out values. */
void xf_nn_init_xavier(float *w, int fan_in, int fan_out, xf_rng *rng);
void xf_nn_init_const(float *w, size_t n, float value);

/* -------------------------------------------------------------- checkpoints */

/* Binary checkpoint stream (little-endian):
 *   "XFNNCKPT" | u32 version (XF_NN_CKPT_VERSION) | u32 flags (bit 0: Adam
 *   moments present) | u32 tensor count |
 *   per tensor: u32 name length, name bytes, u32 rank, u32 dims[rank],
 *               f32 value[size] (then f32 m[size], f32 v[size] with moments) |
 *   u64 FNV-1a hash of everything before it.
 * Saved in store order; it may be embedded in a larger file (the stream is
 * self-delimiting). `what` names the file in messages (may be NULL). */
#define XF_NN_CKPT_VERSION 1u

xf_status xf_nn_params_save(const xf_nn_params *p, FILE *f, int with_moments, const char *what,
                            xf_error *err);
/* Loads into a store that already holds the same tensors (same names and
 * shapes, same order) — build the network first, then load. A count, name
 * or shape mismatch fails with XF_ERR_MISMATCH naming the tensor; a bad
 * magic, version, truncated stream or hash with XF_ERR_PARSE / XF_ERR_IO.
 * Nothing is changed unless the whole stream is good. Moments are loaded
 * when present, zeroed otherwise. */
xf_status xf_nn_params_load(xf_nn_params *p, FILE *f, const char *what, xf_error *err);

/* ------------------------------------------------------------------- linear */

/* Matrix products with fewer multiply-adds run on one thread. */
#define XF_NN_GEMM_THREADED_MACS (1 << 24)

/* out[B,O] = in[B,I] · w[I,O] + b[O] (b may be NULL: no bias). */
void xf_nn_linear_forward(float *out, const float *in, const float *w, const float *b, int B,
                          int I, int O);
/* din[B,I] += dout·wᵀ, dw[I,O] += inᵀ·dout, db[O] += Σ_rows dout. */
void xf_nn_linear_backward(float *din, float *dw, float *db, const float *dout, const float *in,
                           const float *w, int B, int I, int O);

/* A linear layer's tensors in a store: "<name>.w" [in,out] (Xavier) and
 * "<name>.b" [out] (zeros; b = -1 when added without bias). */
typedef struct xf_nn_linear {
    int w, b;
    int in, out;
} xf_nn_linear;

xf_status xf_nn_linear_add(xf_nn_linear *l, xf_nn_params *p, const char *name, int in, int out,
                           int bias, xf_rng *rng, xf_error *err);
/* The same two functions on a store's tensors (gradients go to p's grad). */
void xf_nn_linear_apply(const xf_nn_linear *l, const xf_nn_params *p, float *out, const float *in,
                        int B);
void xf_nn_linear_apply_backward(const xf_nn_linear *l, const xf_nn_params *p, float *din,
                                 const float *dout, const float *in, int B);

/* -------------------------------------------------------------- activations */

typedef enum xf_nn_act {
    XF_NN_ACT_NONE = 0, /* identity */
    XF_NN_ACT_RELU = 1,
    XF_NN_ACT_TANH = 2,
    XF_NN_ACT_SIGMOID = 3
} xf_nn_act;

const char *xf_nn_act_name(xf_nn_act a); /* "none", "relu", "tanh", "sigmoid" */

/* Elementwise over n values; out may equal in. The backward passes take the
 * forward OUTPUT (relu: out > 0, tanh: 1 - out², sigmoid: out(1 - out)) and
 * accumulate din += dout · f'(.). */
void xf_nn_act_forward(xf_nn_act a, float *out, const float *in, size_t n);
void xf_nn_act_backward(xf_nn_act a, float *din, const float *dout, const float *out, size_t n);
void xf_nn_relu_forward(float *out, const float *in, size_t n);
void xf_nn_relu_backward(float *din, const float *dout, const float *out, size_t n);
void xf_nn_tanh_forward(float *out, const float *in, size_t n);
void xf_nn_tanh_backward(float *din, const float *dout, const float *out, size_t n);
void xf_nn_sigmoid_forward(float *out, const float *in, size_t n);
void xf_nn_sigmoid_backward(float *din, const float *dout, const float *out, size_t n);

/* --------------------------------------------------------------- layer norm */

#define XF_NN_LN_EPS 1e-5f

/* Per row of [B,C]: out = (in - mean) · rstd · gamma + beta, with
 * rstd = 1/sqrt(var + XF_NN_LN_EPS) (biased variance). mean[B] and rstd[B]
 * are the caches the backward needs. */
void xf_nn_layernorm_forward(float *out, float *mean, float *rstd, const float *in,
                             const float *gamma, const float *beta, int B, int C);
void xf_nn_layernorm_backward(float *din, float *dgamma, float *dbeta, const float *dout,
                              const float *in, const float *mean, const float *rstd,
                              const float *gamma, int B, int C);

/* "<name>.gamma" [dim] (ones) and "<name>.beta" [dim] (zeros). */
typedef struct xf_nn_layernorm {
    int gamma, beta;
    int dim;
} xf_nn_layernorm;

xf_status xf_nn_layernorm_add(xf_nn_layernorm *l, xf_nn_params *p, const char *name, int dim,
                              xf_error *err);

/* -------------------------------------------------------- softmax, policies */

/* Softmax / log-softmax over each row of [B,C] logits. mask (NULL: all
 * allowed) is [B,C] with 1 = allowed, 0 = masked: a masked entry gets
 * probability exactly 0 and log-probability -INFINITY, and receives zero
 * gradient; dprobs/dlogp of masked entries are ignored, so a -inf never
 * turns into a NaN in a backward. A row with nothing allowed gives all-zero
 * probabilities (log-probs -inf) and zero gradient. */
void xf_nn_softmax_forward(float *probs, const float *logits, const uint8_t *mask, int B, int C);
/* dlogits += probs ⊙ (dprobs − Σ_j probs_j dprobs_j), per row. */
void xf_nn_softmax_backward(float *dlogits, const float *dprobs, const float *probs, int B, int C);
void xf_nn_log_softmax_forward(float *logp, const float *logits, const uint8_t *mask, int B,
                               int C);
/* dlogits += dlogp − exp(logp) Σ_j dlogp_j over allowed entries (masked: 0). */
void xf_nn_log_softmax_backward(float *dlogits, const float *dlogp, const float *logp, int B,
                                int C);

/* Categorical-policy helpers over log-probs [B,C] (from log_softmax; -inf
 * entries are masked and contribute nothing):
 * cross-entropy / negative log-likelihood per row: loss[b] = -logp[b, target[b]]. */
void xf_nn_cross_entropy_forward(float *loss, const float *logp, const int *target, int B, int C);
/* dlogp[b, target[b]] -= dloss[b]. */
void xf_nn_cross_entropy_backward(float *dlogp, const float *dloss, const int *target, int B,
                                  int C);
/* Entropy per row: ent[b] = -Σ_j p_j logp_j (p = exp(logp), masked terms 0). */
void xf_nn_entropy_forward(float *ent, const float *logp, int B, int C);
/* dlogp_j += -dent · p_j (logp_j + 1) on allowed entries. */
void xf_nn_entropy_backward(float *dlogp, const float *dent, const float *logp, int B, int C);
/* One draw from the categorical distribution of a probability row of C
 * entries (zeros never drawn); the last non-zero entry when rounding leaves
 * the draw past the end; -1 when all are zero. */
int xf_nn_categorical_sample(const float *probs, int C, xf_rng *rng);
int xf_nn_argmax(const float *x, const uint8_t *mask, int C); /* -1 when all masked */

/* ------------------------------------------------------- MSE, binary CE */

/* mean over n of (pred - target)², accumulated in double. */
float xf_nn_mse_forward(const float *pred, const float *target, size_t n);
/* dpred += dloss · 2 (pred - target) / n. */
void xf_nn_mse_backward(float *dpred, float dloss, const float *pred, const float *target,
                        size_t n);
/* Binary cross-entropy on logits (done flags, xfer-mask prediction): mean
 * over n of softplus(x) − t·x = −[t log σ(x) + (1−t) log(1−σ(x))], stable
 * for large |x|; targets in [0,1]. */
float xf_nn_bce_logits_forward(const float *logits, const float *target, size_t n);
/* dlogits += dloss · (σ(x) − t) / n. */
void xf_nn_bce_logits_backward(float *dlogits, float dloss, const float *logits,
                               const float *target, size_t n);

/* ---------------------------------------------------------------- LSTM cell */

/* One LSTM step over a batch. Gate pre-activations
 *   z[B,4H] = x[B,I]·wx[I,4H] + h_prev[B,H]·wh[H,4H] + b[4H]
 * in column blocks i | f | g | o (each H wide); i, f, o = sigmoid, g = tanh;
 *   c = f ⊙ c_prev + i ⊙ g,   h = o ⊙ tanh(c).
 * The cache keeps the activated gates and tanh(c) of one step, plus a
 * scratch block for the backward; a sequence uses one cache per step (the
 * caller's loop, also over x/h/c buffers it keeps for the backward). */
typedef struct xf_nn_lstm_cache {
    int cap_rows, hidden;
    float *gates;  /* [rows, 4H] activated i | f | g | o */
    float *tanh_c; /* [rows, H] */
    float *dz;     /* [rows, 4H] backward scratch */
} xf_nn_lstm_cache;

void xf_nn_lstm_cache_init(xf_nn_lstm_cache *c);
/* Room for `rows` rows of hidden size H (keeps a larger allocation). */
xf_status xf_nn_lstm_cache_reserve(xf_nn_lstm_cache *c, int rows, int H, xf_error *err);
void xf_nn_lstm_cache_free(xf_nn_lstm_cache *c);

void xf_nn_lstm_forward(float *h, float *c, xf_nn_lstm_cache *cache, const float *x,
                        const float *h_prev, const float *c_prev, const float *wx, const float *wh,
                        const float *b, int B, int I, int H);
/* Given dh[B,H] and dc[B,H] (dc may be NULL: no gradient arrives through the
 * next cell state) accumulates into dx, dh_prev, dc_prev, dwx, dwh, db (any
 * may be NULL). Uses cache->dz as scratch. */
void xf_nn_lstm_backward(float *dx, float *dh_prev, float *dc_prev, float *dwx, float *dwh,
                         float *db, const float *dh, const float *dc, xf_nn_lstm_cache *cache,
                         const float *x, const float *h_prev, const float *c_prev,
                         const float *wx, const float *wh, int B, int I, int H);

/* "<name>.wx" [I,4H], "<name>.wh" [H,4H] (Xavier) and "<name>.b" [4H]
 * (zeros, forget-gate block 1). */
typedef struct xf_nn_lstm {
    int wx, wh, b;
    int in, hidden;
} xf_nn_lstm;

xf_status xf_nn_lstm_add(xf_nn_lstm *l, xf_nn_params *p, const char *name, int in, int hidden,
                         xf_rng *rng, xf_error *err);

/* ----------------------------------------------------- mixture density head */

/* A diagonal Gaussian mixture with K components over D dimensions, given
 * per row as raw parameters [K logits | K·D means | K·D log-sigmas] (means
 * and log-sigmas component-major: entry k·D + d). Log-sigmas are clamped to
 * [XF_NN_MDN_LOGSIG_MIN, XF_NN_MDN_LOGSIG_MAX] (zero gradient outside). */
#define XF_NN_MDN_LOGSIG_MIN -7.0f
#define XF_NN_MDN_LOGSIG_MAX 7.0f

static inline int xf_nn_mdn_width(int K, int D) { return K + 2 * K * D; }

/* nll[b] = -log Σ_k π_k Π_d N(target[b,d]; μ_kd, σ_kd), π = softmax(logits),
 * computed with logsumexp. post[B,K] (cache) gets each component's
 * posterior responsibility. */
void xf_nn_mdn_forward(float *nll, float *post, const float *raw, const float *target, int B,
                       int K, int D);
/* draw[B, width] += dnll[b] · ∂nll[b]/∂raw: logits π_k − post_k, means
 * −post_k (y−μ)/σ², log-sigmas post_k (1 − ((y−μ)/σ)²). */
void xf_nn_mdn_backward(float *draw, const float *dnll, const float *post, const float *raw,
                        const float *target, int B, int K, int D);
/* One sample per row into out[B,D] at temperature tau (World Models): the
 * component is drawn from softmax(logits / tau), then each dimension from
 * N(μ, σ·sqrt(tau)). tau <= 0 is the limit: the most likely component's
 * mean, no noise. */
void xf_nn_mdn_sample(float *out, const float *raw, int B, int K, int D, float tau, xf_rng *rng);

/* ------------------------------------------------------ optimiser, clipping */

typedef struct xf_nn_adam {
    float lr, beta1, beta2, eps;
    float weight_decay; /* decoupled (AdamW): value -= lr · wd · value; 0: none */
    int64_t step;       /* updates done; bias correction uses it */
} xf_nn_adam;

xf_nn_adam xf_nn_adam_default(float lr); /* β1 0.9, β2 0.999, ε 1e-8, wd 0, step 0 */
/* One update of every tensor in p from its gradient (gradients untouched). */
void xf_nn_adam_step(xf_nn_adam *opt, xf_nn_params *p);
/* Global L2 norm of all gradients (double accumulation); when it exceeds
 * max_norm > 0 every gradient is scaled by max_norm / norm. Returns the norm
 * before clipping. */
float xf_nn_clip_grad_norm(xf_nn_params *p, float max_norm);

/* --------------------------------------------------------------------- MLP */

#define XF_NN_MLP_MAX_LAYERS 8

/* A stack of linear layers "<name>.l0", "<name>.l1", ...: dims[0] inputs,
 * dims[n_layers] outputs; every layer but the last is followed by
 * `hidden`, the last by `output` (XF_NN_ACT_NONE for raw outputs). */
typedef struct xf_nn_mlp {
    int n_layers;
    int dims[XF_NN_MLP_MAX_LAYERS + 1];
    xf_nn_linear layer[XF_NN_MLP_MAX_LAYERS];
    xf_nn_act hidden, output;
} xf_nn_mlp;

xf_status xf_nn_mlp_add(xf_nn_mlp *m, xf_nn_params *p, const char *name, int n_layers,
                        const int *dims, xf_nn_act hidden, xf_nn_act output, xf_rng *rng,
                        xf_error *err);
int xf_nn_mlp_out(const xf_nn_mlp *m); /* dims[n_layers] */

/* Activations of one forward pass (one cache per use of the MLP whose
 * backward is still to come). */
typedef struct xf_nn_mlp_cache {
    int cap_rows;                     /* rows reserved for the widest MLP it served */
    int n_act;                        /* act buffers allocated */
    size_t cap_floats;                /* floats in each buffer */
    float *act[XF_NN_MLP_MAX_LAYERS]; /* act[l]: output of layer l, [rows, dims[l+1]] */
    float *scratch[2];                /* backward: [rows, max dim] each */
} xf_nn_mlp_cache;

void xf_nn_mlp_cache_init(xf_nn_mlp_cache *c);
/* Room for `rows` rows of m (keeps a large enough allocation, so one cache
 * can serve several MLPs in turn). */
xf_status xf_nn_mlp_cache_reserve(xf_nn_mlp_cache *c, const xf_nn_mlp *m, int rows,
                                  xf_error *err);
void xf_nn_mlp_cache_free(xf_nn_mlp_cache *c);

/* Runs in[B, dims[0]] through m; returns the output [B, dims[n]] held by
 * the cache (valid until its next forward). B rows must be reserved. */
const float *xf_nn_mlp_forward(const xf_nn_mlp *m, const xf_nn_params *p, xf_nn_mlp_cache *c,
                               const float *in, int B);
/* Backward of the cache's last forward on the same `in`: accumulates into
 * p's gradients and into din[B, dims[0]] (may be NULL). */
void xf_nn_mlp_backward(const xf_nn_mlp *m, const xf_nn_params *p, xf_nn_mlp_cache *c,
                        float *din, const float *dout, const float *in, int B);

/* ----------------------------------------------------- gradient checking */

/* Loss evaluated by a gradient check: runs a forward on the current inputs
 * and returns a scalar (accumulate in double). */
typedef double (*xf_nn_loss_fn)(void *user);

/* Central finite differences on each of the n floats of x (perturbed in
 * place by ±h and restored) against the analytic gradient `grad`. Returns
 * the largest error |a − fd| / max(|a| + |fd|, floor) over the entries;
 * floor keeps entries with tiny gradients from dominating (e.g. 1e-2).
 * *worst (may be NULL) gets the index of that entry. */
double xf_nn_gradcheck(xf_nn_loss_fn loss, void *user, float *x, const float *grad, size_t n,
                       float h, double floor, size_t *worst);

#endif /* XF_AGENT_NN_H */
