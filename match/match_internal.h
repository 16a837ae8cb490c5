/*
 * match_internal.h — (private to match/) the compiled form of a rule set and the
 * per-graph index the matcher works on.
 *
 * A rule is compiled once, at load: its source side becomes a match pattern
 * (operators with their matching form, input references, which values are
 * mapped outputs, how many pattern operators use each internal value, and a
 * search plan saying from which already-matched operator each next one is
 * reached), its target side a template (operators in the target's
 * topological order with how their shape-dependent parameters are
 * re-derived). Parameters themselves stay on the rule's graphs; the matcher
 * recomputes their matching form only for candidates whose 64-bit key
 * already agrees.
 */
#ifndef XF_MATCH_MATCH_INTERNAL_H
#define XF_MATCH_MATCH_INTERNAL_H

#include <string.h>

#include "match/match.h"

/* Outputs of one rule operator (split). */
#define XF_PAT_MAX_NODE_OUT 8

/* A value of a rule side: rule input `idx` (node -1) or output `idx` of
 * operator `node`. */
typedef struct xf_pat_ref {
    int node;
    int idx;
} xf_pat_ref;

/* How the search reaches a pattern operator from what is matched already. */
typedef enum xf_anchor {
    XF_ANCHOR_OP = 0,       /* first step: nodes with its root signature */
    XF_ANCHOR_PRODUCER = 1, /* producer of input `slot` of matched operator `node` */
    XF_ANCHOR_USER = 2,     /* consumers of output `idx` of matched operator `node` */
    XF_ANCHOR_INPUT_USER = 3 /* consumers of the value bound to rule input `idx` */
} xf_anchor;

typedef struct xf_pat_node {
    xf_op op;
    int n_in, n_out;
    xf_pat_ref in[XF_MATCH_MAX_ARITY];
    uint64_t key; /* match_form key */
    int out_rule[XF_PAT_MAX_NODE_OUT]; /* rule output that output o is, -1: internal */
    int n_users[XF_PAT_MAX_NODE_OUT];  /* distinct pattern operators reading output o */
    int out_bare[XF_PAT_MAX_NODE_OUT]; /* mapped output the target replaces by a rule input */
    int form_zero; /* the matching form is all zero bytes (ops without parameters) */
    int cut_free;  /* a split matching any cut of its axis (pattern.c, mark_free_cuts) */
} xf_pat_node;

typedef struct xf_pat_step {
    int node;   /* pattern operator matched at this step */
    xf_anchor anchor;
    int a_node; /* PRODUCER/USER: the matched operator it is reached from */
    int a_idx;  /* PRODUCER: input slot of a_node; USER: output of a_node;
                   INPUT_USER: rule input */
    int a_out;  /* PRODUCER: which output of `node` feeds that slot */
} xf_pat_step;

typedef struct xf_pattern {
    int n_nodes, n_inputs, n_outputs;
    xf_pat_node nodes[XF_MATCH_MAX_NODES]; /* in the source graph's node order */
    xf_pat_step steps[XF_MATCH_MAX_NODES];
    int src_order[XF_MATCH_MAX_NODES]; /* xf_graph_topo_order of the source, the order the
                                          verifier sizes generators in */
    xf_dtype in_dtype[XF_MATCH_MAX_INPUTS];
    int in_used[XF_MATCH_MAX_INPUTS]; /* read by some source operator */
    int in_scalar[XF_MATCH_MAX_INPUTS]; /* rank 0 in the rule: binds only a one-element
                                           value (the proof says nothing of a tensor
                                           broadcast in its place) */
    xf_pat_ref out[XF_MATCH_MAX_OUTPUTS]; /* always an operator output */
    uint64_t root_sig; /* xf_root_sig of the first step's operator */
    /* Reshapes match by kind (xf_view_classify), their sizes bound through
     * the rule's symbolic dims (the template's `dims`); 1 when the rule has
     * reshapes whose sizes do not follow (xf_rule_dims.ok 0): its source
     * reshapes then match only their exact targets. */
    int views_exact;
} xf_pattern;

/* How a generator's shape is re-derived from its first consumer. */
typedef struct xf_tgt_node {
    int dst_node; /* node index in the rule's dst graph */
    xf_op op;
    int n_in, n_out;
    xf_pat_ref in[XF_MATCH_MAX_ARITY]; /* node: target position (topological) */
    int depthwise;                     /* conv with group == its input's channels (> 1) */
    int split_rule[XF_PAT_MAX_NODE_OUT]; /* split: rule output each output is, -1 */
    int gen_user, gen_slot;            /* generator: first consumer position and slot, -1 */
    int gen_rule;                      /* generator that is rule output gen_rule, -1 */
} xf_tgt_node;

typedef struct xf_target_tmpl {
    /* The rule's symbolic dims when it has reshapes that follow the sizes
     * where it applies (owned; NULL otherwise): the target's reshapes take
     * their shapes from them, and every value of both sides must agree with
     * them (xf_rule_dims in ir.h). */
    xf_rule_dims *dims;
    int n_nodes;
    xf_tgt_node nodes[XF_MATCH_MAX_NODES]; /* xf_graph_topo_order of the dst graph */
    xf_pat_ref out[XF_MATCH_MAX_OUTPUTS]; /* node -1: a bare rule input */
} xf_target_tmpl;

typedef struct xf_rs_rule {
    xf_rule rule;
    int64_t id;
    char *text;
    xf_pattern pat;
    xf_target_tmpl tgt;
    int swaps_only; /* its sides are equal up to operand order (xf_ruleset_swaps_only) */
    int growth;     /* operators its target has more than its source */
} xf_rs_rule;

struct xf_ruleset {
    int n, cap;
    xf_rs_rule *r;
    int skipped;
    char why[512]; /* reason of the first skip */
    int duplicates; /* rules dropped as duplicates of an earlier action */
    int commutative; /* xf_ruleset_options.commutative */
    int irrelevant; /* actions dropped: they never match a graph reachable from
                       xf_ruleset_options.restrict_to */
    /* Distinct root signatures (ascending), each action's among them, and
     * the actions of each (root_actions[root_start[j] .. root_start[j + 1]),
     * by growth, then index): xf_match_all visits only the actions of the
     * signatures the graph has, and of those only the ones that grow it
     * little enough (xf_match_all_within), so its cost does not grow with
     * the actions it leaves out (most of a large set). */
    int n_roots;
    uint64_t *root_sig;
    int *root_of; /* per action */
    int *root_start, *root_actions;
};

struct xf_graph_index {
    int n_nodes, n_values;
    uint64_t *key;      /* per node: match_form key (0 when it can never match) */
    uint8_t *form_zero; /* per node: its matching form is all zero bytes */
    /* Root signatures (xf_root_sig), XF_ROOT_VARIANTS per node, in a
     * chained hash table whose chains list nodes in ascending order. */
    uint64_t *sig;
    int *sig_node, *sig_next; /* node of an entry; next entry in its chain, -1 */
    int *sig_head;            /* first entry per bucket, -1 */
    uint64_t sig_mask;        /* buckets - 1 */
    int n_sig;                /* entries */
    int *users_start;   /* n_values + 1 offsets into users */
    int *users;         /* distinct consuming nodes of each value, ascending */
    uint8_t *is_output; /* per value: a graph output */
    uint8_t *weight_only; /* per value */
    int *topo_pos;      /* per node: position in a topological order */
};

/* The matching form of an operator: parameters in rank-relative form
 * (relparams) at the rank of its first input, split sizes cleared (they
 * follow from shapes, which the target check compares), window strides,
 * dilations and conv group of 0 set to 1, a depthwise conv's group
 * replaced by -1, and a key hashing op, arity, the form and (for ops
 * that are not rank-polymorphic) the rank, and for a slice not its ends. Returns 0 when the node can never
 * match (an axis out of range). in0 is NULL for an operator without inputs;
 * key may be NULL when only the form is wanted. */
int match_form(xf_op op, const xf_params *p, int n_in, int n_out, const xf_shape *in0,
                  xf_params *rel, uint64_t *key);

/* 1 when a model slice in matching form `model`, of an input of shape in0,
 * ends where a rule's slice in form `rule` does (the key leaves ends out):
 * the rule's end "to the end" (XF_SLICE_TO_THE_END) only where the model's
 * reaches the end of its axis, any other only where the model's is the
 * same number. */
int match_slice_ends_agree(const xf_params *rule, const xf_params *model, const xf_shape *in0);

/* 1 when the matching form rel (match_form) is all zero bytes up to the
 * (cleared) split sizes: two such forms are equal without comparing them. */
int match_form_zero(const xf_params *rel);

/* The index of root signature sig among rs->root_sig, or -1 when no
 * action has it (binary search). */
int match_root_index(const xf_ruleset *rs, uint64_t sig);

/* Compiles rule `r` into pattern and template; returns 1, or 0 with *why
 * set when the matcher cannot use it, or -1 when out of memory. */
int match_rule_compile(const xf_rule *r, xf_pattern *pat, xf_target_tmpl *tgt, const char **why);
/* Frees what match_rule_compile allocated in tgt (its dims). */
void match_rule_compiled_free(xf_target_tmpl *tgt);
/* 1 for the two-input operators whose operands may be swapped (add, mul,
 * min, max): the matcher binds them either way round, so a rule written
 * with a bias second also matches a model that adds it first. */
int match_commutes(xf_op op, int n_inputs);

/* The compiled form of rule r (pattern and template from match_rule_compile)
 * as words: for the source, op, arity, input wiring, output mapping, use
 * counts, input dtypes, the matching form of each operator's parameters
 * (plus the rank where the op is not rank-polymorphic) and the search plan;
 * for the target, op, wiring, how shape-dependent parameters are re-derived
 * and the parameters in the rank-relative form instantiation starts from
 * (generators: as written); rule inputs numbered by first use in the
 * source. Two rules with equal words find the same locations on every
 * graph (up to the order of their input bindings) and rewrite them the same
 * way. Writes at most
 * XF_RULE_FORM_WORDS words to w and returns how many. */
#define XF_RULE_FORM_WORDS                                                               \
    (8 + 2 * XF_MATCH_MAX_INPUTS + XF_MATCH_MAX_OUTPUTS * 2 +                            \
     2 * XF_MATCH_MAX_NODES *                                                            \
         (16 + 2 * XF_MATCH_MAX_ARITY + 3 * XF_PAT_MAX_NODE_OUT + sizeof(xf_params) / 8 + 1))
size_t match_rule_form_words(const xf_rule *r, const xf_pattern *pat, const xf_target_tmpl *tgt,
                          uint64_t *w);
/* The rule's validity domain with its inputs numbered as in the form
 * words (by first use in the source), normalised: two actions of one form
 * compare their domains so (ruleset.c, dedupe). */
xf_status match_rule_canonical_domain(const xf_rule *r, const xf_pattern *pat, xf_domain *out,
                                   xf_error *err);

/* Whether the model's `shape` may stand for value v of rule graph rg: a
 * value of rank 0 in the rule (a rule input, a dot product of vectors)
 * only by one element, as the proof saw it; any other value always. */
int match_scalar_kept(const xf_graph *rg, int v, const xf_shape *shape);

/* xf_match_instantiate that also returns the target's output dtypes/shapes
 * (rule output order). err may be NULL (no message formatted: fast). */
xf_status match_instantiate_full(const xf_rs_rule *rr, const xf_graph *g,
                                    const xf_graph_index *ix, const xf_match *m,
                                    xf_match_target *t, xf_dtype *out_dt, xf_shape *out_sh,
                                    xf_error *err);

/* The first location, in xf_match_rule's order, of the first of the actions
 * rules[0..n-1] that has one, into *m, and that action's position in rules
 * into *which (-1: none). With node >= 0 only a location holding graph node
 * `node` among an action's first `scan` locations counts. Equal to calling
 * xf_match_rule on each action in turn, in one scratch context, and an
 * action whose root signature occurs nowhere in g costs one look-up per
 * distinct signature (the closure's view moves: thousands of actions, a
 * few of which ever match). */
xf_status match_first(const xf_ruleset *rs, const int *rules, int n, const xf_graph *g,
                      const xf_graph_index *ix, int node, int scan, xf_match *m, int *which,
                      xf_error *err);

/* Mixes the words of n bytes at p (n a multiple of 8) into h, skipping
 * zero words (each mixed word carries its offset): parameter structs are
 * mostly zero, so this costs a few mixes per operator. */
static inline uint64_t xf_mix_sparse(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t off = 0; off + 8 <= n; off += 8) {
        uint64_t w;
        memcpy(&w, b + off, 8);
        if (w) h = xf_hash_u64(h, w ^ ((uint64_t)off << 52));
    }
    return h;
}

/* What produces an operator input, for root signatures: output `output` of
 * an operator `op`, or 0 for a graph input, constant or rule input. */
static inline uint64_t xf_producer_tag(xf_op op, int output)
{
    return ((uint64_t)op << 8 | (uint64_t)output) + 1;
}

/* Root signature: the operator's key combined with the producers of its
 * first two inputs, each of which may be left out (a rule input there
 * matches any producer): bit 0 of variant takes input 0's, bit 1 input 1's.
 * The first pattern operator's candidates are the graph nodes with its
 * signature, so rules whose root has the right op but the wrong producers
 * cost nothing. */
#define XF_ROOT_VARIANTS 4
static inline uint64_t xf_root_sig(uint64_t key, int variant, uint64_t p0, uint64_t p1)
{
    uint64_t h = xf_hash_u64(key, (uint64_t)variant);
    if (variant & 1) h = xf_hash_u64(h, p0);
    if (variant & 2) h = xf_hash_u64(h, p1);
    return h;
}

/* Root signatures a node has at most: every variant, and those with its
 * operands swapped for a commutative operator. */
#define XF_MATCH_NODE_SIGS (2 * XF_ROOT_VARIANTS - 1)
/* The root signatures graph node `node` is entered under in ix's table,
 * into sig (XF_MATCH_NODE_SIGS entries); returns how many (0: the node can
 * never match). */
int match_node_sigs(const xf_graph *g, const xf_graph_index *ix, int node, uint64_t *sig);

/* A scan of one graph by one action at a time from chosen first operators
 * (the closure's incremental matching, closure.c): the matcher's scratch,
 * kept between calls, and what it counts. */
typedef struct match_scan match_scan;
xf_status match_scan_new(match_scan **out, xf_error *err);
void match_scan_free(match_scan *s); /* NULL is a no-op */
/* Points the scan at g and its index ix (call again after either changes). */
xf_status match_scan_prepare(match_scan *s, const xf_graph *g, const xf_graph_index *ix,
                             xf_error *err);
/* The locations of action `rule` whose first operator (the pattern's step
 * 0) is one of roots[0..n-1] (roots NULL: any node, as xf_match_rule):
 * *found of them, the first in xf_match_rule's order into *first. Roots
 * without the action's root signature are passed over (xf_match_rule
 * finds nothing there); each root is to be given once.
 * match_scan_kept then lists the roots that have a location or a
 * candidate only the cycle check refused (that check reads the whole
 * graph; every other one reads the candidate's nodes, their inputs and
 * their outputs' readers alone). */
xf_status match_scan_rule(match_scan *s, const xf_ruleset *rs, int rule, const int *roots, int n,
                          xf_match *first, int *found);
const int *match_scan_kept(const match_scan *s, int *n);
/* Root nodes tried since match_scan_new. */
int64_t match_scan_roots(const match_scan *s);

/* What a closure needs of its rule set, worked out once (a search runs a
 * closure for every action with a view, each of which would otherwise walk
 * thousands of rules' graphs): the view moves, slices' first (the order
 * the closure looks them up in) and in action order (closure.c's move_at),
 * how far from its first operator each one's location reaches, and the
 * cancellation to read backwards (closure.c). */
struct xf_closure_plan {
    const xf_ruleset *rs;
    int n;
    int *first, *plain;
    int *reach;   /* per position of `first`: its source operators - 1 (the
                     most operators a location's others are away from its
                     first, one reader or producer at a time) */
    uint8_t *siblings; /* per position: the move reaches an operator through a
                          rule input another reads (XF_ANCHOR_INPUT_USER) */
    int max_reach[2];  /* the largest reach of the moves without, with siblings */
    int cancel;
};

/* The closure's next move found from what the moves before it changed
 * (closure_walk.c). After a move, a location that none of the changed nodes
 * is part of was a candidate before it, refused for the same reasons (every
 * check but the cycle check reads its nodes, their inputs and their
 * outputs' readers only), so each move's locations are searched from the
 * roots near a changed node and from the roots it had a location at (or a
 * candidate the cycle check refused) before: the same first location of
 * the same first move as matching the whole graph. */
typedef struct match_walk match_walk;
xf_status match_walk_new(const xf_closure_plan *p, match_walk **out, xf_error *err);
void match_walk_free(match_walk *w); /* NULL is a no-op */
/* The next look-up matches the whole graph (the start, or after an edit the
 * walk did not follow: merged reshapes, a wrap). */
void match_walk_restart(match_walk *w);
/* The first location of the first move of p->first that has one, in g
 * indexed by ix, into m (m->rule -1: none). */
xf_status match_walk_next(match_walk *w, const xf_closure_plan *p, const xf_graph *g,
                            const xf_graph_index *ix, xf_match *m, xf_error *err);
/* Before move m is applied to g: marks the nodes it changes (the readers of
 * its outputs, its matched nodes, the producers of its inputs). */
void match_walk_mark(match_walk *w, const xf_graph *g, const xf_graph_index *ix,
                       const xf_match *m);
/* After it: g is the rewritten graph, from[i] the node of the old one (of
 * n_old nodes) node i copies (xf_match_apply_from). */
xf_status match_walk_moved(match_walk *w, const xf_graph *g, int n_old, const int *from,
                             xf_error *err);
/* The nodes the last move changed (NULL after a restart: any may have). */
const int *match_walk_changed(const match_walk *w, int *n);
/* Root nodes matched since match_walk_new. */
int64_t match_walk_roots(const match_walk *w);

/* xf_match_apply_from on g itself instead of a copy: g becomes the
 * rewritten graph (its node and value arrays grow, holes are filled from
 * the end, as in the copy). ix is g's index before the call. On failure g
 * is left half edited: the caller frees it. */
xf_status match_apply_in_place(const xf_ruleset *rs, xf_graph *g, const xf_graph_index *ix,
                               const xf_match *m, int *node_from, xf_error *err);

#endif /* XF_MATCH_MATCH_INTERNAL_H */
