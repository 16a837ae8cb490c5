/*
 * verify.h — decides candidate substitution rules (the second stage after
 * xfergen): an axiomatic proof and a bounded element-wise check, both with
 * the Z3 SMT solver.
 *
 * 1. Axiomatic proof (shape-generic, verify/axioms*.c, verify/prove*.c):
 *    tensors are values of an uninterpreted sort, every operator an
 *    uninterpreted function with integer parameters (axes relative to the
 *    last dimension, strides, padding mode, activation...), and operator
 *    properties are quantified axioms (a fixed table, each with a name and a
 *    one-line description, listed in docs/verify.md). A rule is proved when
 *    `axioms ∧ src_i ≠ dst_i` is unsat for every mapped output i; each axiom
 *    is asserted behind an assumption literal, so the unsat core names the
 *    axioms the proof rests on. Axioms ignore shapes (the enumerator only
 *    builds well-typed graphs); sizes that matter (concat/split boundaries)
 *    are explicit integer arguments of the encoded terms.
 * 2. Bounded check (independent of the axioms, verify/bounded*.c): both
 *    sides elaborated element-wise over real symbolic inputs at the rule's
 *    own shapes and at other input shapes the rule admits (dims 1..4,
 *    ranks kept, both sides well-typed with equal output shapes): the small
 *    ones and the largest, at most bounded_max_shapes in all (which ones:
 *    verify/bounded_shapes.c, docs/verify.md). Random float inputs are
 *    tried first at each shape; then one solver query per output element
 *    whose normal forms differ, asserting that it differs: unsat everywhere
 *    ⇒ valid, sat ⇒ refuted with the concrete inputs (at that shape) as
 *    counterexample.
 *
 * A solver "unknown" (timeout, memory limit, incomplete quantifier
 * reasoning) is reported as such, never as proved. Z3 errors are caught by
 * an error handler installed on the verifier's context: they become
 * xf_status errors, the process never exits. A verifier is not thread-safe;
 * use one per thread or process.
 *
 * xf_verify_db decides every candidate rule of a rules database
 * (xferverify): each rule in its own forked worker process, here or (with
 * MPI) on other ranks, the verdicts recorded in the database by this
 * process. Every query has Z3's deterministic resource limit (rlimit) as
 * well as a timeout; an unknown records which stopped it. The workers die
 * with the thread that forked them (xf_child_dies_with_parent): call it
 * from a thread that lives until it returns.
 */
#ifndef XF_VERIFY_H
#define XF_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "rulesdb/rulesdb.h"

/* ------------------------------------------------------------- verifier */

typedef struct xf_verify_options {
    unsigned timeout_ms;  /* per solver query; 0: no limit (default
                             XF_VERIFY_TIMEOUT_MS) */
    unsigned rlimit;      /* Z3 resource units (deterministic work count) per proof
                             query and per bounded check; 0: no limit (default
                             XF_VERIFY_RLIMIT, docs/verify.md "Limits") */
    unsigned proof_rlimit; /* a lower limit for each proof query alone (default
                             XF_VERIFY_PROOF_RLIMIT; 0: rlimit alone) */
    int cross_shapes;     /* the cross-check of a proved rule: input-shape assignments
                             that get the exact check, the own first (default 1: the
                             own alone; the float probe runs at all of them) */
    unsigned cross_rlimit; /* a lower limit for the exact part of the bounded
                             cross-check of a rule the axioms proved
                             (xf_verify_bounded_cross; default
                             XF_VERIFY_CROSS_RLIMIT; 0: rlimit alone) */
    unsigned memory_mb;   /* Z3 memory limit (memory_max_size); 0: none (default 0) */
    int bounded_max_dim;  /* bounded check: largest dim per axis (default 4) */
    int bounded_max_shapes; /* bounded check: input-shape assignments checked, the
                               rule's own included (default 64; 1: own shapes only) */
    unsigned seed;        /* solver random seed (default 0) */
    int probe_first;      /* xf_verify_db: run the float probe at every planned shape
                             before the axioms; a rule it refutes at shapes other
                             than its own is stored refuted without a proof attempt
                             (default 1; 0: the axioms first, which also counts the
                             rules the axioms prove at their own shapes only) */
} xf_verify_options;

/* Default rlimit (docs/verify.md "Limits"): 4x the most work any decided
 * rule needed in the 3-operator samples (738 k units, a layer-norm rule's
 * bounded check; at 4 operators no rule counted more than 1.95 M); on an idle core the slow queries count 0.4 to 4 M units
 * a second, so the limit stops them within seconds and the verdict does not
 * depend on the machine's load. */
#define XF_VERIFY_RLIMIT 3000000u

/* Default timeout_ms: a safety net behind the rlimits, long enough that
 * they, not the clock, stop the queries under a heavy load, so that the
 * same database gets the same verdicts on any machine (the default rules
 * database above all: its file name says which rules it holds). At 10 s,
 * rule 8810 of the default database (proved in 6.2 s on a quiet core,
 * 361 k units) was stored unknown when the build ran beside another one
 * (docs/verify.md "Limits"). */
#define XF_VERIFY_TIMEOUT_MS 60000u

/* Default proof_rlimit: the bounded check keeps rlimit. In samples of 300
 * candidates at 3 and at 4 operators no proof that succeeded needed more
 * than 105 k units; the proofs that do not close (layer-norm rules, mostly)
 * reach 500 k in 0.2 to 3 s of CPU where they ran on to the 3 M rlimit or
 * the 10 s timeout before, with the same verdicts (docs/verify.md
 * "Limits"). */
#define XF_VERIFY_PROOF_RLIMIT 500000u

/* Default cross_rlimit: the budget of the exact cross-check of a rule the
 * axioms already proved (the float probe runs at every shape whatever it
 * leaves). The cross-check cannot prove anything the axioms did not; it
 * guards against a wrong axiom or encoding, which the float probes and
 * --check-axioms (full rlimit) also catch, and the rules whose cross-check
 * ran to the 3 M rlimit were 7% of a 4-operator sample and 76% of its CPU
 * (docs/verify.md "Limits"). */
#define XF_VERIFY_CROSS_RLIMIT 300000u

void xf_verify_options_init(xf_verify_options *o);


/* Why a check could not decide (the reason recorded with an unknown verdict). */
typedef enum xf_verify_why {
    XF_WHY_NONE = 0,        /* decided */
    XF_WHY_TIMEOUT = 1,     /* the wall-clock timeout (or the time budget) ran out */
    XF_WHY_RLIMIT = 2,      /* the deterministic resource limit ran out */
    XF_WHY_MEMORY = 3,      /* Z3's memory limit */
    XF_WHY_INCOMPLETE = 4,  /* the theory or the axioms do not decide it (incomplete
                               quantifiers, a model only of abstract functions, the
                               axioms admit a model) */
    XF_WHY_UNSUPPORTED = 5  /* an operator without an encoding */
} xf_verify_why;

const char *xf_verify_why_name(xf_verify_why w); /* "-", "timeout", "rlimit", ... */

/* A Z3 context with its parameters, the declared operator functions and the
 * axioms (all enabled). */
typedef struct xf_verifier xf_verifier;

xf_status xf_verifier_new(const xf_verify_options *o, xf_verifier **out, xf_error *err);
void xf_verifier_free(xf_verifier *v); /* NULL: no-op */
/* Asserts the axioms and runs one small proof, so the solver's one-time
 * set-up (tens of milliseconds) is paid here, and makes the next bounded
 * check's Z3 context (a few milliseconds). xferverify calls it once and
 * then forks a worker per rule from the prepared verifier; proofs and
 * checks give the same answers with or without it. */
xf_status xf_verifier_prepare(xf_verifier *v, xf_error *err);

/* The verifier's revision: raised whenever a change can alter a stored
 * verdict or validity domain (2: sizes a proof reads at the rule's own
 * shapes are held in its domain, and a slice to its axis's own size is not
 * the whole axis, 2026-11-30; 3: a concat's, split's and slice's sizes are
 * terms over the rule's dims in the proof, and a held size the matcher
 * chooses is no proof, 2026-11-30; 4: a broadcast's tie never fixes a size
 * the matcher chooses, so a proof holding it is no proof, 2026-11-30; 5:
 * a concat of classes is an index in the proof by the own shapes,
 * 2026-12-01; 6: a derived rule's domain keeps a step's scalar input one
 * element where it binds a tensor, 2026-12-01; 7: a reshape's merged axis
 * is an index through its parts in the proof by the own shapes, a part
 * fixed only where its own symbolic size is checked, and a whole fixed
 * through its blocks blocks a free split, 2026-12-01; 8: a rejected split
 * with a part the matcher sizes unchecked blocks it too, review 42h's R7,
 * 2026-12-01; 9: a slice's symbolic size in a rule with reshapes is its
 * constant e - s unless it is [0:end] to the end, as the domain reads it,
 * review 42d's L4, and a derived rule's domain holds a slice's axis at its
 * own size where a step's slice to the end binds one of a finite end or
 * the reverse, review 42d's M1, 2026-12-01; 10: a proof by the own shapes
 * stores each input dim it read at its own size in its domain, a reshape's
 * merged axis fixed through its parts among them, review 42h's finding 3,
 * and a concat's axis of several classes beside a reshape's merged axes is
 * argued where they share no class, 2026-12-01; 11: a class only keepdims
 * means mix is checked at every size up to its bound and proved by the own
 * shapes, and a summed class a convolution's bias is added along is not,
 * 2026-12-01; 12: a generator is sized by its consumer only where, at the
 * rule's own shapes, that gives it its own shape (xf_rule_generator_shape,
 * as the matcher binds and builds it), and the ends prove nothing when none
 * of them is admissible, review 44a, 2026-12-01; 13: a rank-0 operand of
 * add, sub or mul keeps the other operand's dims in the proof by the own
 * shapes, added or subtracted a bias along them, and a constant slice
 * [0, e) whose end is its axis's own size is read near its start, i46d,
 * 2026-12-02; 14: the last-axis softmax and layer-norms commute with any
 * reshape that keeps the last axis, a layer-norm ignores a scalar added to
 * its input, and ewadd-view and smul-view also trigger on the reshape of the
 * sum or product, i46c, 2026-12-02; 15: a derived rule's domain keeps at
 * their own sizes the dims that size, in the graph a step rewrites, a
 * generator that step holds at its own shape, matched or made
 * (xf_rule_generator_held), review 44a's F3, i46e, 2026-12-02; 16: a rule's
 * symbolic dims follow the operators as ir's shapes do (a reduce or squeeze
 * of no axes, where's branches, transpose entries from the end, a stepped
 * slice a constant with its input at its own size) and the matcher refuses
 * a source value of another rank, i46g and review 46g, 2026-12-02; 17: a
 * derived rule's domain keeps those dims at their own sizes in every graph
 * of its chain and in its own sides, for a generator any step holds, also
 * one a step made unread that a later step has sized, i48a, 2026-12-02).
 * The default rules database's name carries it, so a database decided by an
 * older verifier is made again, not reused. */
#define XF_VERIFY_REVISION 17

/* ---------------------------------------------------------------- axioms */

typedef struct xf_axiom_info {
    const char *name;        /* short identifier, e.g. "ewadd-comm" */
    const char *description; /* one line for auditors */
    const char *formula;     /* the axiom as SMT-LIB 2 text */
} xf_axiom_info;

/* The axiom table (fixed order; indices are stable within one build). */
int xf_verify_axiom_count(void);
const xf_axiom_info *xf_verify_axiom(int i); /* NULL when out of range */
/* Index of the axiom called `name`, -1 when there is none. */
int xf_verify_axiom_find(const char *name);

/* Enables or disables axiom i in this verifier's proofs (all start enabled).
 * XF_ERR_INVALID for an index out of range. */
xf_status xf_verifier_set_axiom(xf_verifier *v, int i, int enabled, xf_error *err);

/* ----------------------------------------------------------------- proof */

typedef enum xf_proof_result {
    XF_PROOF_PROVED = 0,      /* unsat for every output: follows from the core axioms */
    XF_PROOF_FAILED = 1,      /* sat: the enabled axioms do not imply it */
    XF_PROOF_UNKNOWN = 2,     /* the solver gave up (timeout, memory, incompleteness) */
    XF_PROOF_UNSUPPORTED = 3  /* the rule uses an operator with no axiomatic encoding */
} xf_proof_result;

const char *xf_proof_result_name(xf_proof_result r); /* "proved", "failed", "unknown", "unsupported" */

#define XF_VERIFY_MAX_CORE 64
#define XF_VERIFY_MAX_HELD 32

typedef struct xf_proof {
    xf_proof_result result;
    double time_ms;                 /* wall time of all queries of this rule */
    int n_core;                     /* axioms in the union of the unsat cores */
    int core[XF_VERIFY_MAX_CORE];   /* their indices, ascending */
    char core_names[1024];          /* their names, comma-separated ("" when none) */
    int output;                     /* not proved: the first output that was not (-1: none) */
    xf_verify_why why;              /* not proved: why */
    uint64_t rlimit_used;           /* Z3 resource units spent by the queries */
    char detail[256];               /* solver reason or unsupported op, for users */
    /* Proved: the dims the encoding read at the rule's own size (a swap of
       two axes of size 1, a softmax or mean over one element, a stride over
       one pixel, a kernel enlarged to its own size, a value whose last two
       axes are 1x1 as its own transpose...): the proof holds where each has
       that size (xf_domain_of_rule_held), and where more than
       XF_VERIFY_MAX_HELD (held_all) at the rule's own shapes alone. */
    int n_held, held_all;
    xf_rule_dim_size held[XF_VERIFY_MAX_HELD];
} xf_proof;

/* Proves rule r from the enabled axioms, output by output. Errors (bad rule,
 * Z3 error) return non-OK; a rule that cannot be proved is XF_OK with
 * out->result saying why. */
xf_status xf_verify_prove(xf_verifier *v, const xf_rule *r, xf_proof *out, xf_error *err);

/* Tries to prove enabled-or-not axiom i from the other enabled axioms (TASO's
 * redundancy check). PROVED means axiom i is redundant. */
xf_status xf_verify_axiom_redundant(xf_verifier *v, int i, xf_proof *out, xf_error *err);

/* ---------------------------------------------------------- bounded check */

typedef enum xf_bounded_result {
    XF_BOUNDED_VALID = 0,       /* unsat at every shape checked */
    XF_BOUNDED_REFUTED = 1,     /* sat: counterexample below */
    XF_BOUNDED_UNKNOWN = 2,     /* the solver gave up at some shape */
    XF_BOUNDED_UNSUPPORTED = 3  /* an operator the element-wise elaboration lacks */
} xf_bounded_result;

const char *xf_bounded_result_name(xf_bounded_result r); /* "valid", "refuted", "unknown", "unsupported" */

typedef struct xf_bounded {
    xf_bounded_result result;
    double time_ms;
    int n_shapes;         /* input-shape assignments checked (the rule's own first) */
    int n_admissible;     /* admissible assignments found, own included (1 when
                             bounded_max_shapes is 1: no search) */
    int shape_index;      /* refuted: the refuting assignment, 0 = the rule's own shapes */
    xf_verify_why why;    /* unknown or unsupported: why (the first shape's reason) */
    uint64_t rlimit_used; /* Z3 resource units spent (the check's own context) */
    int proves;           /* VALID from xf_verify_bounded_refute on a rule whose own
                             shapes stand for every shape it applies to (each input
                             dim fixed by the rule, or an index no operator mixes and
                             at least as long as the axes one value holds of it:
                             docs/verify.md, "Proof by the own shapes"): a proof */
    /* proves: the input dims that proof read at their own size only (each
       fixed by the rule, or a reshape's merged axis whose parts all are):
       it holds where each has that size (the domain xferverify stores), and
       where more than XF_VERIFY_MAX_HELD (held_all) at the own shapes alone */
    int n_held, held_all;
    xf_rule_dim_size held[XF_VERIFY_MAX_HELD];
    char detail[320];     /* solver reason, shapes or op, for users */
    /* refuted: the concrete float32 inputs (rule input order, at the
     * refuting shape) and the first output that differs. Owned. */
    int n_inputs;
    xf_tensor *inputs;
    int output;
} xf_bounded;

void xf_bounded_init(xf_bounded *b);
void xf_bounded_free(xf_bounded *b); /* frees inputs; leaves it initialised */

/* Runs the bounded element-wise check of rule r. */
xf_status xf_verify_bounded(xf_verifier *v, const xf_rule *r, xf_bounded *out, xf_error *err);
/* The bounded check of a rule the axioms did not prove: the full check at
 * the rule's own shapes, then only the float probe at the other planned
 * shapes (also when the own shapes spent the time or resource budget).
 * VALID means valid at the own shapes with the floats agreeing at the
 * others (the detail says so), and is a proof (`proves`) when the own
 * shapes stand for every shape the rule applies to; REFUTED and UNKNOWN as
 * xf_verify_bounded. */
xf_status xf_verify_bounded_refute(xf_verifier *v, const xf_rule *r, xf_bounded *out,
                                   xf_error *err);

/* The bounded check as the cross-check of a rule the axioms proved: the
 * exact check at the rule's own shapes (cross_shapes: more), with the smaller of the rlimit and
 * cross_rlimit, and the float probe at every planned shape; results as
 * xf_verify_bounded (a refutation at the own shapes is a disagreement with
 * the axioms, one at other shapes a rule that holds at its own only). */
xf_status xf_verify_bounded_cross(xf_verifier *v, const xf_rule *r, xf_bounded *out,
                                  xf_error *err);

/* The float probe alone: both sides in the float interpreter on random
 * inputs at every planned input shape (the own first), no solver. REFUTED
 * (with the counterexample and shape_index) when the outputs clearly differ
 * at some shape, VALID ("floats agree", not a proof) otherwise. xferverify
 * runs it before the axioms (probe_first): a rule false at shapes other
 * than its own is refuted in milliseconds instead of after a proof attempt
 * that can run to its budget. */
xf_status xf_verify_bounded_probe(xf_verifier *v, const xf_rule *r, xf_bounded *out,
                                  xf_error *err);

/* xf_verify_bounded_cross (proved) or xf_verify_bounded_refute (not) of a
 * rule whose xf_verify_bounded_probe, with this verifier, found the floats
 * agreeing at every planned shape: the same results, without running the
 * probe again at the shapes it covered (it is deterministic: the same plan
 * and seeds). */
xf_status xf_verify_bounded_after_probe(xf_verifier *v, const xf_rule *r, int proved,
                                        xf_bounded *out, xf_error *err);

/* Rule r rebuilt with its inputs at `inputs` (r->src.n_inputs shapes, rule
 * input order, ranks as in r), parameters re-derived as the bounded check
 * does (a split into halves splits the new axis into halves, a depthwise
 * conv keeps group = channels; docs/verify.md). This is how a
 * counterexample found at other shapes is replayed: pass its tensors'
 * shapes. out is xf_rule_init'd here (xf_rule_free it, also after an
 * error); XF_ERR_SHAPE names the node that does not apply at these shapes. */
xf_status xf_verify_rule_at_shapes(const xf_rule *r, const xf_shape *inputs, xf_rule *out,
                                   xf_error *err);

/* Counterexample blob stored in the rules database (docs/verify.md): the
 * input tensors, serialized. *buf xf_malloc'd, caller xf_frees. */
xf_status xf_verify_cex_encode(const xf_tensor *inputs, int n, uint8_t **buf, size_t *len,
                               xf_error *err);
/* Decodes a blob; *inputs xf_malloc'd array of *n tensors (xf_tensor_free each,
 * then free the array). */
xf_status xf_verify_cex_decode(const uint8_t *buf, size_t len, xf_tensor **inputs, int *n,
                               xf_error *err);

/* ------------------------------------------------------- axiom instances */

/* A concrete instance of an axiom: a small rule with the axiom's parameters
 * fixed, which the bounded check can validate (xferverify --check-axioms).
 * `inputs` declares the rule inputs as "name:dims" separated by spaces
 * ("x:2x3 s:" is a 2x3 matrix and a scalar); `src` and `dst` are expressions
 * over them in the small language of verify/axiom_instances.c, e.g.
 * "conv[p=same,act=relu](concat[axis=1](x,y), w)". An axiom may have
 * several instances; some have none. */
typedef struct xf_axiom_instance {
    const char *axiom; /* name of the axiom it instantiates */
    const char *inputs;
    const char *src, *dst;
} xf_axiom_instance;

int xf_verify_axiom_instance_count(void);
const xf_axiom_instance *xf_verify_axiom_instance(int i); /* NULL when out of range */

/* Builds the rule of an instance (any instance, also one not in the table)
 * into r (xf_rule_init'd here; xf_rule_free it, also after an error). A
 * syntax or shape error names the instance and the offending text. */
xf_status xf_verify_axiom_instance_rule(const xf_axiom_instance *inst, xf_rule *r,
                                        xf_error *err);

/* ------------------------------------------------- the axioms' self-check */

/* One axiom checked: its instances' bounded verdict ("valid", "REFUTED",
 * "error", another bounded result's name, or "not checked" without
 * instances) and whether the other axioms prove it ("redundant",
 * "independent", "not derived", "error"). Strings valid during the row
 * callback. */
typedef struct xf_axiom_check {
    const char *name;
    int instances;
    const char *bounded, *redundancy;
    const char *derived_from; /* the axioms it follows from ("" unless redundant) */
    double seconds;
} xf_axiom_check;

typedef struct xf_axiom_check_options {
    xf_verify_options vo; /* the verifier's (timeouts, limits) */
    void (*row)(void *user, const xf_axiom_check *c); /* after each axiom (NULL: none) */
    void (*problem)(void *user, const char *msg); /* a wrong axiom, an instance that is not
                                                     valid or fails, an orphan instance */
    void *user;
} xf_axiom_check_options;

typedef struct xf_axiom_check_summary {
    int axioms, with_instances, valid, refuted, redundant;
    int errors; /* checks that could not run, instances naming no axiom */
} xf_axiom_check_summary;

/* Validates each axiom on its instances with the bounded check and tries
 * to prove it from the others (xferverify --check-axioms). Fails only when
 * the verifier cannot be made; a refuted axiom or a failed check is in *s. */
xf_status xf_verify_check_axioms(const xf_axiom_check_options *o, xf_axiom_check_summary *s,
                                 xf_error *err);

/* ------------------------------------------------ deciding a rules database */

#define XF_VERIFY_MAX_JOBS 64

/* What xf_verify_db has decided so far. */
typedef struct xf_verify_tally {
    int64_t done, total;       /* rules decided; rules selected */
    int64_t proved, refuted, unknown;
    int64_t disagree;          /* proved by the axioms, refuted at the rule's own shapes */
    int64_t shape_specific;    /* proved, refuted only at other input shapes (stored refuted) */
    int64_t by_shapes;         /* proved by the exact check at own shapes that stand for
                                  every shape (xf_bounded.proves), not by the axioms */
    int64_t broken;            /* did not load (corrupt blob, missing graph): nothing written */
    int64_t kept;              /* an error on a rule already proved or refuted: verdict kept */
    int64_t killed;            /* workers killed at the hard deadline (each an unknown or kept) */
    int64_t unknown_why[XF_WHY_UNSUPPORTED + 1]; /* unknown verdicts by the reason that
                                  decided it (the bounded check's when it gave up, else
                                  the proof's); errors and kills under NONE */
    double elapsed_s;          /* since xf_verify_db started */
    double cpu_s;              /* CPU time of the workers (user + system), all ranks */
    int64_t patterns_reused;   /* operator patterns of the bounded check's elaboration that
                                  workers took from earlier workers instead of probing the
                                  operator's kernel (docs/verify.md, "Worker processes") */
} xf_verify_tally;

typedef struct xf_verify_db_options {
    int jobs;              /* worker processes at a time, 1..XF_VERIFY_MAX_JOBS (default 1);
                              with mpi, per worker rank */
    int mpi;               /* 1: the other MPI ranks decide the rules, this one (rank 0)
                              records (xf_verify_mpi_init first; XF_ERR_UNSUPPORTED in a
                              build without MPI) */
    int recheck;           /* also decide rules that already have a verdict */
    long long limit;       /* decide at most this many rules; 0: all */
    int size;              /* only rules of this size (max of both sides' operators);
                              0: every size */
    const int64_t *only;   /* not NULL: of those, only the n_only rules with these ids
                              (ascending; derive/pipeline.c's rounds) */
    int64_t n_only;
    xf_verify_options vo;  /* each rule's verifier */
    const char *version;   /* of the calling tool, recorded with the run */
    void *user;
    /* After each verdict is recorded (may be NULL). */
    void (*on_progress)(void *user, const xf_verify_tally *t);
    /* Rule `id` is proved by the axioms in `core` but refuted by the bounded
     * check at its own shapes: one of those axioms is wrong (may be NULL). */
    void (*on_disagreement)(void *user, int64_t id, const char *core);
    /* Rule `id` got no verdict and keeps the one stored (may be NULL): it
     * did not load (broken: `what` says why), or its worker failed on a rule
     * already proved or refuted. */
    void (*on_kept)(void *user, int64_t id, int broken, xf_rule_status stored, const char *what);
} xf_verify_db_options;

/* Defaults: one job, verifier defaults, no limit. */
void xf_verify_db_options_init(xf_verify_db_options *o);

/* Decides the candidate rules (with recheck: every rule not pruned) of db,
 * the database at `path` (each worker opens it read-only itself). The
 * verifier is prepared once, before the first fork, and every worker
 * inherits a copy. Each rule runs in its own forked process, at most
 * o->jobs at a time, so a crash or a hang costs one rule: a worker that
 * outlives its hard deadline is killed and the rule recorded unknown with
 * the reason, unless it is already proved or refuted: an error is not a
 * verdict and never replaces one (on_kept). A rule that does not load (a
 * corrupt blob, a missing graph row) gets nothing written either: it is
 * reported (on_kept, tally broken) and keeps its status. The verdict combines the two checks: proved only when the
 * axiomatic proof succeeds and the bounded check does not refute; refuted
 * when the bounded check finds a counterexample (stored); unknown
 * otherwise. A rule refuted only at other input shapes is shape-specific
 * (the proof encodes the rule's own sizes): stored refuted and counted.
 * Verdicts are written in short batches (verify/pending_internal.h), the write lock
 * free in between for other writers, so a failure keeps what was decided;
 * the call is recorded as an "xferverify" run. t (filled on every path)
 * says what was decided. */
xf_status xf_verify_db(xf_rulesdb *db, const char *path, const xf_verify_db_options *o,
                       xf_verify_tally *t, xf_error *err);

/* ------------------------------------------------------------------ MPI */

#ifdef XF_HAVE_MPI
/* Built when CMake finds MPI (Open MPI from Debian: libopenmpi-dev). Under
 * `mpirun -n N`, rank 0 calls xf_verify_db with o->mpi set: it owns the
 * database and records; ranks 1..N-1 call xf_verify_mpi_serve, which
 * decides the batches rank 0 hands out (a dynamic queue, docs/verify.md
 * "MPI") until rank 0 calls xf_cluster_finish. Every rank starts with
 * xf_cluster_init (cluster/cluster.h, the transport shared with xfergen).
 * Rank 0 may call xf_verify_db several times in between. A rank that dies
 * ends the whole job (MPI's rule); the verdicts written so far stay, a
 * rerun resumes. */
xf_status xf_verify_mpi_serve(xf_error *err);
#endif

#endif /* XF_VERIFY_H */
