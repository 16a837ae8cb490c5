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

/* Builds the term view of n rules, taken from `rules` or, when it is NULL,
 * fetched one by one with get(user, i, ...) (and then canonicalised first
 * when o->canonical_inputs); takes reasons and threads from o and reports
 * to `progress`. XF_ERR_INVALID names the rule that fails
 * xf_rule_validate or has two inputs with the same name. */
xf_status pr_rules_build(pr_rules *rs, size_t n, const xf_rule *rules, xf_prune_get_fn get,
                         void *user, const xf_prune_options *o, pr_progress *progress,
                         xf_error *err);
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
