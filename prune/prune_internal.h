/*
 * prune_internal.h — private structures shared by the pruning stages.
 *
 * Every rule side is turned into hash-consed expression terms: a term is a
 * graph input (leaf) or one output of an operator applied to argument terms,
 * so two structurally equal subexpressions anywhere in the rule set get the
 * same term id and compare with one integer test. The stages work on these
 * views (pr_rule), never on the xf_graph node lists.
 *
 * A key map stores int32 token sequences (generality bucket keys, operator
 * keys, names) and maps each to a long.
 */
#ifndef XF_PRUNE_PRUNE_INTERNAL_H
#define XF_PRUNE_PRUNE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "prune/prune.h"

/* ------------------------------------------------------------ key map */

typedef struct pr_keymap_ent {
    uint64_t hash;
    size_t off;   /* into pool */
    uint32_t len; /* tokens */
    long value;
} pr_keymap_ent;

typedef struct pr_keymap {
    int32_t *pool;
    size_t n_pool, cap_pool;
    pr_keymap_ent *ents;
    size_t n_ents, cap_ents;
    xf_htab index; /* key hash -> entry index */
} pr_keymap;

void pr_keymap_init(pr_keymap *m);
void pr_keymap_free(pr_keymap *m);
/* Value stored for key, or -1 when absent. */
long pr_keymap_get(const pr_keymap *m, const int32_t *key, uint32_t len);
/* Stores key -> value unless the key is present; *old gets the present
 * value or -1 when this call inserted it. */
xf_status pr_keymap_put(pr_keymap *m, const int32_t *key, uint32_t len, long value, long *old,
                        xf_error *err);

/* ---------------------------------------------------------- term table */

#define PR_LEAF (-1)    /* opkey of a graph input */
#define PR_NO_TYPE (-1) /* type of a node term (operator application, all outputs) */

/* 24 bytes: pruning holds several for each of millions of candidates. */
typedef struct pr_term {
    int32_t opkey;  /* interned (op, params), or PR_LEAF */
    int32_t type;   /* interned (dtype, shape); PR_NO_TYPE for node terms */
    int32_t out;    /* output index; leaf: interned name; node term: -1 */
    int32_t n_kids;
    uint32_t kids;  /* offset into pr_table.kids */
    int32_t size;   /* operators in the unfolded expression tree */
} pr_term;

typedef struct pr_table {
    pr_term *terms;
    size_t n_terms, cap_terms;
    int32_t *kids;
    size_t n_kids, cap_kids;
    xf_htab term_index; /* term hash -> term id (the hash is the key); freed once every
                         * rule is built */
    /* interned operator keys: (op, params) */
    xf_op *ops;
    xf_params *params;
    uint64_t *op_hash;
    int n_opkeys, cap_opkeys;
    pr_keymap opkey_map; /* [hash lo, hash hi] -> first opkey with that hash */
    int32_t *opkey_next; /* chain of opkeys sharing a hash */
    /* interned value types */
    xf_dtype *dtypes;
    xf_shape *shapes;
    int n_types, cap_types;
    /* interned input names */
    char **names;
    int n_names, cap_names;
    pr_keymap name_map;
} pr_table;


static inline const int32_t *pr_kids(const pr_table *t, int32_t term)
{
    return t->kids + t->terms[term].kids;
}

/* One rule as terms. Its arrays lie in pr_rules.pool from `base` on (read
 * them with pr_src_out ... pr_dst_nodes): output terms of the source and of
 * the target (n_out each), the leaf term of each input position (n_in),
 * the node terms (operator applications) of each side. Kept small: pruning
 * holds one for each of millions of candidates. */
typedef struct pr_rule {
    size_t base;                   /* offset of this rule's arrays in pr_rules.pool */
    int32_t tree_size;             /* operators in the unfolded trees of all outputs */
    uint16_t n_out, n_in;
    uint16_t n_src_nodes, n_dst_nodes;
    int16_t n_used_leaves;         /* distinct inputs the outputs read */
} pr_rule;

/* Most outputs, inputs or nodes a side may have in the term view. */
#define PR_MAX_COUNT 65535

/* ------------------------------------------------- blocks, progress */

/* Rules per block of n (the stages decide a block in parallel, then apply
 * it in index order): n / 16 between min and max, so that a small set
 * still goes in several blocks and a large one in blocks that keep the
 * threads busy. */
size_t pr_block_size(size_t n, size_t min, size_t max);
#define PR_BLOCK 16384

/* The progress of one pruning run (xf_prune_options.on_progress). */
typedef struct pr_progress {
    const xf_prune_options *o;
    double t0, step_t0, last;
    const char *step;
    size_t total;
} pr_progress;

void pr_progress_init(pr_progress *p, const xf_prune_options *o);
/* A new step of `total` rules: reported at once. */
void pr_progress_step(pr_progress *p, const char *step, size_t total);
/* `done` rules of the step: reported when progress_every_s has passed. */
void pr_progress_tick(pr_progress *p, size_t done);

/* ----------------------------------------------------------- fed rules */

/* A rule as its two sides were fed to it (xf_graph_sink, ir.h), in flat
 * arrays that are reused from rule to rule (flat.c): what the term view is
 * built from, whether the rule came as an xf_rule (xf_graph_feed) or
 * straight from a stored candidate (xfergen), so that no xf_graph is built
 * and freed for it. Feeding infers each node's output types and hashes its
 * operator key, on the thread that feeds; the one thread that interns only
 * looks them up. Values are numbered as the sink numbers them. */
/* Most inputs and outputs of one node together (as the graph validation
 * allows). */
#define PR_MAX_NODE_IO (2 * XF_MAX_SPLIT + 8)

typedef struct pr_flat_node {
    xf_op op;
    int32_t n_in, n_out;
    int32_t in;       /* its inputs are ins[in .. in + n_in) */
    int32_t out;      /* value number of its first output */
    uint64_t hash;    /* pr_opkey_hash(op, &params) */
    xf_params params; /* canonical (xf_params_canonical) */
} pr_flat_node;

typedef struct pr_flat_value {
    xf_shape shape;
    xf_dtype dtype;
    int32_t producer; /* its node, -1 for an input */
} pr_flat_value;

typedef struct pr_flat_side {
    int n_inputs, n_values, n_nodes, n_outputs;
    pr_flat_value *values;
    int cap_values;
    pr_flat_node *nodes;
    int cap_nodes;
    int32_t *ins;
    int n_ins, cap_ins;
    int32_t *outputs;
    int cap_outputs;
} pr_flat_side;

typedef struct pr_flat pr_flat;
typedef struct pr_flat_feed {
    pr_flat *f;
    int side; /* 0 source, 1 target */
} pr_flat_feed;

/* Entry k of pr_flat.in: source input k's name, and position k of the
 * term view (the input there and the name it takes). */
typedef struct pr_flat_input {
    int32_t name_at;    /* offset of input k's name in names, -1: none */
    int32_t order;      /* the input at position k */
    int32_t name_of;    /* offset of the name position k takes, -1: none */
    unsigned char used; /* scratch of the canonical order */
} pr_flat_input;

struct pr_flat {
    pr_flat_side side[2]; /* source, target */
    char *names;          /* the source inputs' names, each NUL-terminated */
    int n_names, cap_names;
    pr_flat_input *in;
    int cap_in;
    const char **group; /* scratch of the canonical order, per input */
    int cap_group;
    unsigned char *seen; /* scratch, per node */
    int cap_seen;
    pr_flat_feed feed[2];
    xf_graph_sink sink[2]; /* feed the source to sink[0], the target to sink[1] */
};

void pr_flat_init(pr_flat *f);
void pr_flat_free(pr_flat *f);
/* Empties f (its arrays kept), to be fed again. The sinks' messages
 * name the side and the node; the caller names the rule. */
void pr_flat_reset(pr_flat *f);
/* After both sides are fed: checks that they agree as xf_rule_validate
 * asks (the same inputs, the same number of outputs, more than none, of
 * the same types; else XF_ERR_INVALID) and sets the positions:
 * the canonical input order and names (prune.h) with `canonical`, else
 * the inputs as fed. */
xf_status pr_flat_finish(pr_flat *f, int canonical, xf_error *err);
/* Sets f->in[].order and .name_of to the canonical input order and names
 * (inputs.c; the sides agree on their inputs). */
xf_status pr_flat_canonical(pr_flat *f, xf_error *err);
/* The hash operator keys are interned by: op and every parameter byte. */
uint64_t pr_opkey_hash(xf_op op, const xf_params *p);

/* ---------------------------------------------------------- rule views */

typedef struct pr_rules {
    pr_table table;
    pr_rule *rules;
    size_t n;
    int reasons; /* xf_prune_options.reasons */
    int threads; /* xf_prune_options.threads */
    pr_progress *progress;
    int32_t *pool; /* all per-rule arrays */
    size_t n_pool, cap_pool;
    int32_t *scratch; /* while building: a rule's leaves and value terms */
    size_t cap_scratch;
} pr_rules;

static inline int32_t *pr_src_out(const pr_rules *rs, const pr_rule *r)
{
    return rs->pool + r->base;
}
static inline int32_t *pr_dst_out(const pr_rules *rs, const pr_rule *r)
{
    return rs->pool + r->base + r->n_out;
}
static inline int32_t *pr_leaf(const pr_rules *rs, const pr_rule *r)
{
    return rs->pool + r->base + 2 * (size_t)r->n_out;
}
static inline int32_t *pr_src_nodes(const pr_rules *rs, const pr_rule *r)
{
    return pr_leaf(rs, r) + r->n_in;
}
static inline int32_t *pr_dst_nodes(const pr_rules *rs, const pr_rule *r)
{
    return pr_src_nodes(rs, r) + r->n_src_nodes;
}

/* Builds the term view of n rules fed one by one by get(user, i, ...) on
 * helper threads (and put in canonical input order first when
 * `canonical`); takes reasons and threads from o and reports to
 * `progress`. XF_ERR_INVALID names the rule whose sides disagree or that
 * has two inputs with the same name. */
xf_status pr_rules_build(pr_rules *rs, size_t n, xf_prune_get_fn get, void *user, int canonical,
                         const xf_prune_options *o, pr_progress *progress, xf_error *err);
void pr_rules_free(pr_rules *rs);

/* --------------------------------------------------- canonical forms */

/* While serialising, term `from` is written as term `to`, or as a fresh
 * leaf of from's type when `to` is -1 (one fresh leaf per entry). */
typedef struct pr_subst {
    int32_t from;     /* term id to replace (output term or node term) */
    int32_t to;       /* replacement term, or -1 for a fresh leaf */
} pr_subst;

/* A rule shape to serialise: output terms of both sides (n_out each). */
typedef struct pr_tuple {
    int n_out;
    const int32_t *src, *dst;
    const pr_subst *subst;
    int n_subst;
} pr_tuple;

/* Growable token buffer. */
typedef struct pr_tokens {
    int32_t *v;
    uint32_t n, cap;
} pr_tokens;

void pr_tokens_free(pr_tokens *t);

/* Canonical form of a tuple up to input renaming (leaves numbered by first
 * use), swapping the two sides and permuting the outputs: the smallest
 * serialisation over all of those. *out is overwritten. */
xf_status pr_canon(const pr_table *t, const pr_tuple *tu, pr_tokens *out, xf_error *err);
/* Leaf terms of a tuple in order of first use (src outputs, then dst), as
 * written, no permutation. Returns the number written (<= max), -1 when
 * out of memory. */
int pr_first_use(const pr_table *t, const pr_tuple *tu, int32_t *leaves, int max);

/* Readable infix of one term into buf ("matmul(x0, w0)"). */
void pr_term_format(const pr_table *t, int32_t term, char *buf, size_t n);

/* ------------------------------------------------------------- stages */

/* Canonical form of every rule (pr_canon of its outputs) into `index`
 * (form's hash -> first rule with it: only hashes are stored, and a form is
 * compared by serialising the rule again, as the forms of millions of
 * candidates were most of pruning's memory); first[i] gets that first rule. */
xf_status pr_canon_index(const pr_rules *rs, xf_htab *index, long *first, xf_error *err);

/* Marks rule i removed by `stage` because of rule `by`, with the reason
 * (printf format) when rs->reasons. */
xf_status pr_remove(const pr_rules *rs, unsigned char *alive, xf_prune_verdict *v, size_t i,
                    xf_prune_stage stage, long by, xf_error *err, const char *fmt, ...)
    XF_PRINTF(8, 9);

/* Each stage looks at rules with alive[i] != 0, clears alive[i] for those
 * it removes and fills their verdict. */
xf_status pr_stage_renaming(const pr_rules *rs, const long *first, unsigned char *alive,
                            xf_prune_verdict *v, xf_error *err);
xf_status pr_stage_common_subgraph(const pr_rules *rs, const xf_htab *index,
                                   unsigned char *alive, xf_prune_verdict *v, xf_error *err);
xf_status pr_stage_common_supergraph(const pr_rules *rs, const xf_htab *index,
                                     unsigned char *alive, xf_prune_verdict *v, xf_error *err);
xf_status pr_stage_generality(const pr_rules *rs, unsigned char *alive, xf_prune_verdict *v,
                              xf_error *err);

#endif /* XF_PRUNE_PRUNE_INTERNAL_H */
