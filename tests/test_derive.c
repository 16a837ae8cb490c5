/*
 * test_derive.c — derived rules (derive/): candidates joined by rewriting
 * with smaller proved rules are stored derived with a chain that replays,
 * false candidates never are, tampered chains do not replay, the schema
 * version 2 -> 3 migration keeps every row, and xf_derive_verify_db decides
 * sizes in ascending order with the real solver, deriving what follows
 * from what it proved below, and after its first round at a size from the
 * rules of that size it proved (the same rule at other shapes waits;
 * above a size, the later rounds' firsts are not searched then). A
 * rule whose rewrites all land over the search's size bound is not
 * matched, and changes nothing found. Every stored derivation of the databases made
 * here is replayed and each of its steps checked to use a proved or
 * derived, smaller rule (replay_all).
 *
 * The hand-made rules are over 2x2 float tensors a, b, c, d: commutativity
 * and associativity of ewadd, and candidates such as a+b+c reordered.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "match/match.h"
#include "derive/derive.h"
#include "testutil.h"

static const int64_t D22[2] = {2, 2};
static const char *const NAMES[4] = {"a", "b", "c", "d"};

static const int64_t D33[2] = {3, 3};

/* Rule "src => dst" over the first n_in of a, b, c, d, each of shape dims. */
static void make_rule_at(xf_rule *r, const char *src, const char *dst, int n_in,
                         const int64_t *dims)
{
    xf_rule_init(r);
    xf_error err;
    for (int side = 0; side < 2; side++) {
        xf_graph *g = side ? &r->dst : &r->src;
        for (int i = 0; i < n_in; i++) xf_test_input(g, NAMES[i], 2, dims);
        const char *text = side ? dst : src;
        ck_assert_msg(xf_graph_parse(g, text, NULL, NULL, &err) == XF_OK, "%s: %s", text, err.msg);
    }
    ck_assert_msg(xf_rule_validate(r, &err) == XF_OK, "%s", err.msg);
}

static int64_t add_rule_at(xf_rulesdb *db, const char *src, const char *dst, int n_in,
                           const int64_t *dims, xf_rule_status status)
{
    xf_rule r;
    make_rule_at(&r, src, dst, n_in, dims);
    xf_rulesdb_rule_meta meta = {status, 0, NULL, 0};
    int64_t id = 0;
    xf_error err;
    ck_assert_msg(xf_rulesdb_add_rule(db, &r, &meta, &id, NULL, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r);
    return id;
}

static int64_t add_rule(xf_rulesdb *db, const char *src, const char *dst, int n_in,
                        xf_rule_status status)
{
    return add_rule_at(db, src, dst, n_in, D22, status);
}

static xf_rule_status status_of(xf_rulesdb *db, int64_t id)
{
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    xf_error err;
    ck_assert_msg(xf_rulesdb_get_rule(db, id, &info, &err) == XF_OK, "%s", err.msg);
    xf_rule_status s = info.status;
    xf_rulesdb_rule_info_free(&info);
    return s;
}

/* Replays every derived rule of db, checks each step's rule is proved or
 * derived and smaller, or proved and as large, and that source and target
 * compute the same function (the interpreter, as an independent witness).
 * Returns how many; *same_size counts the steps by a rule as large. */
static int replay_all(xf_rulesdb *db, int *same_size)
{
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.status = XF_RULE_DERIVED;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info, by;
    xf_rulesdb_rule_info_init(&info);
    xf_rulesdb_rule_info_init(&by);
    xf_error err;
    int n = 0;
    ck_assert_int_eq(xf_rulesdb_iter_begin(db, &f, &it, &err), XF_OK);
    for (int has = 1;;) {
        ck_assert_int_eq(xf_rulesdb_iter_next(it, &info, &has, &err), XF_OK);
        if (!has) break;
        xf_rulesdb_step *steps = NULL;
        int k = 0;
        ck_assert_int_eq(xf_rulesdb_get_derivation(db, info.id, &steps, &k, &err), XF_OK);
        ck_assert_msg(k > 0, "derived rule %lld has no derivation", (long long)info.id);
        for (int i = 0; i < k; i++) {
            ck_assert_int_eq(xf_rulesdb_get_rule(db, steps[i].by_rule, &by, &err), XF_OK);
            ck_assert(by.status == XF_RULE_PROVED || by.status == XF_RULE_DERIVED);
            ck_assert(by.size < info.size || (by.size == info.size && by.status == XF_RULE_PROVED));
            ck_assert_int_ne(by.id, info.id);
            if (same_size) *same_size += by.size == info.size;
        }
        xf_rule r;
        ck_assert_int_eq(xf_rulesdb_load_rule(db, info.id, &r, &err), XF_OK);
        ck_assert_msg(xf_derive_replay(db, info.id, &r, steps, k, NULL, NULL, &err) == XF_OK,
                      "%s", err.msg);
        xf_test_expect_same_function(&r.src, &r.dst, 7, 1e-5);
        xf_rule_free(&r);
        xf_free(steps);
        n++;
    }
    xf_rulesdb_iter_free(it);
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_rule_info_free(&by);
    return n;
}

/* ------------------------------------------------------ hand-made rules */

typedef struct fixture {
    xf_rulesdb *db;
    int64_t comm, assoc;      /* proved */
    int64_t c2, c3a, c3b;     /* derivable */
    int64_t f2, f3, ewmul3;   /* false, or with no rule to rewrite by */
} fixture;

static void fixture_open(fixture *x, const char *name)
{
    const char *path = xf_test_tmp(name);
    xf_test_remove_db(path);
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &x->db, &err) == XF_OK, "%s", err.msg);
    x->comm = add_rule(x->db, "ewadd(a, b)", "ewadd(b, a)", 2, XF_RULE_PROVED);
    x->assoc = add_rule(x->db, "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(b, c))", 3, XF_RULE_PROVED);
    x->c2 = add_rule(x->db, "ewadd(ewadd(a, b), c)", "ewadd(c, ewadd(b, a))", 3,
                     XF_RULE_CANDIDATE);
    x->c3a = add_rule(x->db, "ewadd(ewadd(ewadd(a, b), c), d)", "ewadd(a, ewadd(b, ewadd(c, d)))",
                      4, XF_RULE_CANDIDATE);
    x->c3b = add_rule(x->db, "ewadd(ewadd(ewadd(a, b), c), d)", "ewadd(d, ewadd(c, ewadd(b, a)))",
                      4, XF_RULE_CANDIDATE);
    x->f2 = add_rule(x->db, "ewadd(ewadd(a, b), c)", "ewadd(ewadd(a, b), a)", 3,
                     XF_RULE_CANDIDATE);
    x->f3 = add_rule(x->db, "ewadd(ewadd(ewadd(a, b), c), d)", "ewmul(ewadd(ewadd(a, b), c), d)",
                     4, XF_RULE_CANDIDATE);
    x->ewmul3 = add_rule(x->db, "ewmul(ewmul(a, b), c)", "ewmul(a, ewmul(b, c))", 3,
                         XF_RULE_CANDIDATE);
}

static xf_derive_tally derive_size_jobs(xf_rulesdb *db, int size, int jobs)
{
    xf_derive_db_options o;
    xf_derive_db_options_init(&o);
    o.size = size;
    o.jobs = jobs;
    xf_derive_tally t;
    xf_error err;
    ck_assert_msg(xf_derive_db(db, &o, &t, &err) == XF_OK, "%s", err.msg);
    return t;
}

static xf_derive_tally derive_size(xf_rulesdb *db, int size)
{
    return derive_size_jobs(db, size, 1);
}

START_TEST(derives_from_comm_assoc)
{
    fixture x;
    fixture_open(&x, "derive_hand.db");
    xf_derive_tally t2 = derive_size(x.db, 2);
    ck_assert_int_eq(t2.total, 3); /* c2, f2, ewmul3 */
    ck_assert_int_eq(t2.derived, 1);
    ck_assert_int_eq(t2.rules, 1); /* only the one-operator rule is smaller */
    ck_assert_int_eq(status_of(x.db, x.c2), XF_RULE_DERIVED);
    ck_assert_int_eq(status_of(x.db, x.f2), XF_RULE_CANDIDATE);
    ck_assert_int_eq(status_of(x.db, x.ewmul3), XF_RULE_CANDIDATE);

    xf_derive_tally t3 = derive_size_jobs(x.db, 3, 2); /* searched in two forked workers */
    ck_assert_int_eq(t3.total, 3);
    ck_assert_int_eq(t3.derived, 2);
    ck_assert_int_eq(t3.rules, 3); /* comm, assoc and the derived c2 */
    ck_assert_int_eq(status_of(x.db, x.c3a), XF_RULE_DERIVED);
    ck_assert_int_eq(status_of(x.db, x.c3b), XF_RULE_DERIVED);
    ck_assert_int_eq(status_of(x.db, x.f3), XF_RULE_CANDIDATE);

    /* c3a needs associativity (twice): no chain of commutations does it */
    xf_rulesdb_step *steps = NULL;
    int n = 0, uses_assoc = 0;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_get_derivation(x.db, x.c3a, &steps, &n, &err), XF_OK);
    ck_assert_int_ge(n, 2);
    for (int i = 0; i < n; i++) uses_assoc += steps[i].by_rule == x.assoc;
    ck_assert_int_ge(uses_assoc, 2);
    xf_free(steps);
    int same = 0;
    ck_assert_int_eq(replay_all(x.db, &same), 3);
    ck_assert_int_eq(same, 0); /* no pass here stepped by a rule of the size */

    /* the agent's rule set: proved rules, and with `derived` the derived ones too */
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.both_directions = 0;
    xf_ruleset *rs = NULL;
    ck_assert_int_eq(xf_ruleset_load(xf_test_tmp("derive_hand.db"), &ro, &rs, &err), XF_OK);
    ck_assert_int_eq(xf_ruleset_count(rs), 2);
    xf_ruleset_free(rs);
    ro.derived = 1;
    ck_assert_int_eq(xf_ruleset_load(xf_test_tmp("derive_hand.db"), &ro, &rs, &err), XF_OK);
    ck_assert_int_eq(xf_ruleset_count(rs), 5);
    for (int i = 0; i < xf_ruleset_count(rs); i++) {
        int64_t rid = xf_ruleset_rule_id(rs, i);
        xf_rule_status rst = status_of(x.db, rid);
        ck_assert(rst == XF_RULE_PROVED || rst == XF_RULE_DERIVED);
    }
    xf_ruleset_free(rs);

    /* a verdict replacing derived drops the chain (trigger) */
    xf_rulesdb_verdict v = {XF_RULE_PROVED, 1.0, NULL, NULL, NULL, 0, NULL};
    ck_assert_int_eq(xf_rulesdb_set_verdict(x.db, x.c2, &v, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_get_derivation(x.db, x.c2, &steps, &n, &err), XF_OK);
    ck_assert_int_eq(n, 0);
    xf_rulesdb_close(x.db);
}
END_TEST

/* A chain may step by a proved rule of the candidate's own size when the
 * pass is told so (same_size: the pass between the solver's rounds), never
 * by a derived one (tampered_chains_do_not_replay). */
START_TEST(same_size_proved_rules_are_steps)
{
    const char *path = xf_test_tmp("derive_same.db");
    xf_test_remove_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    add_rule(db, "ewadd(a, b)", "ewadd(b, a)", 2, XF_RULE_PROVED);
    int64_t assoc = add_rule(db, "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(b, c))", 3,
                             XF_RULE_PROVED);
    /* a alone on the right needs associativity, a rule of the same size */
    int64_t q = add_rule(db, "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(c, b))", 3,
                         XF_RULE_CANDIDATE);
    /* the same rule at 3x3, left unknown: searched only when unknowns are */
    int64_t u = add_rule_at(db, "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(c, b))", 3, D33,
                            XF_RULE_UNKNOWN);
    xf_derive_tally t = derive_size(db, 2);
    ck_assert_int_eq(t.derived, 0);
    ck_assert_int_eq(t.rules, 1);
    ck_assert_int_eq(status_of(db, q), XF_RULE_CANDIDATE);
    xf_derive_db_options o;
    xf_derive_db_options_init(&o);
    o.size = 2;
    o.same_size = 1;
    ck_assert_msg(xf_derive_db(db, &o, &t, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(t.rules, 2);
    ck_assert_int_eq(t.derived, 1);
    ck_assert_int_eq(status_of(db, q), XF_RULE_DERIVED);
    ck_assert_int_eq(status_of(db, u), XF_RULE_UNKNOWN);
    o.unknowns = 1;
    ck_assert_msg(xf_derive_db(db, &o, &t, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(t.total, 1);
    ck_assert_int_eq(t.unknowns, 1);
    ck_assert_int_eq(t.derived, 1);
    ck_assert_int_eq(status_of(db, u), XF_RULE_DERIVED);
    int same = 0;
    ck_assert_int_eq(replay_all(db, &same), 2);
    ck_assert_int_ge(same, 2);
    /* the step by assoc fails once assoc is no longer proved */
    ck_assert_int_eq(xf_rulesdb_set_status(db, assoc, XF_RULE_UNKNOWN, NULL, 0, &err), XF_OK);
    xf_rulesdb_step *steps = NULL;
    int n = 0;
    ck_assert_int_eq(xf_rulesdb_get_derivation(db, q, &steps, &n, &err), XF_OK);
    xf_rule r;
    ck_assert_int_eq(xf_rulesdb_load_rule(db, q, &r, &err), XF_OK);
    ck_assert_int_eq(xf_derive_replay(db, q, &r, steps, n, NULL, NULL, &err), XF_ERR_MISMATCH);
    xf_test_expect_contains(err.msg, "which is unknown");
    xf_rule_free(&r);
    xf_free(steps);
    xf_rulesdb_close(db);
}
END_TEST

/* A rule whose rewrites would make graphs over the size bound (the
 * candidate's larger side plus max_extra operators) is not even matched:
 * nothing over the bound is kept or met. relu(a) => relu(relu(relu(a)))
 * adds two operators to graphs of four (bound five) wherever it applies;
 * with it among the rules the search matches and rewrites exactly as
 * much, reaches the same graphs and finds the same chain as without it. */
START_TEST(rules_past_the_size_bound_are_not_matched)
{
    xf_rule rules[3], cand;
    make_rule_at(&rules[0], "ewadd(a, b)", "ewadd(b, a)", 2, D22);
    make_rule_at(&rules[1], "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(b, c))", 3, D22);
    make_rule_at(&rules[2], "relu(a)", "relu(relu(relu(a)))", 1, D22);
    make_rule_at(&cand, "relu(ewadd(ewadd(a, b), c))", "relu(ewadd(c, ewadd(b, a)))", 3, D22);
    const int64_t ids[3] = {1, 2, 3};
    xf_derivation dv[2]; /* without the growing rule, with it */
    xf_error err;
    for (int k = 0; k < 2; k++) {
        xf_deriver *d = NULL;
        ck_assert_msg(xf_deriver_new(rules, ids, 2 + k, NULL, &d, &err) == XF_OK, "%s", err.msg);
        ck_assert_msg(xf_derive_rule(d, &cand, &dv[k], &err) == XF_OK, "%s", err.msg);
        xf_deriver_free(d);
    }
    ck_assert(dv[0].found && dv[1].found);
    ck_assert_int_eq(dv[1].n_steps, dv[0].n_steps);
    for (int i = 0; i < dv[0].n_steps; i++) {
        ck_assert_int_eq(dv[1].steps[i].by_rule, dv[0].steps[i].by_rule);
        ck_assert_int_eq(dv[1].steps[i].backward, dv[0].steps[i].backward);
        ck_assert_int_eq(dv[1].steps[i].from_target, dv[0].steps[i].from_target);
        ck_assert_str_eq(dv[1].steps[i].location, dv[0].steps[i].location);
    }
    ck_assert_int_eq(dv[1].expanded, dv[0].expanded);
    ck_assert_int_eq(dv[1].states, dv[0].states);
    ck_assert_int_eq(dv[1].matched, dv[0].matched);
    ck_assert_int_eq(dv[1].rewrites, dv[0].rewrites);
    ck_assert_int_gt(dv[0].rewrites, dv[0].expanded); /* more than one rewrite a graph */
    for (int i = 0; i < 3; i++) xf_rule_free(&rules[i]);
    xf_rule_free(&cand);
}
END_TEST

/* The derivation of c3a, tampered with in one way, must not replay. */
typedef void (*tamper_fn)(xf_rulesdb_step *steps, int *n, const fixture *x);

static void expect_no_replay(fixture *x, const char *what, tamper_fn tamper, const char *needle)
{
    xf_rulesdb_step *steps = NULL;
    int n = 0;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_get_derivation(x->db, x->c3a, &steps, &n, &err), XF_OK);
    ck_assert_int_gt(n, 0);
    tamper(steps, &n, x);
    xf_rule r;
    ck_assert_int_eq(xf_rulesdb_load_rule(x->db, x->c3a, &r, &err), XF_OK);
    xf_status st = xf_derive_replay(x->db, x->c3a, &r, steps, n, NULL, NULL, &err);
    ck_assert_msg(st == XF_ERR_MISMATCH, "%s: replayed (%s)", what, xf_status_name(st));
    xf_test_expect_contains(err.msg, needle);
    xf_rule_free(&r);
    xf_free(steps);
}

static void t_location(xf_rulesdb_step *s, int *n, const fixture *x)
{
    (void)n, (void)x;
    snprintf(s[0].location, sizeof s[0].location, "7");
}
static void t_truncate(xf_rulesdb_step *s, int *n, const fixture *x)
{
    (void)s, (void)x;
    (*n)--;
}
static void t_self(xf_rulesdb_step *s, int *n, const fixture *x)
{
    (void)n;
    s[0].by_rule = x->c3a;
}
static void t_false(xf_rulesdb_step *s, int *n, const fixture *x)
{
    (void)n;
    s[0].by_rule = x->f2; /* a candidate, not proved */
}
static void t_same_size(xf_rulesdb_step *s, int *n, const fixture *x)
{
    (void)n;
    s[0].by_rule = x->c3b; /* derived, but as large as c3a */
}

START_TEST(tampered_chains_do_not_replay)
{
    fixture x;
    fixture_open(&x, "derive_tamper.db");
    derive_size(x.db, 2);
    derive_size(x.db, 3);
    expect_no_replay(&x, "location", t_location, "does not match at nodes 7");
    expect_no_replay(&x, "truncated", t_truncate, "does not join the sides");
    expect_no_replay(&x, "itself", t_self, "uses the rule itself");
    expect_no_replay(&x, "unproved", t_false, "which is candidate");
    expect_no_replay(&x, "same size", t_same_size, "derived, not proved, at 3");
    /* the chain of c2 does not prove the false f2 */
    xf_rulesdb_step *steps = NULL;
    int n = 0;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_get_derivation(x.db, x.c2, &steps, &n, &err), XF_OK);
    xf_rule r;
    ck_assert_int_eq(xf_rulesdb_load_rule(x.db, x.f2, &r, &err), XF_OK);
    ck_assert_int_eq(xf_derive_replay(x.db, x.f2, &r, steps, n, NULL, NULL, &err),
                     XF_ERR_MISMATCH);
    xf_rule_free(&r);
    /* and is refused as a stored proof that uses the rule itself */
    steps[0].by_rule = x.f2;
    ck_assert_int_eq(xf_rulesdb_set_derived(x.db, x.f2, steps, n, 0, NULL, NULL, &err), XF_ERR_INVALID);
    ck_assert_int_eq(status_of(x.db, x.f2), XF_RULE_CANDIDATE);
    xf_free(steps);
    /* a rule a chain rests on that is refuted later makes the chain fail */
    ck_assert_int_eq(xf_rulesdb_set_status(x.db, x.assoc, XF_RULE_REFUTED, NULL, 0, &err), XF_OK);
    expect_no_replay(&x, "refuted", t_truncate, "which is refuted");
    xf_rulesdb_close(x.db);
}
END_TEST

/* ---------------------------------------------------------- migration */

static const char downgrade_to_v2[] =
    "DROP TRIGGER rules_underived; DROP TABLE derivations;"
    "CREATE TABLE rules_v2 (id INTEGER PRIMARY KEY,"
    " src_graph INTEGER NOT NULL REFERENCES graphs (id),"
    " dst_graph INTEGER NOT NULL REFERENCES graphs (id), input_names TEXT NOT NULL,"
    " n_outputs INTEGER NOT NULL, src_ops INTEGER NOT NULL, dst_ops INTEGER NOT NULL,"
    " size INTEGER NOT NULL, fingerprint INTEGER NOT NULL, status TEXT NOT NULL"
    "  CHECK (status IN ('candidate', 'proved', 'refuted', 'unknown', 'pruned')),"
    " why TEXT, subsumed_by INTEGER REFERENCES rules (id), run_id INTEGER REFERENCES runs (id),"
    " verify_ms REAL, axioms TEXT, verdict_detail TEXT, counterexample BLOB, verified_at TEXT,"
    " UNIQUE (src_graph, dst_graph));"
    "INSERT INTO rules_v2 SELECT id, src_graph, dst_graph, input_names, n_outputs, src_ops,"
    " dst_ops, size, fingerprint, status, why, subsumed_by, run_id, verify_ms, axioms,"
    " verdict_detail, counterexample, verified_at FROM rules; DROP TABLE rules;"
    "ALTER TABLE rules_v2 RENAME TO rules;"
    "CREATE INDEX rules_status ON rules (status); CREATE INDEX rules_size ON rules (size);"
    "PRAGMA user_version = 2";

static int64_t digest(const char *path)
{
    return xf_test_sql_int(path, "SELECT sum(id * 7 + length(status) * 3 + src_graph +"
                                 " dst_graph * 5 + coalesce(subsumed_by, 0) * 11 +"
                                 " coalesce(length(why), 0) + coalesce(run_id, 0) * 13 +"
                                 " length(coalesce(verdict_detail, ''))) FROM rules");
}

START_TEST(migration_v2_to_v3_keeps_rows)
{
    fixture x;
    fixture_open(&x, "derive_v2.db");
    const char *path = xf_test_tmp("derive_v2.db");
    xf_error err;
    xf_rulesdb_run_desc d = {"xfergen", "0.1.0", "--max-ops 3", NULL, NULL, 1};
    int64_t run;
    ck_assert_int_eq(xf_rulesdb_run_start(x.db, &d, &run, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_set_status(x.db, x.f3, XF_RULE_PRUNED, "common subgraph", x.c3a,
                                           &err),
                     XF_OK);
    xf_rulesdb_verdict v = {XF_RULE_REFUTED, 12.5, NULL, "bounded: refuted", NULL, 0, NULL};
    ck_assert_int_eq(xf_rulesdb_set_verdict(x.db, x.f2, &v, &err), XF_OK);
    xf_rulesdb_close(x.db);
    int64_t rules = xf_test_sql_int(path, "SELECT count(*) FROM rules");
    int64_t ops = xf_test_sql_int(path, "SELECT count(*) FROM rule_ops");
    int64_t sum = digest(path);
    xf_test_sql_exec(path, downgrade_to_v2);
    ck_assert_int_eq(xf_test_sql_int(path, "PRAGMA user_version"), 2);
    ck_assert_int_eq(digest(path), sum);

    /* read-only: read as it is, no derivations */
    xf_rulesdb *db = NULL;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_rulesdb_schema_version(db), 2);
    int64_t n = 0;
    ck_assert_int_eq(xf_rulesdb_count_rules(db, NULL, &n, &err), XF_OK);
    ck_assert_int_eq(n, rules);
    xf_rulesdb_step *steps = NULL;
    int k = -1;
    ck_assert_int_eq(xf_rulesdb_get_derivation(db, x.c2, &steps, &k, &err), XF_OK);
    ck_assert_int_eq(k, 0);
    ck_assert_ptr_null(steps);
    xf_rulesdb_close(db);

    /* a writer migrates: every row, id, status and index kept */
    ck_assert_msg(xf_rulesdb_open(path, 0, &db, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_rulesdb_schema_version(db), XF_RULESDB_SCHEMA_VERSION);
    xf_derive_tally t = derive_size(db, 2);
    ck_assert_int_eq(t.derived, 1);
    xf_rulesdb_close(db);
    ck_assert_int_eq(xf_test_sql_int(path, "PRAGMA user_version"), XF_RULESDB_SCHEMA_VERSION);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM rules"), rules);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM rule_ops"), ops);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM sqlite_schema WHERE name IN"
                                           " ('rules_status', 'rules_size', 'rules_underived',"
                                           " 'derivations')"),
                     4);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM rules WHERE status = 'derived'"),
                     1);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT subsumed_by FROM rules WHERE status = 'pruned'"),
                     x.c3a);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    /* the CHECK admits derived and still refuses a status that is not one */
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "UPDATE rules SET status = 'derived' WHERE id = 1", NULL,
                                  NULL, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "UPDATE rules SET status = 'bogus' WHERE id = 1", NULL, NULL,
                                  NULL) & 0xff,
                     SQLITE_CONSTRAINT);
    sqlite3_close(h);
}
END_TEST

/* ------------------------------------------------------------ the pipeline */

/* on_size of the pipeline: sums the unknowns derived after the solver. */
static void count_after(void *user, int size, const xf_derive_tally *d, const xf_verify_tally *v)
{
    (void)size, (void)v;
    if (d) *(int64_t *)user += d->after;
}

/* The whole run's options of these tests: two workers, a short check, and
 * on_size counting into *count. */
static void pipeline_options(xf_derive_verify_options *o,
                             void (*on_size)(void *, int, const xf_derive_tally *,
                                             const xf_verify_tally *),
                             int64_t *count)
{
    xf_derive_verify_options_init(o);
    o->user = count;
    o->on_size = on_size;
    o->vopt.jobs = 2;
    o->vopt.vo.timeout_ms = 10000;
    o->vopt.vo.bounded_max_shapes = 4;
}

/* The derived rule's domain where its one step is by a rule proved only at
 * a restricted domain: mean(mean(a)) => mean(a) stored proved with
 * "a[-1] == 1" (as xferverify stores it when its proof read the mean over
 * one element, verify/prove_encode.c), a candidate that follows by that
 * rule applied at transpose(u) (u of 1x2: the rule's a[-1] is u's first
 * axis). Its own sides demand nothing of u; the chain holds only where
 * u[-2] == 1, and the derived rule is stored with exactly that, never
 * wider. With the step's rule recorded over the whole of its operators'
 * domain (""), the derived one is "" too: a derived domain is as narrow as
 * its chain's rules, no narrower. */
/* reduce_mean[axes=-1,keepdims] applied `means` times to a (transposed
 * first with transpose): one side of the rules below. */
static void means_of(xf_graph *g, const int64_t *dims, int transpose, int means)
{
    xf_error err;
    int v = xf_test_input(g, "a", 2, dims);
    if (transpose) {
        xf_params tp = xf_params_default();
        tp.n_axes = 2;
        tp.axes[0] = 1, tp.axes[1] = 0;
        v = xf_graph_op(g, XF_OP_TRANSPOSE, &tp, &v, 1, &err);
    }
    xf_params mp = xf_params_default();
    mp.n_axes = 1;
    mp.axes[0] = -1;
    mp.keepdims = 1;
    for (int i = 0; i < means && v >= 0; i++) v = xf_graph_op(g, XF_OP_REDUCE_MEAN, &mp, &v, 1, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    xf_test_out(g, v);
}

static int64_t add_means_rule(xf_rulesdb *db, const int64_t *dims, int transpose)
{
    xf_rule r;
    xf_rule_init(&r);
    means_of(&r.src, dims, transpose, 2);
    means_of(&r.dst, dims, transpose, 1);
    xf_rulesdb_rule_meta meta = {XF_RULE_CANDIDATE, 0, NULL, 0};
    int64_t id = 0;
    xf_error err;
    ck_assert_msg(xf_rulesdb_add_rule(db, &r, &meta, &id, NULL, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r);
    return id;
}

static const char *derived_domain_by(const char *step_domain, char *buf, size_t n)
{
    static const int64_t D21[2] = {2, 1}, D12[2] = {1, 2};
    const char *path = xf_test_tmp("derive_held.db");
    xf_test_remove_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    int64_t mm = add_means_rule(db, D21, 0);
    xf_rulesdb_verdict v = {XF_RULE_PROVED, 1.0, NULL, NULL, NULL, 0, step_domain};
    ck_assert_int_eq(xf_rulesdb_set_verdict(db, mm, &v, &err), XF_OK);
    int64_t c = add_means_rule(db, D12, 1);
    xf_derive_tally t = derive_size(db, 3);
    ck_assert_int_eq(t.derived, 1);
    ck_assert_int_eq(status_of(db, c), XF_RULE_DERIVED);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    ck_assert_int_eq(xf_rulesdb_get_rule(db, c, &info, &err), XF_OK);
    ck_assert_ptr_nonnull(info.domain);
    snprintf(buf, n, "%s", info.domain);
    xf_rulesdb_rule_info_free(&info);
    ck_assert_int_eq(replay_all(db, NULL), 1);
    xf_rulesdb_close(db);
    return buf;
}

START_TEST(derived_domain_is_no_wider_than_its_chain)
{
    char buf[256];
    const char *d = derived_domain_by("a[-1] == 1", buf, sizeof buf);
    ck_assert_msg(strcmp(d, "a[-2] == 1") == 0, "derived domain '%s'", d);
    d = derived_domain_by("", buf, sizeof buf);
    ck_assert_msg(strcmp(d, "") == 0, "derived domain '%s'", d);
}
END_TEST

START_TEST(pipeline_derives_after_solving)
{
    const char *path = xf_test_tmp("derive_pipeline.db");
    xf_test_remove_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    /* nothing proved yet: the solver decides sizes 1 and 2 first */
    int64_t comm = add_rule(db, "ewadd(a, b)", "ewadd(b, a)", 2, XF_RULE_CANDIDATE);
    int64_t assoc = add_rule(db, "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(b, c))", 3,
                             XF_RULE_CANDIDATE);
    int64_t c2 = add_rule(db, "ewadd(ewadd(a, b), c)", "ewadd(c, ewadd(b, a))", 3,
                          XF_RULE_CANDIDATE);
    int64_t f2 = add_rule(db, "ewadd(ewadd(a, b), c)", "ewadd(ewadd(a, b), a)", 3,
                          XF_RULE_CANDIDATE);
    int64_t c3 = add_rule(db, "ewadd(ewadd(ewadd(a, b), c), d)", "ewadd(a, ewadd(b, ewadd(c, d)))",
                          4, XF_RULE_CANDIDATE);
    /* the same rules at 3x3: they wait for the solver's first round and are
     * derived in one step by the rule of their size proved in it */
    int64_t comm33 = add_rule_at(db, "ewadd(a, b)", "ewadd(b, a)", 2, D33, XF_RULE_CANDIDATE);
    int64_t assoc33 = add_rule_at(db, "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(b, c))", 3, D33,
                                  XF_RULE_CANDIDATE);
    /* a rule an earlier run left unknown that follows from assoc, a rule of
     * its size: the pass after the solver's last round derives it */
    int64_t left = add_rule_at(db, "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(c, b))", 3, D33,
                               XF_RULE_UNKNOWN);
    xf_derive_verify_options o;
    int64_t after = 0;
    pipeline_options(&o, count_after, &after);
    xf_verify_tally t;
    int64_t derived = 0;
    ck_assert_msg(xf_derive_verify_db(db, path, &o, &t, &derived, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(status_of(db, comm), XF_RULE_PROVED);
    ck_assert_int_eq(status_of(db, assoc), XF_RULE_PROVED);
    ck_assert_int_eq(status_of(db, c2), XF_RULE_DERIVED);
    ck_assert_int_eq(status_of(db, f2), XF_RULE_REFUTED);
    ck_assert_int_eq(status_of(db, c3), XF_RULE_DERIVED);
    ck_assert_int_eq(status_of(db, comm33), XF_RULE_DERIVED);
    ck_assert_int_eq(status_of(db, assoc33), XF_RULE_DERIVED);
    ck_assert_int_eq(status_of(db, left), XF_RULE_DERIVED);
    ck_assert_int_eq(derived, 5);
    ck_assert_int_eq(after, 1);
    ck_assert_int_eq(t.total, 3); /* comm, assoc, f2: the derived never reach the solver */
    ck_assert_int_eq(t.unknown, 0);
    int same = 0;
    ck_assert_int_eq(replay_all(db, &same), 5);
    ck_assert_int_eq(same, 3); /* comm33 by comm, assoc33 and left by assoc */

    /* --no-derive: every candidate goes to the solver */
    xf_test_sql_exec(path, "UPDATE rules SET status = 'candidate'");
    o.derive = 0;
    ck_assert_msg(xf_derive_verify_db(db, path, &o, &t, &derived, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(t.total, 8);
    ck_assert_int_eq(derived, 0);
    ck_assert_int_eq(status_of(db, c3), XF_RULE_PROVED);
    xf_rulesdb_close(db);
}
END_TEST

/* The size's "later" derivations (the passes between the solver's rounds). */
static void count_later(void *user, int size, const xf_derive_tally *d, const xf_verify_tally *v)
{
    (void)v;
    if (d && size == 2) *(int64_t *)user += d->later;
}

/* Above firsts_up_to operators the pass between the solver's rounds
 * searches the later rounds' firsts only firsts_depth deep (0: not at all),
 * the other shapes of the forms decided at the round depth. Size 2: assoc
 * goes first (round 1); q (assoc then comm: two steps, one from each side)
 * and q3 (b alone in front: assoc, comm, assoc, three steps) second;
 * assoc at 3x3 is assoc's other shape. */
START_TEST(later_firsts_searched_up_to_a_size)
{
    const char *path = xf_test_tmp("derive_firsts.db");
    xf_error err;
    /* up_to, depth; then q, q3 derived (1) or proved by the solver (0) */
    static const int cases[][4] = {{0, 1, 1, 1}, {1, 2, 1, 1}, {1, 1, 1, 0}, {1, 0, 0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        xf_test_remove_db(path);
        xf_rulesdb *db = NULL;
        ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s",
                      err.msg);
        add_rule(db, "ewadd(a, b)", "ewadd(b, a)", 2, XF_RULE_PROVED);
        int64_t assoc = add_rule(db, "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(b, c))", 3,
                                 XF_RULE_CANDIDATE);
        int64_t q = add_rule(db, "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(c, b))", 3,
                             XF_RULE_CANDIDATE);
        int64_t q3 = add_rule(db, "ewadd(ewadd(a, b), c)", "ewadd(b, ewadd(c, a))", 3,
                              XF_RULE_CANDIDATE);
        int64_t assoc33 = add_rule_at(db, "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(b, c))", 3,
                                      D33, XF_RULE_CANDIDATE);
        xf_derive_verify_options o;
        int64_t later = 0;
        pipeline_options(&o, count_later, &later);
        ck_assert_int_eq(o.firsts_up_to, 3);
        ck_assert_int_eq(o.firsts_depth, 1);
        o.firsts_up_to = cases[c][0];
        o.firsts_depth = cases[c][1];
        xf_verify_tally t;
        int64_t derived = 0;
        ck_assert_msg(xf_derive_verify_db(db, path, &o, &t, &derived, &err) == XF_OK, "%s",
                      err.msg);
        int dq = cases[c][2], dq3 = cases[c][3];
        ck_assert_int_eq(status_of(db, assoc), XF_RULE_PROVED);
        ck_assert_int_eq(status_of(db, assoc33), XF_RULE_DERIVED);
        ck_assert_int_eq(status_of(db, q), (dq ? XF_RULE_DERIVED : XF_RULE_PROVED));
        ck_assert_int_eq(status_of(db, q3), (dq3 ? XF_RULE_DERIVED : XF_RULE_PROVED));
        ck_assert_int_eq(later, 1 + dq + dq3);
        ck_assert_int_eq(t.total, 3 - dq - dq3); /* assoc and what was not derived */
        ck_assert_int_eq(replay_all(db, NULL), 1 + dq + dq3);
        xf_rulesdb_close(db);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("derive");
    TCase *t = tcase_create("derive");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, derives_from_comm_assoc);
    tcase_add_test(t, same_size_proved_rules_are_steps);
    tcase_add_test(t, rules_past_the_size_bound_are_not_matched);
    tcase_add_test(t, tampered_chains_do_not_replay);
    tcase_add_test(t, migration_v2_to_v3_keeps_rows);
    tcase_add_test(t, pipeline_derives_after_solving);
    tcase_add_test(t, later_firsts_searched_up_to_a_size);
    tcase_add_test(t, derived_domain_is_no_wider_than_its_chain);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
