/*
 * wm.h — (part of agent/rl/rl.h) the world-model agent: an MDN-RNN world model
 * (Ha & Schmidhuber's World Models, as RLFlow uses it) learnt from random
 * rollouts on the real environment, a "dream" environment that steps the
 * model instead of the real one, and the agent that trains a PPO controller
 * entirely in the dream and evaluates it on the real environment.
 *
 * Pieces:
 *  - the model (wm.c): per step the input [z_t, e(xfer_t), loc_t / L] (z_t
 *    the latent of the current graph, e a learned embedding of the chosen
 *    xfer, the no-op included, loc_t the chosen location scaled by the
 *    location cap L) goes through an LSTM; from its new hidden state h_{t+1}
 *    one linear layer predicts a K-component diagonal Gaussian mixture over
 *    z_{t+1}, the reward of the step (squared error), done (logistic), the
 *    next xfer mask (logistic per xfer) and the number of locations each
 *    xfer will offer as a fraction of L (logistic with a soft target), so a
 *    controller in the dream can only pick actions the model says apply.
 *    Parameters live under "wm/..." in an xf_nn_params store.
 *  - recorded rollouts and training (wm_data.c, wm_train.c): episodes of
 *    (z, action, reward, done, locations offered) trained by truncated
 *    backpropagation through time: a batch of episodes is run from its start
 *    in chunks of T steps, the LSTM state carried (not differentiated)
 *    from one chunk to the next, one Adam update per chunk.
 *  - the dream (wm_dream.c): state s = [z, h]; reset to a real starting z
 *    and the real initial masks; step(xfer, location) samples z' from the
 *    mixture at temperature τ (xf_nn_mdn_sample), and reads reward, done and
 *    the next masks off the heads.
 *  - the agent (agent_wm.c): see xf_wm_agent_train.
 *
 * The model's xfers are the agent's compact action set (xf_actions in
 * ppo.h), not the whole rule set: N below is that set's size.
 *
 * The latents z are targets of the mixture head, so the encoder that makes
 * them is held fixed while the world model learns (see agent_wm.c for why
 * and how the z are standardised).
 */
#ifndef XF_AGENT_WM_H
#define XF_AGENT_WM_H

#include <stdint.h>

#include "agent/search/search.h"
#include "agent/rl/gnn.h"
#include "agent/nn/nn.h"
#include "agent/rl/ppo.h"

/* ------------------------------------------------------------------ model */

typedef struct xf_wm_config {
    int z_dim;         /* D: latent size (the GNN's; RLFlow 32) */
    int n_xfers;       /* N: rules (>= 0); action N is the no-op */
    int max_locations; /* L: location cap of the environment (default 200) */
    int embed;         /* xfer embedding width (default 16) */
    int hidden;        /* LSTM units (default 256) */
    int n_mix;         /* K: mixture components (default 8) */
    float reward_weight; /* weight of the reward loss (default 1) */
    float min_sigma;     /* soft floor of the mixture's deviations (default 0.05) */
} xf_wm_config;

xf_wm_config xf_wm_config_default(int z_dim, int n_xfers);

typedef struct xf_wm {
    xf_wm_config cfg;
    int in_dim;  /* D + embed + 1 */
    int mdn_dim; /* xf_nn_mdn_width(K, D) */
    int embed;   /* tensor "wm/embed" [N + 1, embed] */
    xf_nn_lstm lstm; /* "wm/lstm" */
    /* "wm/head": all heads as one linear layer from h, outputs
     * [mixture (mdn_dim) | reward | done | mask (N) | locs (N)] */
    xf_nn_linear head;
    int head_dim; /* mdn_dim + 2 + 2N */
} xf_wm;

/* Offsets of the heads in a row of "wm/head"'s output. */
static inline int xf_wm_off_reward(const xf_wm *wm) { return wm->mdn_dim; }
static inline int xf_wm_off_done(const xf_wm *wm) { return wm->mdn_dim + 1; }
static inline int xf_wm_off_mask(const xf_wm *wm) { return wm->mdn_dim + 2; }
static inline int xf_wm_off_locs(const xf_wm *wm) { return wm->mdn_dim + 2 + wm->cfg.n_xfers; }

/* Adds the model's tensors to p, initialised from rng. XF_ERR_INVALID for a
 * dimension < 1 (n_xfers < 0), naming it. */
xf_status xf_wm_add(xf_wm *wm, xf_nn_params *p, const xf_wm_config *cfg, xf_rng *rng,
                    xf_error *err);

/* The mixture parameters of a head row, as xf_nn_mdn_* take them: logits
 * and means as they are, log-sigmas through the soft floor
 *   s' = m + softplus(s − m),  m = log(min_sigma),
 * because the environment is deterministic: its next latent has no noise,
 * and without a floor the likelihood would reward σ → 0 without bound and
 * its gradient would drown every other head's. */
void xf_wm_mixture(const xf_wm *wm, float *mix, const float *head_row);
/* Chain rule of xf_wm_mixture: dhead_row[0..mdn_dim) += dmix · ∂mix/∂head. */
void xf_wm_mixture_backward(const xf_wm *wm, float *dhead_row, const float *dmix,
                            const float *head_row);

/* The input row of one step: [z, embed[xfer], loc / L]. */
void xf_wm_input(const xf_wm *wm, const xf_nn_params *p, float *x, const float *z, int xfer,
                 int loc);

/* ------------------------------------------------------- recorded rollouts */

/* One episode of T steps on the real environment: z[0..T] the latents of
 * the graphs seen, step t took (xfer[t], loc[t]) from graph t to graph t+1
 * and earned reward[t]; done[t] the environment's flag after it; locs[t]
 * (T x N) the locations each rule offers in graph t+1 (capped at L; 0 =
 * masked). */
typedef struct xf_wm_episode {
    int T, cap;
    float *z;       /* (T + 1) x D */
    int *xfer, *loc;
    float *reward;
    uint8_t *done;
    uint16_t *locs; /* T x N */
} xf_wm_episode;

typedef struct xf_wm_data {
    int D, N;
    int n, cap;
    xf_wm_episode *ep;
    int64_t steps; /* over all episodes */
} xf_wm_data;

void xf_wm_data_init(xf_wm_data *d, int D, int N);
/* Appends src's episodes (src->N the environment's rule count) to dst
 * (dst->N = act->M) with actions and locations mapped through act: an
 * episode ends before its first step whose rule is not in the set. */
xf_status xf_wm_data_add_mapped(xf_wm_data *dst, const xf_wm_data *src, const xf_actions *act,
                                xf_error *err);
void xf_wm_data_free(xf_wm_data *d);
/* Starts a new episode at latent z0; returns its index. */
xf_status xf_wm_data_begin(xf_wm_data *d, const float *z0, int *index, xf_error *err);
/* Appends a step to the last episode: the action, the reward and done it
 * got, the latent z of the graph it led to and the locations offered there
 * (N counts). */
xf_status xf_wm_data_step(xf_wm_data *d, int xfer, int loc, float reward, int done,
                          const float *z, const uint16_t *locs, xf_error *err);

/* --------------------------------------------------------------- training */

/* Loss of a chunk, averaged over the valid (row, step) pairs: the mixture's
 * negative log-likelihood per latent dimension, the reward's squared error,
 * the done and mask/locations cross-entropies (averaged over xfers); total
 * = nll + reward_weight·reward + done + mask + locs. */
typedef struct xf_wm_loss {
    double total, nll, reward, done, mask, locs;
    int64_t count; /* valid (row, step) pairs */
} xf_wm_loss;

/* Buffers for truncated BPTT over B sequences of T steps. */
typedef struct xf_wm_trainer {
    const xf_wm *wm;
    int B, T;
    float *x;       /* T x B x in_dim */
    float *h, *c;   /* (T + 1) x B x H: [0] the carried state */
    float *head;    /* T x B x head_dim raw outputs */
    float *post;    /* T x B x K */
    float *mix;     /* T x B x mdn_dim: mixture parameters (xf_wm_mixture) */
    float *dmix;    /* mdn_dim */
    float *target;  /* T x B x D */
    float *dhead;   /* B x head width */
    float *dh, *dc, *dh_prev, *dc_prev; /* B x H */
    float *dx;      /* B x in_dim */
    float *row;     /* B: per-row mixture nll (forward) and its gradient (backward) */
    float *weight;  /* T x B: 1 valid, 0 padding */
    xf_nn_lstm_cache *cache; /* T */
    /* rows of the current chunk */
    const xf_wm_data *data;
    int *ep;        /* B episode indices, -1 empty row */
    int t0, steps;  /* first step of the chunk, steps in it */
    double count;
} xf_wm_trainer;

xf_status xf_wm_trainer_init(xf_wm_trainer *tr, const xf_wm *wm, int B, int T, xf_error *err);
void xf_wm_trainer_free(xf_wm_trainer *tr);

/* Chooses the rows of the next chunks: episodes ep[0..nb) (nb <= B) from
 * their first step, LSTM state zero. */
void xf_wm_trainer_start(xf_wm_trainer *tr, const xf_wm_data *d, const int *ep, int nb);
/* Forward of the current chunk (steps t0 .. t0 + T − 1) from the carried
 * state; fills *loss. */
void xf_wm_chunk_forward(xf_wm_trainer *tr, const xf_nn_params *p, xf_wm_loss *loss);
/* Backward of the last forward: accumulates d(total)/d(params) into p's
 * gradients (through all T LSTM steps of the chunk). */
void xf_wm_chunk_backward(xf_wm_trainer *tr, const xf_nn_params *p);

/* One pass over episodes ep[0..n) in batches of B: forward, backward,
 * gradient clipping (clip > 0) and an Adam update per chunk. *loss gets the
 * average over the pass (may be NULL). */
xf_status xf_wm_train_pass(xf_wm_trainer *tr, xf_nn_params *p, xf_nn_adam *adam,
                           const xf_wm_data *d, const int *ep, int n, float clip,
                           xf_wm_loss *loss, xf_error *err);
/* The same pass without updates: the average loss over the episodes. */
void xf_wm_eval(xf_wm_trainer *tr, const xf_nn_params *p, const xf_wm_data *d, const int *ep,
                int n, xf_wm_loss *loss);

/* ------------------------------------------------------------------ dream */

typedef struct xf_dream xf_dream;

typedef struct xf_dream_options {
    float tau;             /* mixture temperature (default 1.0; <= 0: most likely mean) */
    int max_steps;         /* episode length (default 200) */
    float invalid_penalty; /* reward of a masked action (default -1) */
    uint64_t seed;         /* sampling (default 1) */
} xf_dream_options;

xf_dream_options xf_dream_options_default(void);

/* A dream over model wm with parameters p (both must outlive it), reset to
 * latent z0 (D floats) with locs0 (N counts) the locations the real start
 * offers. */
xf_status xf_dream_create(const xf_wm *wm, const xf_nn_params *p, const float *z0,
                          const uint16_t *locs0, const xf_dream_options *opt, xf_dream **out,
                          xf_error *err);
void xf_dream_free(xf_dream *d); /* NULL is a no-op */

/* Back to z0, h = c = 0, the start's masks, step count 0 (the sampler's
 * random stream continues). */
void xf_dream_reset(xf_dream *d);

typedef struct xf_dream_step_result {
    float reward;
    int done;  /* no-op, step limit, predicted done or nothing predicted to apply */
    int valid; /* 0: masked or out of range (penalty, state unchanged) */
} xf_dream_step_result;

/* One world-model step: h' = LSTM([z, e(xfer), loc / L], h); z' sampled
 * from the mixture head at τ; reward from its head; done when
 * sigmoid(done logit) > 0.5; xfer j offered when sigmoid(mask_j) > 0.5
 * with max(1, round(sigmoid(locs_j)·L)) locations. The no-op ends the
 * episode with reward 0 (state unchanged). */
void xf_dream_step(xf_dream *d, int xfer, int loc, xf_dream_step_result *r);

int xf_dream_state_dim(const xf_dream *d); /* D + H */
const float *xf_dream_state(const xf_dream *d); /* [z | h] */
int xf_dream_num_xfers(const xf_dream *d);      /* N */
const uint8_t *xf_dream_xfer_mask(const xf_dream *d); /* N + 1 (no-op: 1) */
int xf_dream_num_locations(const xf_dream *d, int xfer); /* 0 when masked or the no-op */
/* Steps taken since creation and the seconds spent in them. */
void xf_dream_timing(const xf_dream *d, int64_t *steps, double *seconds);

/* ------------------------------------------------------------------ agent */

/* What the progress callback sees (about once a second, and at every new
 * best graph). */
typedef struct xf_wm_progress {
    const char *phase;     /* "collect", "model", "dream", "eval"; "done" at the end */
    int round;             /* rounds finished */
    int64_t episodes;      /* real episodes (random and evaluation) */
    int64_t real_steps, dream_steps;
    double wm_loss;        /* world-model loss of the last training pass */
    double dream_reward;   /* mean return of the last dream update's episodes */
    double best_ms, initial_ms;
    double seconds;
} xf_wm_progress;

typedef struct xf_wm_agent_options {
    xf_ppo_hparams hp;       /* the controller (PPO defaults) */
    xf_gnn_config gnn;       /* encoder sizes (hidden 32, latent D = 32 as RLFlow, 2 rounds) */
    xf_cost_model *cm;       /* per-node costs as node features (NULL: none); the
                                environment's cost model, must outlive the agent */
    int max_locations;       /* L: the environment's max_locations (200) */
    int warmup_steps;        /* random real steps that find the action set before the
                                networks are built; recorded as the first random
                                episodes (XF_ACTIONS_WARMUP; at most a tenth of
                                max_env_steps, xf_actions_warmup, and of
                                max_seconds, xf_agent_run_warmup_over) */
    int max_actions;         /* cap of the action set (XF_ACTIONS_CAP) */
    int transfer;            /* 1: loading keeps a checkpoint's action whose rule the
                                rule set lacks as unavailable instead of failing
                                (xf_actions.partial; a model it never saw) (0) */
    int lookahead;           /* a real step of a rule with a view is followed by the
                                view moves' closure (xf_agent_env_step; 1) */
    int polish;              /* 1: training ends with the greedy polish of the best
                                graph (xf_agent_run_polish; 1) */
    int self_imitation;      /* 1: every dream update also learns from the recorded real
                                episode that reached the best graph so far (its prefix
                                to that graph), its actions' advantages at least +1; no
                                real step is spent on it (agent_wm.c; 1) */
    int wm_hidden;           /* LSTM units (256) */
    int n_mix;               /* mixture components (8) */
    int wm_embed;            /* xfer embedding width (16) */
    float tau;               /* dream temperature (1.0) */
    int random_episodes;     /* random real episodes collected per round (8) */
    int episode_steps;       /* steps per real or dream episode (50; also capped by the env) */
    int wm_batch;            /* episodes per world-model batch (16) */
    int wm_chunk;            /* BPTT truncation length (32) */
    int wm_passes;           /* passes over all recorded episodes per round (2) */
    float wm_lr;             /* world-model Adam learning rate (1e-3) */
    float wm_clip;           /* world-model gradient-norm clip (1.0) */
    int dream_updates;       /* PPO updates in the dream per round (10) */
    int dream_episodes;      /* dream episodes per PPO update (8) */
    int eval_episodes;       /* real evaluation episodes per round: the first greedy,
                                the others sampled (2) */
    int rounds;              /* collect-model-dream-eval rounds; <= 0: until a budget ends (0) */
    int64_t max_env_steps;   /* real steps over all episodes (20000); <= 0: none */
    double max_seconds;      /* wall-clock budget (60); <= 0: none */
    uint64_t seed;           /* (1) */
    void (*progress)(void *user, const xf_wm_progress *p);
    void *progress_user;
} xf_wm_agent_options;

xf_wm_agent_options xf_wm_agent_options_default(void);

/* Figures of a training run, beside the xf_search_result. */
typedef struct xf_wm_agent_stats {
    int rounds;
    int64_t real_episodes, real_steps;
    int64_t dream_episodes, dream_steps;
    double wm_loss_first, wm_loss_last; /* total loss of the first and last passes */
    double dream_reward;                /* mean return of the last dream update */
    double real_return;                 /* mean return of the last round's controller
                                           episodes on the real environment (percent,
                                           as dream_reward: the dream's promise kept?) */
    double heldout_nll, heldout_reward_rmse; /* the model on the episodes recorded since
                                           its last training, before it trains on them
                                           (last round): z's NLL per dimension and the
                                           reward's RMSE in percent */
    double reward_rms;                  /* the reward scale (RMS of the first round's
                                           rewards, percent; at least 1) */
    double wm_step_us;                  /* mean world-model (dream) step */
    double real_step_us;                /* mean real environment step */
    double encode_us;                   /* mean GNN encoding of a real graph */
    double seconds;
} xf_wm_agent_stats;

/* The agent's parts (agent_wm.c; checkpoints in wm_ckpt.c). Three stores
 * so each optimiser updates only its own network: the GNN encoder (fixed,
 * see agent_wm.c), the world model and the controller. The last two, and
 * everything sized by the action count M, exist once `built`. */
typedef struct xf_wm_agent {
    xf_wm_agent_options opt;
    int max_locations;
    xf_actions act;       /* M 0 until trained (warm-up) or loaded */
    int built;
    xf_node_costs costs;  /* per-node costs (a memo when opt.cm) */
    xf_nn_params gnn_p, wm_p, ctl_p;
    xf_gnn gnn;
    xf_wm wm;
    xf_ppo_net ctl;
    xf_nn_adam wm_adam, ctl_adam;
    int normalised;       /* z_mean/z_std set (after the first collection) */
    float *z_mean, *z_std; /* D each: z fed to the world model = (gnn z - mean) / std */
    float reward_scale;   /* rewards fed to the world model = real reward / reward_scale */
    xf_rng rng;
    /* working memory */
    xf_gnn_batch batch;
    xf_gnn_cache gcache;
    xf_wm_data data;
    xf_wm_trainer tr;
    xf_ppo_work work;
    xf_ppo_buffer buf;
    xf_nn_lstm_cache lcache;
    float *z, *state, *c, *h_new, *c_new, *x; /* D; D + H; H; H; H; in_dim */
    uint16_t *locs;       /* M */
    int *n_loc;           /* M + 1 */
    uint8_t *mask;        /* M + 1 */
} xf_wm_agent;

/* An untrained agent: the GNN encoder; the world model and the controller
 * are built when the action set is known (training's warm-up or a
 * checkpoint). opt NULL: defaults. */
xf_status xf_wm_agent_create(const xf_wm_agent_options *opt, xf_wm_agent **out, xf_error *err);
void xf_wm_agent_free(xf_wm_agent *a); /* NULL is a no-op */

/* An agent without actions first runs warmup_steps uniformly random steps
 * in random episodes of episode_steps (recorded, counted in the budget)
 * and takes the rules offered in any state it saw as its action set
 * (xf_actions_choose, cap max_actions), then builds the world model and
 * the controller for it; a trained or loaded agent keeps its set, mapped
 * through e's rule set (XF_ERR_MISMATCH naming a rule id e's rule set
 * lacks). Then rounds of: random episodes on e (recorded), world-model
 * training on all recorded episodes, PPO updates of the controller in the dream started
 * from e's initial graph, evaluation episodes of the controller on e (also
 * recorded). Every real graph counts for the best. res (initialised) gets
 * the best graph, its cost, the applied rules on its path, real steps
 * (expanded), distinct graphs (seen) and seconds; stats (may be NULL) the
 * figures above; res->applied holds environment actions. With opt.polish
 * the run ends with xf_agent_run_polish (res says what it did). On return e
 * holds the best graph. */
xf_status xf_wm_agent_train(xf_wm_agent *a, xf_env *e, xf_search_result *res,
                            xf_wm_agent_stats *stats, xf_error *err);
/* One episode of the controller on e from its reset state (greedy, or
 * sampled from the agent's generator); res as above; e holds the best
 * graph of the episode on return. XF_ERR_INVALID for an agent without
 * actions (neither trained nor loaded). */
xf_status xf_wm_agent_run(xf_wm_agent *a, xf_env *e, int greedy, xf_search_result *res,
                          xf_error *err);

/* Checkpoint: "XFWMAGNT" | u32 version (2) | u32 11 | u32 max_locations,
 * gnn hidden, latent, rounds, mlp_layers, wm_hidden, n_mix, wm_embed, ppo
 * hidden, trunk_layers, ppo embed | the action set as rule ids
 * (xf_actions_write) | u32 normalised | f32 z mean[D], z std[D], reward
 * scale | u64 Adam steps (model, controller) | the GNN, world-model and
 * controller stores (xf_nn_params_save; the trained ones with Adam
 * moments). Saving an agent without actions is XF_ERR_INVALID. Loading
 * needs an agent created with the same sizes (XF_ERR_MISMATCH naming the
 * size otherwise) and maps the ids through e's rule set (XF_ERR_MISMATCH
 * naming a missing id); it replaces the agent's action set and networks
 * and drops its recorded rollouts. A load that fails leaves the agent as
 * it was (out of memory while installing the networks: without actions). */
#define XF_WM_CKPT_VERSION 2u
xf_status xf_wm_agent_save(const xf_wm_agent *a, const char *path, xf_error *err);
xf_status xf_wm_agent_load(xf_wm_agent *a, const char *path, const xf_env *e, xf_error *err);
/* Builds the world model and the controller for the action set with ids
 * (copied, bound at the next run; ids->partial kept), replacing what the
 * agent had and its recorded rollouts: what a training over several models
 * (xf_rl_train_many) does instead of the warm-up. */
xf_status xf_wm_agent_build(xf_wm_agent *a, const xf_actions *ids, xf_error *err);

/* For the loader: a world model and a controller over M actions for a's
 * sizes, initialised from rng, into fresh stores wm_p and ctl_p (freed on
 * failure); and making them the agent's (taken over with *act, which is
 * left empty) with work buffers for M, recorded rollouts dropped and the
 * optimisers reset. install fails only for memory, leaving the agent
 * without actions. */
xf_status xf_wm_agent_nets(const xf_wm_agent *a, int M, xf_rng *rng, xf_nn_params *wm_p,
                           xf_wm *wm, xf_nn_params *ctl_p, xf_ppo_net *ctl, xf_error *err);
xf_status xf_wm_agent_install(xf_wm_agent *a, xf_actions *act, xf_nn_params *wm_p,
                              const xf_wm *wm, xf_nn_params *ctl_p, const xf_ppo_net *ctl,
                              xf_error *err);

/* The agent's world model and its store, for tests and benchmarks. */
const xf_wm *xf_wm_agent_model(const xf_wm_agent *a);
const xf_nn_params *xf_wm_agent_model_params(const xf_wm_agent *a);

/* create + train + free, for `rlflow-agent --agent wm`. */
xf_status xf_wm_optimise(xf_env *e, const xf_wm_agent_options *opt, xf_search_result *res,
                         xf_wm_agent_stats *stats, xf_error *err);

#endif /* XF_AGENT_WM_H */
