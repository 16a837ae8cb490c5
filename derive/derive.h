/*
 * derive.h — derived rules: most large candidate rules follow from smaller
 * proved ones (Quartz, Ruler). Before any solver call, xferverify tries to
 * join the two sides of a candidate by rewriting with the rules already
 * proved or derived at smaller sizes; a joined candidate is stored as
 * `derived` with its chain of rewrites as its proof, and only the rest goes
 * to Z3.
 *
 * Pieces:
 *  - the deriver: a rule set (match/: the matcher and the rewriter
 *    the agent uses too, both directions of every rule) and a bounded search
 *    from both sides of a candidate at once, breadth first, meeting in the
 *    middle on the structural graph hash (xf_graph_hash); depth, states and
 *    the size of intermediate graphs are capped (search.c);
 *  - the chain: a meet gives rewrites from the source and from the target
 *    to one graph; the target's half is turned around (each of its steps
 *    undone by the rewrite that leads back to the graph before it), so the
 *    stored derivation is one chain from source to target (chain.c); a
 *    step with no way back (x => f(x) has no operator to match) stays a
 *    step from the target, and the chain meets in the middle;
 *  - replay: a stored chain applied step by step to the source with the
 *    rules as the database holds them, checking that each step's rule is
 *    proved or derived, matches where the chain says, and that the last
 *    graph is the target. Nothing is stored derived without it (replay.c);
 *  - the passes: xf_derive_db derives the candidates of one size in a rules
 *    database (derive_db.c); xf_derive_verify_db decides a database size by
 *    size in ascending order, deriving first and sending the rest to the
 *    solver (verify/, pipeline.c) in rounds: one candidate per compiled
 *    form first (forms.c), each round followed by a derive pass that also
 *    steps by the rules of the size just proved; after the last round the
 *    size's unknowns are searched once more, with every rule of the size
 *    the solver proved. xferverify calls it.
 *
 * Depends on ir/, rulesdb/, match/ and verify/. Nothing here prints
 * or exits; fallible functions return an xf_status and fill an xf_error.
 */
#ifndef XF_DERIVE_H
#define XF_DERIVE_H

#include <stdint.h>

#include "ir/ir.h"
#include "rulesdb/rulesdb.h"
#include "verify/verify.h"

/* Longest chain: a meet at depth max_depth from each side. */
#define XF_DERIVE_MAX_DEPTH 4
#define XF_DERIVE_MAX_STEPS (2 * XF_DERIVE_MAX_DEPTH)

typedef struct xf_derive_options {
    int max_depth;  /* rewrites from each side, 1..XF_DERIVE_MAX_DEPTH (default 3) */
    int max_states; /* graphs kept per side and candidate (default 256) */
    int max_extra;  /* intermediate graphs have at most this many operators more
                       than the candidate's larger side (default 1) */
} xf_derive_options;

void xf_derive_options_init(xf_derive_options *o);

/* ---------------------------------------------------------------- deriver */

typedef struct xf_deriver xf_deriver;

/* A deriver over n rules given in memory; ids[i] > 0 is rule i's database
 * id, the id its steps name. Each rule is used in both directions. */
xf_status xf_deriver_new(const xf_rule *rules, const int64_t *ids, int n,
                         const xf_derive_options *o, xf_deriver **out, xf_error *err);
/* A deriver over the rules of db that are proved or derived and smaller
 * than `below_size` operators (max of both sides; 0: any size), and with
 * same_size also the rules of exactly below_size operators that are proved
 * (by the solver: a derived rule of that size is never a step, see
 * xf_derive_replay); only[0..n_only) (ascending ids, NULL: all) limits
 * those to the rules listed. Derived rules without a recorded validity
 * domain (schema 3) are never steps. */
xf_status xf_deriver_load(xf_rulesdb *db, int below_size, int same_size,
                          const int64_t *only, int64_t n_only, const xf_derive_options *o,
                          xf_deriver **out, xf_error *err);
void xf_deriver_free(xf_deriver *d); /* NULL: no-op */
/* Rules loaded, and rewrite actions (both directions, duplicates and
 * unusable ones dropped) the search tries. */
int xf_deriver_rules(const xf_deriver *d);
int xf_deriver_actions(const xf_deriver *d);

/* What a search found. */
typedef struct xf_derivation {
    int found;
    int n_steps;
    xf_rulesdb_step steps[XF_DERIVE_MAX_STEPS]; /* source => target, in order */
    int states;      /* graphs reached within the size bound, both sides */
    int expanded;    /* graphs whose rewrites were all tried */
    int matched;     /* locations the matcher listed, summed over the expansions
                        (rules growing a graph past the size bound left out) */
    int rewrites;    /* of them rewritten (xf_match_apply), before a meet */
    int from_target; /* steps of them that apply to the target (a rewrite of the
                        target's half that has no way back, x => f(x) read
                        backwards: the chain meets in the middle) */
    int unreversed;  /* meets dropped: their moves did not replay */
} xf_derivation;

/* Searches for a chain of rewrites from r->src to r->dst (a candidate
 * whose sides read the same inputs). Not finding one is XF_OK with
 * out->found 0; errors are running out of memory and malformed rules. */
xf_status xf_derive_rule(xf_deriver *d, const xf_rule *r, xf_derivation *out, xf_error *err);

/* ----------------------------------------------------------------- replay */

/* Called after each replayed step: the step, the rule it used as stored
 * (its infix text in info) and the graph it made. */
typedef void (*xf_derive_step_fn)(void *user, int i, const xf_rulesdb_step *s,
                                  const xf_rulesdb_rule_info *by, const xf_graph *after);

/* Replays the chain of rule `id` (loaded from db as r) and checks it:
 * every step names a rule of db other than `id`, proved or derived with
 * fewer operators, or proved with as many (never a derived rule of its
 * size, so chains cannot lean on each other in a circle), that matches at the stored location in the stated direction, and the graph
 * the steps from the source make has the structural hash of the one the
 * steps from the target make from r->dst (r->dst itself when there are
 * none). XF_ERR_MISMATCH names the first step that fails. on_step may be
 * NULL; `after` is the graph of the step's side. */
xf_status xf_derive_replay(xf_rulesdb *db, int64_t id, const xf_rule *r,
                           const xf_rulesdb_step *steps, int n, xf_derive_step_fn on_step,
                           void *user, xf_error *err);

/* xf_derive_replay that also composes where the chain holds: *out (reset
 * here) gets the derived rule's validity domain, the conditions of its own
 * sides and, for every step, those of the graph the step rewrites and of
 * the step's rule (its recorded domain) at the dims the step binds, all in
 * terms of r's inputs, normalised. A derived rule holds exactly there
 * (docs/derive.md "Where a derived rule holds"). On failure *out is
 * unknown (known 0). */
xf_status xf_derive_domain(xf_rulesdb *db, int64_t id, const xf_rule *r,
                           const xf_rulesdb_step *steps, int n, xf_domain *out, xf_error *err);

/* ---------------------------------------------------------- database pass */

typedef struct xf_derive_tally {
    int size;            /* operators of the candidates considered */
    int unknowns;        /* 1: they were the size's unknowns (xf_derive_db_options) */
    int64_t total, done; /* candidates of that size; tried so far */
    int64_t derived;     /* joined, replayed and stored derived */
    int64_t later;       /* of them: in the pass between the solver's rounds
                            (xf_derive_verify_db), rules of the size as steps */
    int64_t after;       /* of them: rules the solver had left unknown, derived
                            after its last round by the rules of the size too */
    int64_t states;      /* graphs reached, summed */
    int64_t unreversed;  /* meets dropped (see xf_derivation) */
    int64_t met;         /* derived with steps from the target too */
    int64_t broken;      /* did not load: left as they are */
    int rules, actions;  /* of the deriver */
    double elapsed_s;
} xf_derive_tally;

typedef struct xf_derive_db_options {
    xf_derive_options d;
    int size;        /* the candidates of this size (>= 1) */
    int same_size;   /* 1: the proved rules of this size are steps too */
    const int64_t *same_ids; /* with same_size: only these (ascending ids; NULL: every
                                proved rule of the size), so a pass between the
                                solver's rounds steps by what the rounds before it
                                proved, whatever a killed run had decided beyond */
    int64_t n_same_ids;
    int unknowns;    /* 1: search the size's unknown rules (what the solver left)
                        instead of its candidates */
    const int64_t *only; /* search only the candidates (or unknowns) listed here
                            (ascending ids; NULL: every one) */
    int64_t n_only;
    const int64_t *shallow; /* of those, search these (ascending ids; NULL: none)
                               at most shallow_depth deep (below d.max_depth) */
    int64_t n_shallow;
    int shallow_depth;
    int jobs;        /* searches in this many forked workers at a time (default 1:
                        in this process); the same rules are derived either way */
    long long limit; /* try at most this many; 0: all */
    void *user;
    void (*on_progress)(void *user, const xf_derive_tally *t); /* may be NULL */
} xf_derive_db_options;

void xf_derive_db_options_init(xf_derive_db_options *o);

/* Tries every candidate of o->size in db with the rules proved or derived
 * at smaller sizes; each chain found is replayed and stored (status
 * derived, its steps, the search time). Writes go in short batches, so an
 * interrupted pass keeps what it derived. t is filled on every path. */
xf_status xf_derive_db(xf_rulesdb *db, const xf_derive_db_options *o, xf_derive_tally *t,
                       xf_error *err);

/* ------------------------------------------------------------ whole run */

typedef struct xf_derive_verify_options {
    int derive;                /* 1 (default): derive before the solver at each size */
    int rounds;                /* the first candidate of each compiled form goes to the
                                  solver first, in this many rounds, each followed by a
                                  derive pass that also steps by the rules of the size
                                  proved (default 2; 0: one round, no pass between) */
    int firsts_up_to;          /* the passes between rounds search the later rounds'
                                  firsts of their form at the round depth at sizes up to
                                  this one (default 3; 0: at every size); at larger sizes
                                  at firsts_depth (docs/derive.md "Rules of the
                                  candidate's own size") */
    int firsts_depth;          /* that depth (default 1; 0: not searched, only the other
                                  shapes of the forms decided so far are) */
    int round_depth;           /* the passes between rounds search at most this deep
                                  (default 2; dopt.d.max_depth if lower): with the size's
                                  own rules each expansion makes many more graphs, and
                                  depth 2 finds nearly all that depth 3 does (docs/derive.md) */
    int max_size;              /* decide sizes up to this one; 0: all */
    xf_derive_db_options dopt; /* size and limit are set per size */
    xf_verify_db_options vopt; /* size set per size; its limit counts over all sizes */
    void *user;
    /* Before each size is decided (may be NULL). */
    void (*on_start)(void *user, int size);
    /* At the end of each size (may be NULL): what the derive pass (NULL
     * when off) and the solver (NULL when nothing was left) did. */
    void (*on_size)(void *user, int size, const xf_derive_tally *d, const xf_verify_tally *v);
} xf_derive_verify_options;

void xf_derive_verify_options_init(xf_derive_verify_options *o);

/* Decides the rules of db (the file at path) size by size, smallest first:
 * derive the candidates of that size, then send what is left to the
 * solver (xf_verify_db with that size): the first candidate of each
 * compiled form (xf_rule_form_hash) in o->rounds rounds, the smaller
 * side's operators first, each followed by a derive pass that also steps
 * by the rules of the size proved so far (same_size; above
 * o->firsts_up_to operators, the passes before the last round search the
 * later rounds' firsts only o->firsts_depth deep); then the rest (all
 * at once with recheck, without derive or with rounds 0); then, with
 * derive and without recheck, the size's unknown rules are searched with
 * every rule of the size proved (a rule the solver left unknown may follow
 * from ones it proved later). `total` sums the solver's tallies, as the
 * solver gave them; derived sums the derive passes', the unknowns derived
 * afterwards included (on_size gets them apart: xf_derive_tally.after). */
xf_status xf_derive_verify_db(xf_rulesdb *db, const char *path, const xf_derive_verify_options *o,
                              xf_verify_tally *total, int64_t *derived, xf_error *err);

#endif /* XF_DERIVE_H */
