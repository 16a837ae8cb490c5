/*
 * enumerate_internal.h — private to enumerate/: the compact graph store, the class
 * table, graph reconstruction and evaluation, and the pieces of a run.
 *
 * A graph is never stored whole. Level n holds records of graphs with n
 * operators; each record names its parent at level n-1 and the one node
 * appended to it (variant id and input references), plus the graph's
 * fingerprint. Level 0 holds the empty graph (index 0, the parent of every
 * 1-operator graph) and the 0-operator graphs whose outputs are a subset of
 * the inputs (targets of rules such as split(concat(a, b)) => a, b).
 *
 * A value reference is an input index (0..XF_ENUM_MAX_INPUTS-1) or
 * REF_NODE(j, k): output k of node j, nodes numbered in append order.
 */
#ifndef XF_ENUMERATE_ENUMERATE_INTERNAL_H
#define XF_ENUMERATE_ENUMERATE_INTERNAL_H

#include "enumerate.h"
#include "fpeval_internal.h"

#define NODE_OUTS 3 /* outputs of one node at most: a split into 2 or 3 parts */
#define REF_NODE(j, k) (XF_ENUM_MAX_INPUTS + NODE_OUTS * (j) + (k))
#define REF_IS_INPUT(r) ((r) < XF_ENUM_MAX_INPUTS)
#define REF_NODE_OF(r) (((r) - XF_ENUM_MAX_INPUTS) / NODE_OUTS)
#define REF_OUT_OF(r) (((r) - XF_ENUM_MAX_INPUTS) % NODE_OUTS)
#define N_REFS (XF_ENUM_MAX_INPUTS + NODE_OUTS * XF_ENUM_MAX_OPS)
#define VAR_NONE 0xFFFFu
#define MAX_NODE_INPUTS 2  /* enumerated variants take at most two inputs */
#define MAX_GRAPH_OUTPUTS (XF_ENUM_MAX_OUTPUTS + XF_ENUM_MAX_OPS)

/* ------------------------------------------------------------ vocabulary */

/* Sets v->name from its parameters (vocab.c). */
xf_status en_opvar_name(xf_enum_opvar *v, xf_error *err);
/* Number of inputs a variant takes (0 for constant generators). */
int en_var_arity(const xf_enum_opvar *v);
/* Concrete params of variant v on inputs of the given shapes, and the
 * output count and shapes; 0 when the variant does not apply (shape rule,
 * rank restriction, equal-shape rule, limits of the config). */
int en_instantiate(const xf_enum_config *c, const xf_enum_opvar *v, int n_in,
                     const xf_shape *in_shapes, xf_params *params, int *n_out, xf_shape *out_shapes);
/* Only the concrete params (no shape inference): for inputs already known
 * to be valid. */
void en_var_params(const xf_enum_opvar *v, const xf_shape *in_shapes, xf_params *params);

/* ----------------------------------------------------------------- store */

enum { GREC_REP = 1, GREC_LEAF = 2 };

typedef struct grec {
    uint64_t fp;     /* class key: output fingerprints (multiset), used inputs */
    uint32_t parent; /* index at the previous level */
    uint16_t var;    /* appended variant; VAR_NONE at level 0 */
    uint8_t in[XF_ENUM_MAX_OUTPUTS]; /* refs of the appended node; leaf: its inputs */
    uint8_t n_in;
    uint8_t flags;   /* GREC_* */
} grec;

typedef struct glevel {
    grec *v;
    size_t n, cap;
} glevel;

/* A class: its fingerprint and where its representative is. A stored
 * representative (levels below max_ops) is record `ref` at level
 * tag & 0xFF; one built at the last level is not stored (spill_internal.h), and the
 * entry holds its parent `ref` and appended node (variant `tag`, inputs
 * `in`). */
#define CENTRY_STORED 0x8000u
typedef struct centry {
    uint64_t fp; /* 0: empty slot */
    uint32_t ref;
    uint16_t tag;
    uint8_t in[MAX_NODE_INPUTS];
} centry;

/* Fingerprint -> class, split into segments by the fingerprint's top byte
 * so that growing never needs more than 1/256 of the table twice. */
#define CT_SEGMENTS 256
typedef struct ctseg {
    centry *slots;
    size_t cap, n;
} ctseg;

typedef struct ctable {
    ctseg seg[CT_SEGMENTS];
    size_t n;
} ctable;

/* Set of 64-bit hashes (structural hashes of class representatives). */
typedef struct hset {
    uint64_t *slots; /* 0: empty */
    size_t cap, n;
} hset;

/* Asks the kernel to back [p, p+n) with huge pages, before it is touched:
 * the class and representative tables and the node memo are probed at
 * random, and with 4 KiB pages nearly every probe also misses the TLB. */
void en_advise_huge(void *p, size_t n);
xf_status en_glevel_push(glevel *l, const grec *r, xf_error *err);
void en_glevel_free(glevel *l);
xf_status en_ctable_init(ctable *t, xf_error *err);
size_t en_ctable_bytes(const ctable *t);
void en_ctable_free(ctable *t);
const centry *en_ctable_find(const ctable *t, uint64_t fp);
/* Starts loading the slot where fp's lookup begins (the tables are far
 * larger than the caches: issuing several loads before the lookups that
 * need them overlaps their misses). */
void en_ctable_prefetch(const ctable *t, uint64_t fp);
xf_status en_ctable_insert(ctable *t, const centry *e, xf_error *err);
xf_status en_hset_init(hset *s, size_t cap, xf_error *err);
void en_hset_free(hset *s);
int en_hset_has(const hset *s, uint64_t h);
void en_hset_prefetch(const hset *s, uint64_t h);
xf_status en_hset_add(hset *s, uint64_t h, xf_error *err);

/* ------------------------------------------------------- graph structure */

typedef struct enode {
    uint16_t var;
    uint8_t n_in, n_out;
    uint8_t in[MAX_NODE_INPUTS];
} enode;

/* A reconstructed graph: nodes in append order, or a leaf (n_nodes 0,
 * outputs = leaf inputs). */
typedef struct egraph {
    int n_nodes;
    enode nodes[XF_ENUM_MAX_OPS];
    int n_leaf;
    uint8_t leaf[XF_ENUM_MAX_OUTPUTS];
} egraph;

/* Follows parent links from record idx at `level`. */
void en_egraph_from_store(const xf_enum_config *cfg, const glevel *levels, int level, uint32_t idx,
                       egraph *g);
/* Outputs of variant v (its parts for a split, else 1). */
int en_var_outputs(const xf_enum_opvar *v);
/* Canonical key of every node (depends on structure only) into keys[]. */
void en_egraph_node_keys(const egraph *g, uint64_t *keys);
/* Inline: extend.c's inner loop computes them for every subgraph it
 * checks. */
static inline uint64_t en_ref_key(const uint64_t *node_keys, int ref)
{
    if (REF_IS_INPUT(ref)) return en_fp_mix(0x1A9u, (uint64_t)ref);
    return en_fp_mix(node_keys[REF_NODE_OF(ref)], (uint64_t)REF_OUT_OF(ref) + 0x0C7u);
}

static inline uint64_t en_node_key(uint16_t var, int n_in, const uint8_t *in, const uint64_t *node_keys)
{
    uint64_t h = en_fp_mix(0x0D3u, var);
    for (int i = 0; i < n_in; i++) h = en_fp_mix(h, en_ref_key(node_keys, in[i]));
    return h;
}

/* Structural hash of the node subset `mask` (all nodes: (1<<n)-1). */
static inline uint64_t en_struct_hash(const uint64_t *node_keys, uint32_t mask)
{
    uint64_t k[XF_ENUM_MAX_OPS];
    int n = 0;
    for (int j = 0; j < XF_ENUM_MAX_OPS; j++)
        if (mask & (1u << j)) {
            uint64_t v = node_keys[j];
            int i = n++;
            while (i > 0 && k[i - 1] > v) k[i] = k[i - 1], i--;
            k[i] = v;
        }
    uint64_t h = en_fp_mix(0x57C7u, (uint64_t)n);
    for (int i = 0; i < n; i++) h = en_fp_mix(h, k[i]);
    return h;
}
/* Structural hash of the leaf graph over inputs `in_mask`. */
uint64_t en_leaf_hash(uint32_t in_mask);
uint64_t en_egraph_struct_hash(const egraph *g);

/* ------------------------------------------------------------ evaluation */

/* Shapes and field data of every value of one graph under one evaluation. */
typedef struct evalue {
    xf_shape shape;
    uint64_t *d;
    uint64_t hash;
} evalue;

typedef struct evalctx {
    const xf_enum_config *cfg;
    fp_keys keys;
    evalue in[XF_ENUM_MAX_INPUTS];       /* shared input data (owned by the run) */
    evalue node[XF_ENUM_MAX_OPS][NODE_OUTS]; /* node outputs */
    uint64_t *pool;                      /* owned: backing store of node[][] */
} evalctx;

/* Points ctx at inputs (evaluation `which`) held in `inputs` and allocates
 * node slots. */
xf_status en_evalctx_init(evalctx *ctx, const xf_enum_config *cfg, const evalue *inputs, int which,
                       xf_error *err);
void en_evalctx_free(evalctx *ctx);
/* Builds input data of evaluation `which` (owner frees each .d). */
xf_status en_make_inputs(const xf_enum_config *cfg, int which, evalue *inputs, xf_error *err);
const evalue *en_evalctx_ref(const evalctx *ctx, int ref);
/* Runs node j of g (inputs already evaluated) into node slot j, with
 * concrete params and output shapes already known; hashes the outputs. */
void en_evalctx_run_node(evalctx *ctx, const egraph *g, int j, const xf_params *params,
                      const xf_shape *out_shapes);
/* Instantiates node j's variant on its input shapes, then runs it; 0 when
 * the variant does not apply (never for a stored graph). */
int en_evalctx_eval_node(evalctx *ctx, const egraph *g, int j);
/* Number of leading nodes a and b have in common (same variant, same
 * inputs): those nodes compute the same values in both. */
int en_egraph_same_prefix(const egraph *a, const egraph *b);
/* Evaluates the whole graph; output refs sorted by output hash into outs
 * (count returned), input mask into *in_mask, class key into *fp. `held`
 * describes the nodes whose values ctx holds from the last call (zeroed
 * before the first): the leading nodes g shares with it are not run again,
 * and it is updated to what ctx holds afterwards. */
int en_evalctx_run_graph(evalctx *ctx, egraph *held, const egraph *g, uint8_t *outs,
                      uint32_t *in_mask, uint64_t *fp);
/* Output refs of g (values no node consumes; leaf: its inputs), unsorted. */
int en_egraph_outputs(const egraph *g, uint8_t *outs);
/* The inputs g reads (bit i: input i). */
uint32_t en_egraph_input_mask(const egraph *g);
/* Class key from output hashes (any order) and the input mask. */
uint64_t en_class_key(const uint64_t *out_hashes, int n, uint32_t in_mask);

/* --------------------------------------------------------------- rules */

/* Builds xf_graph form of g with outputs in the order `outs`. */
xf_status en_egraph_to_xf(const xf_enum_config *cfg, const egraph *g, uint32_t in_mask,
                       const uint8_t *outs, int n_outs, xf_graph *out, xf_error *err);

/* Outcome of confirming one collision. */
typedef enum confirm_result { CONFIRM_OK, CONFIRM_SECOND, CONFIRM_FLOAT, CONFIRM_ERROR } confirm_result;

/* A worker's confirmation state: an evaluation context for each of the two
 * evaluations and each side (source, target), with the graph whose node
 * values it holds. Collisions come in the order of the level, so
 * consecutive sources are mostly siblings (children of one parent) and
 * consecutive targets often the same representative: only the nodes that
 * differ from the last graph on that side are evaluated. */
typedef struct confirmer {
    evalctx ev[2][2]; /* [evaluation][side] */
    egraph held[2][2];
} confirmer;

xf_status en_confirmer_init(confirmer *c, const xf_enum_config *cfg, const evalue *in0,
                         const evalue *in1, xf_error *err);
void en_confirmer_free(confirmer *c);
/* Second field evaluation and float32 check of src against dst, which
 * collided on class key fp; on CONFIRM_OK fills cand->rule. The first
 * evaluation is not repeated for single-output graphs: it gave both fp
 * (that is how they met), and one output needs no alignment. */
confirm_result en_confirm(const xf_enum_config *cfg, confirmer *c, const egraph *src,
                            const egraph *dst, uint64_t fp, xf_enum_candidate *cand,
                            xf_error *err);

/* ----------------------------------------------------------- checkpoint */

/* The last level's fingerprints go to disk (spill_internal.h): SPILL_BUCKETS files
 * by fingerprint, then one of collisions with lower levels. */
#define SPILL_BUCKETS 64
#define SPILL_FILES (SPILL_BUCKETS + 1)

typedef struct enum_state {
    int level;          /* level being built (1..max_ops), max_ops+1 when done */
    uint64_t next_parent; /* parents of `level` already processed */
    uint64_t seq;       /* candidates emitted */
    xf_enum_stats stats;
    glevel levels[XF_ENUM_MAX_OPS + 1];
    uint64_t spill_len[SPILL_FILES]; /* last level: bytes of each spill file so far */
    uint64_t confirm_done; /* last level, every parent done: its collisions confirmed */
} enum_state;

/* Saves s. */
xf_status en_checkpoint_save(const char *path, uint64_t cfg_hash, const enum_state *s,
                               xf_error *err);
/* *found = 0 when the file does not exist. */
xf_status en_checkpoint_load(const char *path, uint64_t cfg_hash, enum_state *s, int *found,
                               xf_error *err);

#endif /* XF_ENUMERATE_ENUMERATE_INTERNAL_H */
