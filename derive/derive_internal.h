/*
 * derive_internal.h — (private to derive/) the deriver's insides, shared by the
 * search (search.c), the turning around of a meet into one chain
 * (chain.c) and the location text of a step (location.c).
 */
#ifndef XF_DERIVE_DERIVE_INTERNAL_H
#define XF_DERIVE_DERIVE_INTERNAL_H

#include "match/match.h"
#include "derive.h"

struct xf_deriver {
    xf_ruleset *rs;
    int n_rules;
    xf_derive_options o;
    xf_match_list ml;    /* scratch of one expansion, kept between candidates */
    xf_match_list chain; /* the same for turning a meet around (chain.c) */
};

/* The step of action `action` of rs at match m: its rule, direction and
 * location (the graph nodes m binds, in the rule's source order). */
void derive_step_of(const xf_ruleset *rs, int action, const xf_match *m, xf_rulesdb_step *s);
/* Parses a location into at most max node indices; the count, or -1 when
 * the text is not a location. */
int derive_location_parse(const char *text, int *nodes, int max);

/* One rewrite the search made: action at match (in the graph before). */
typedef struct derive_move {
    int action;
    xf_match m;
} derive_move;

/* Builds the chain of a meet into out->steps: the moves a[0..na) from
 * src reach a graph whose hash is b_hash[nb - 1]; b_hash[0..nb) are the
 * hashes of the graphs from the target (b_hash[0] = hash of the target)
 * to the meet, b[i] the move from graph i to graph i + 1 of them. The
 * target's half is turned around as far as it goes by finding, at each of
 * its graphs, a rewrite back to the graph before it; the moves that cannot
 * be are kept as steps from the target. *ok 0 when the moves do not
 * replay (the meet is not a derivation). */
xf_status derive_chain(xf_deriver *d, const xf_graph *src, const derive_move *a, int na,
                       const uint64_t *b_hash, const derive_move *b, int nb,
                       xf_derivation *out, int *ok, xf_error *err);

/* Appends to ids (n of cap) the rules of db with status `status` and size
 * in [1, below) (below 0: any size; size_eq > 0: exactly that size), in id
 * order; rules that do not load are left out (derive_db.c). */
xf_status derive_list_ids(xf_rulesdb *db, xf_rule_status status, int below, int size_eq,
                          int64_t **ids, int64_t *n, int64_t *cap, xf_error *err);

/* The solver's plan at one size (forms.c), over the rules of `size` in db
 * of every status but pruned: firsts, those that are the first (lowest id)
 * of their compiled form (xf_rule_form_hash: the same rule at other tensor
 * shapes has the same form), with those the matcher cannot use, in order
 * of their smaller side's operators, then id; others, the rest in id
 * order, and first_of[i] the first of others[i]'s form. The arrays are the
 * caller's (derive_plan_free). The solver's first rounds (pipeline.c) take
 * the firsts that are still candidates. */
typedef struct derive_plan {
    int64_t *firsts, n_firsts;
    int64_t *others, *first_of, n_others;
} derive_plan;

xf_status derive_plan_forms(xf_rulesdb *db, int size, derive_plan *p, xf_error *err);
void derive_plan_free(derive_plan *p);

/* ------------------------------------------------ the pass's searches */

#define XF_DERIVE_MAX_JOBS 64

/* One candidate searched (derive_db.c), as a derive worker sends it back
 * (workers.c): a plain struct, written whole to a pipe. */
typedef struct derive_msg {
    int64_t index;  /* the candidate's position in the pass's list; -1: the
                       worker failed (failed: its status, errmsg) */
    int32_t failed;
    int32_t broken; /* the rule did not load: left as it is */
    double time_ms; /* of the search */
    xf_derivation dv;
    char errmsg[256];
} derive_msg;

/* Loads candidate id from db and searches it with d into m (index kept),
 * at most depth deep (0: d's own depth). A rule that does not load is
 * m->broken, not an error; errors are running out of memory, I/O and
 * those of the search. */
xf_status derive_search_one(xf_rulesdb *db, xf_deriver *d, int64_t id, int depth, derive_msg *m,
                            xf_error *err);

typedef xf_status (*derive_got_fn)(void *user, const derive_msg *m, xf_error *err);

/* Searches the n candidates ids (ids[i] at most depths[i] deep, 0: d's
 * depth; depths NULL: all at d's) with d in `jobs` forked workers (each
 * its own read-only handle on db's file) and calls got, in this process,
 * for each message as it arrives (in no fixed order). The first error (of
 * a worker, or returned by got) stops the workers and is returned. */
xf_status derive_search_forked(xf_rulesdb *db, xf_deriver *d, const int64_t *ids,
                               const uint8_t *depths, int64_t n, int jobs, derive_got_fn got,
                               void *user, xf_error *err);

/* Writes the axis of concat, split and softmax counted from the end, so one
 * operation has one spelling and one hash (normalize.c). */
void derive_normalize(xf_graph *g);

/* g rewritten by action at m (ix: g's index), with its hash: XF_OK and
 * *applied 1, or *applied 0 when the rewrite does not apply (the matcher
 * promised it would; treated as no move). Only running out of memory and
 * hashing failures are errors. The result is normalized (derive_normalize). */
xf_status derive_apply(xf_deriver *d, const xf_graph *g, const xf_graph_index *ix,
                       const xf_match *m, xf_graph *out, uint64_t *hash, int *applied,
                       xf_error *err);

#endif
