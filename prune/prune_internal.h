/*
 * prune_internal.h — private structures shared by the pruning stages.
 *
 * Every rule side is turned into hash-consed expression terms: a term is a
 * graph input (leaf) or one output of an operator applied to argument terms,
 * so two structurally equal subexpressions anywhere in the rule set get the
 * same term id and compare with one integer test. The stages work on these
 * views (pr_rule), never on the xf_graph node lists.
 *
 * A key map stores int32 token sequences (canonical rule forms, bucket keys)
 * and maps each to a long.
 */
#ifndef XF_PRUNE_INTERNAL_H
#define XF_PRUNE_INTERNAL_H

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

typedef struct pr_term {
    int32_t opkey;  /* interned (op, params), or PR_LEAF */
    int32_t type;   /* interned (dtype, shape); PR_NO_TYPE for node terms */
    int32_t out;    /* output index; leaf: interned name; node term: -1 */
    int32_t n_kids;
    size_t kids;    /* offset into pr_table.kids */
    int32_t size;   /* operators in the unfolded expression tree */
    uint64_t hash;
} pr_term;

typedef struct pr_table {
    pr_term *terms;
    size_t n_terms, cap_terms;
    int32_t *kids;
    size_t n_kids, cap_kids;
    xf_htab term_index; /* term hash -> term id */
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

/* One rule as terms. Arrays are owned by the pr_rules that holds it. */
typedef struct pr_rule {
    size_t base;                /* offset of this rule's arrays in pr_rules.pool */
    int n_out;
    int32_t *src_out, *dst_out; /* output terms, n_out each */
    int n_in;
    int32_t *leaf;              /* leaf term of input position i */
    int n_src_nodes, n_dst_nodes;
    int32_t *src_nodes, *dst_nodes; /* node terms (op applications) of each side */
    int32_t tree_size;          /* operators in the unfolded trees of all outputs */
    int n_used_leaves;          /* distinct inputs the outputs read */
} pr_rule;

typedef struct pr_rules {
    pr_table table;
    pr_rule *rules;
    size_t n;
    int reasons; /* xf_prune_options.reasons */
    int32_t *pool; /* all per-rule arrays */
    size_t n_pool, cap_pool;
} pr_rules;

/* Builds the term view of n rules, taken from `rules` or, when it is NULL,
 * fetched one by one with get(user, i, ...) (and then canonicalised first
 * when `canonical`). XF_ERR_INVALID names the rule that fails
 * xf_rule_validate or has two inputs with the same name. */
xf_status pr_rules_build(pr_rules *rs, size_t n, const xf_rule *rules, xf_prune_get_fn get,
                         void *user, int canonical, xf_error *err);
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
 * (form -> first rule with it); first[i] gets that first rule. */
xf_status pr_canon_index(const pr_rules *rs, pr_keymap *index, long *first, xf_error *err);

/* Marks rule i removed by `stage` because of rule `by`, with the reason
 * (printf format) when rs->reasons. */
xf_status pr_remove(const pr_rules *rs, unsigned char *alive, xf_prune_verdict *v, size_t i,
                    xf_prune_stage stage, long by, xf_error *err, const char *fmt, ...)
    XF_PRINTF(8, 9);

/* Each stage looks at rules with alive[i] != 0, clears alive[i] for those
 * it removes and fills their verdict. */
xf_status pr_stage_renaming(const pr_rules *rs, const long *first, unsigned char *alive,
                            xf_prune_verdict *v, xf_error *err);
xf_status pr_stage_common_subgraph(const pr_rules *rs, const pr_keymap *index,
                                   unsigned char *alive, xf_prune_verdict *v, xf_error *err);
xf_status pr_stage_common_supergraph(const pr_rules *rs, const pr_keymap *index,
                                     unsigned char *alive, xf_prune_verdict *v, xf_error *err);
xf_status pr_stage_generality(const pr_rules *rs, unsigned char *alive, xf_prune_verdict *v,
                              xf_error *err);

#endif /* XF_PRUNE_INTERNAL_H */
