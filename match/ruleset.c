/*
 * ruleset.c — rule sets: rules read from a rules database (proved ones by
 * default) or given in memory, each optionally followed by its reverse, and
 * compiled for the matcher (pattern.c).
 *
 * A reverse (dst => src) gets the negative id of its rule. A reverse whose
 * source has no operator (the reverse of "matmul(m0, imatrix) => m0") is
 * skipped like any rule the matcher cannot use; a reverse that equals a rule
 * already in the set (the database holds both directions, or a rule is its
 * own reverse) is dropped silently, since it adds no action. Equality is by
 * the rule's key as written (xf_rule_key_as_written: the canonical hashes
 * of both sides, with ops, parameters, input positions, shapes), not by
 * its key up to renaming: a renamed reverse can still be another action
 * (input positions matter to the matcher). Rules from a database are not
 * hashed again: the database stores each side once per canonical hash
 * (graphs.hash is unique), so the sides' graph row ids are equal exactly
 * when the stored hashes are, and they stand in for them.
 *
 * After compilation, actions whose compiled forms are equal
 * (match_rule_form_words: the same rule enumerated at other tensor shapes,
 * e.g. ewadd(x0, x1) => ewadd(x1, x0) on activations, weights and
 * matrices) are one action when their validity domains allow: of two, the
 * one whose domain is implied by the other's is dropped (the first in
 * load order, the lowest database id, a rule before its reverse, when they
 * are equal; the 2-D one of ewadd's twins, whose domain says nothing of
 * batch dims); two whose domains cannot be compared both stay. Dropped
 * ones are counted (xf_ruleset_duplicates). Equal forms are found by sorting
 * their hashes, so this is O(n log n) in the number of actions.
 *
 * With xf_ruleset_options.restrict_to, the actions that can never match a
 * graph reachable from that graph are dropped next (restrict_actions; why
 * this is exact is in match.h at xf_ruleset_irrelevant): a fixed point over
 * op sets, at most XF_OP_COUNT passes over the rules' operators.
 */
#include <stdlib.h>
#include <string.h>

#include "match/match_internal.h"
#include "rulesdb/rulesdb.h"

/* The identity of a rule's two sides (an xf_rule_key as written: their
 * canonical hashes, or their graph row ids in the rules database). */
static int cmp_pair(const void *a, const void *b)
{
    return xf_rule_key_cmp(a, b);
}

static void skip(xf_ruleset *rs, int64_t id, const char *why)
{
    if (rs->skipped++ == 0) {
        xf_strbuf b = {rs->why, sizeof rs->why, 0, 0};
        xf_strbuf_printf(&b, "rule %lld: %s", (long long)id, why);
    }
}

/* Gives back the spare room of g's node and value arrays (a clone keeps 16
 * of each for a rewrite's nodes, 15 KB a side): a rule's graphs never grow
 * once in a set, and 14,000 actions of the default vocabulary held 450 MB
 * of it. */
static xf_status fit_graph(xf_graph *g, xf_error *err)
{
    if (g->n_nodes > 0 && g->cap_nodes > g->n_nodes) {
        xf_node *n = xf_realloc(g->nodes, sizeof *n * (size_t)g->n_nodes);
        if (!n) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading a rule");
        g->nodes = n;
        g->cap_nodes = g->n_nodes;
    }
    if (g->n_values > 0 && g->cap_values > g->n_values) {
        xf_value *v = xf_realloc(g->values, sizeof *v * (size_t)g->n_values);
        if (!v) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading a rule");
        g->values = v;
        g->cap_values = g->n_values;
    }
    return XF_OK;
}

/* Appends rule r (taken over: r is left empty) as action rs->n, unless the
 * matcher cannot use it. */
static xf_status append(xf_ruleset *rs, xf_rule *r, int64_t id, xf_error *err)
{
    const char *why = NULL;
    if (rs->n == rs->cap) {
        int cap = rs->cap ? 2 * rs->cap : 64;
        xf_rs_rule *p = xf_realloc(rs->r, sizeof *p * (size_t)cap);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading rule %lld", (long long)id);
        rs->r = p;
        rs->cap = cap;
    }
    xf_rs_rule *e = &rs->r[rs->n];
    memset(e, 0, sizeof *e);
    if (fit_graph(&r->src, err) != XF_OK || fit_graph(&r->dst, err) != XF_OK) {
        xf_rule_free(r);
        return XF_ERR_NOMEM;
    }
    uint64_t hs = 0, hd = 0;
    xf_status st = xf_graph_hash_checked(&r->src, XF_HASH_UNORDERED, &hs, err);
    if (st == XF_OK) st = xf_graph_hash_checked(&r->dst, XF_HASH_UNORDERED, &hd, err);
    if (st != XF_OK) {
        xf_rule_free(r);
        return st;
    }
    int compiled = match_rule_compile(r, &e->pat, &e->tgt, &why);
    if (compiled < 0) {
        xf_rule_free(r);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory compiling rule %lld", (long long)id);
    }
    if (!compiled) {
        skip(rs, id, why);
        xf_rule_free(r);
        return XF_OK;
    }
    char s[2048], d[2048];
    xf_graph_format(&r->src, s, sizeof s, NULL);
    xf_graph_format(&r->dst, d, sizeof d, NULL);
    size_t len = strlen(s) + strlen(d) + 5;
    e->text = xf_malloc(len);
    if (!e->text) {
        match_rule_compiled_free(&e->tgt);
        xf_rule_free(r);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading rule %lld", (long long)id);
    }
    xf_strbuf b = {e->text, len, 0, 0};
    xf_strbuf_printf(&b, "%s => %s", s, d);
    e->rule = *r;
    xf_rule_init(r);
    e->id = id;
    e->swaps_only = hs == hd;
    rs->n++;
    return XF_OK;
}

static xf_status reverse_of(const xf_rule *r, xf_rule *rev, xf_error *err)
{
    xf_rule_init(rev);
    xf_status st = xf_graph_clone(&r->dst, &rev->src, err);
    if (st == XF_OK) st = xf_graph_clone(&r->src, &rev->dst, err);
    if (st == XF_OK) st = xf_domain_copy(&r->domain, &rev->domain, err); /* same inputs */
    if (st != XF_OK) xf_rule_free(rev);
    rev->fingerprint = r->fingerprint;
    return st;
}

typedef struct form_hash {
    uint64_t h;
    int i;
} form_hash;

static int cmp_form_hash(const void *a, const void *b)
{
    const form_hash *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static size_t form_of(const xf_rs_rule *e, uint64_t *w)
{
    return match_rule_form_words(&e->rule, &e->pat, &e->tgt, w);
}

/* The hash of n form words, the key dedupe sorts by. */
static uint64_t hash_words(const uint64_t *w, size_t n)
{
    uint64_t h = 0x0F0E;
    for (size_t k = 0; k < n; k++) h = xf_hash_u64(h, w[k]);
    return h;
}

xf_status xf_rule_form_hash(const xf_rule *r, uint64_t *h, int *usable, xf_error *err)
{
    *h = 0;
    *usable = 0;
    xf_rs_rule *e = xf_calloc(1, sizeof *e);
    uint64_t *w = xf_malloc(sizeof *w * XF_RULE_FORM_WORDS);
    const char *why = NULL;
    int compiled = e && w ? match_rule_compile(r, &e->pat, &e->tgt, &why) : -1;
    if (compiled > 0) {
        *h = hash_words(w, match_rule_form_words(r, &e->pat, &e->tgt, w));
        *usable = 1;
    }
    if (e) match_rule_compiled_free(&e->tgt);
    xf_free(e);
    xf_free(w);
    return compiled < 0 ? XF_FAIL(err, XF_ERR_NOMEM, "out of memory compiling a rule") : XF_OK;
}

/* Of two actions of one form, which to drop: 1 b (a's domain is no
 * narrower), 2 a (b's is wider), 0 neither (domains that cannot be
 * compared: both are kept, each applied where it holds). */
static xf_status narrower(const xf_rs_rule *a, const xf_rs_rule *b, int *drop, xf_error *err)
{
    xf_domain da, db;
    xf_domain_init(&da);
    xf_domain_init(&db);
    int b_in_a = 0, a_in_b = 0;
    *drop = 0;
    xf_status st = match_rule_canonical_domain(&a->rule, &a->pat, &da, err);
    if (st == XF_OK) st = match_rule_canonical_domain(&b->rule, &b->pat, &db, err);
    if (st == XF_OK) st = xf_domain_implies(&db, &da, &b_in_a, err);
    if (st == XF_OK && !b_in_a) st = xf_domain_implies(&da, &db, &a_in_b, err);
    *drop = b_in_a ? 1 : a_in_b ? 2 : 0;
    xf_domain_free(&da);
    xf_domain_free(&db);
    return st;
}

/* Frees the actions `drop` picks (drop(rs, i, ctx) != 0) and closes the
 * gaps, keeping the others' order; returns how many went. */
static int drop_actions(xf_ruleset *rs, int (*drop)(const xf_ruleset *, int, const void *),
                        const void *ctx)
{
    int kept = 0;
    for (int i = 0; i < rs->n; i++) {
        if (drop(rs, i, ctx)) {
            xf_rule_free(&rs->r[i].rule);
            match_rule_compiled_free(&rs->r[i].tgt);
            xf_free(rs->r[i].text);
            continue;
        }
        if (kept != i) rs->r[kept] = rs->r[i];
        kept++;
    }
    int gone = rs->n - kept;
    rs->n = kept;
    return gone;
}

static int dropped_marked(const xf_ruleset *rs, int i, const void *marks)
{
    (void)rs;
    return ((const uint8_t *)marks)[i] != 0;
}

/* Drops every action whose compiled form equals an earlier one's and whose
 * validity domain is no wider (the same rule at other tensor shapes); of
 * two, the wider domain stays (a rule found on matrices holds for batched
 * ones too, its 4-D twin only where the batch dims agree). */
static xf_status dedupe(xf_ruleset *rs, xf_error *err)
{
    static const size_t cap = XF_RULE_FORM_WORDS;
    form_hash *fh = xf_malloc(sizeof *fh * ((size_t)rs->n + 1));
    uint8_t *drop = xf_calloc((size_t)rs->n + 1, 1);
    uint64_t *wa = xf_malloc(sizeof *wa * cap), *wb = xf_malloc(sizeof *wb * cap);
    xf_status st = XF_OK;
    if (!fh || !drop || !wa || !wb) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory comparing %d rules", rs->n);
        goto out;
    }
    for (int i = 0; i < rs->n; i++) {
        fh[i] = (form_hash){hash_words(wa, form_of(&rs->r[i], wa)), i};
    }
    qsort(fh, (size_t)rs->n, sizeof *fh, cmp_form_hash);
    for (int a = 0; a < rs->n && st == XF_OK; a++) {
        if (drop[fh[a].i]) continue;
        size_t na = 0;
        int keep = fh[a].i; /* the action of the group kept so far */
        for (int b = a + 1; b < rs->n && fh[b].h == fh[a].h && st == XF_OK; b++) {
            if (drop[fh[b].i]) continue;
            if (na == 0) na = form_of(&rs->r[fh[a].i], wa);
            size_t nb = form_of(&rs->r[fh[b].i], wb);
            if (na != nb || memcmp(wa, wb, sizeof *wa * na) != 0) continue;
            int which = 0;
            st = narrower(&rs->r[keep], &rs->r[fh[b].i], &which, err);
            if (which == 1) drop[fh[b].i] = 1;
            if (which == 2) drop[keep] = 1, keep = fh[b].i;
        }
    }
    rs->duplicates += drop_actions(rs, dropped_marked, drop);
out:
    xf_free(fh);
    xf_free(drop);
    xf_free(wa);
    xf_free(wb);
    return st;
}

/* 1 when every operator of g has an op marked in `ops`. */
static int ops_within(const xf_graph *g, const uint8_t *ops)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (!ops[g->nodes[i].op]) return 0;
    return 1;
}

static int unreachable(const xf_ruleset *rs, int i, const void *reach)
{
    return !ops_within(&rs->r[i].rule.src, reach);
}

/* Drops the actions that never match a graph reachable from g: reach
 * starts as g's ops and grows by the target ops of every action whose
 * source ops it holds, until it stops growing. */
static void restrict_actions(xf_ruleset *rs, const xf_graph *g)
{
    uint8_t reach[XF_OP_COUNT];
    memset(reach, 0, sizeof reach);
    for (int i = 0; i < g->n_nodes; i++) reach[g->nodes[i].op] = 1;
    for (int grew = 1; grew;) {
        grew = 0;
        for (int i = 0; i < rs->n; i++) {
            const xf_rule *r = &rs->r[i].rule;
            if (!ops_within(&r->src, reach)) continue;
            for (int k = 0; k < r->dst.n_nodes; k++) {
                if (reach[r->dst.nodes[k].op]) continue;
                reach[r->dst.nodes[k].op] = 1;
                grew = 1;
            }
        }
    }
    rs->irrelevant += drop_actions(rs, unreachable, reach);
}

/* 1 when r's source multiplies by a scalar: scalar_mul, or an ewmul with a
 * rank-0 operand. */
static int moves_a_scaling(const xf_rule *r)
{
    for (int i = 0; i < r->src.n_nodes; i++) {
        const xf_node *n = &r->src.nodes[i];
        if (n->op == XF_OP_SCALAR_MUL) return 1;
        if (n->op != XF_OP_MUL) continue;
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0 && r->src.values[n->inputs[k]].shape.rank == 0) return 1;
    }
    return 0;
}

/* xf_ruleset_options.keep_scalings: drops the actions that would move a
 * kept scaling (counted as irrelevant: they cannot match what the search
 * may change). */
static int moves_kept_scaling(const xf_ruleset *rs, int i, const void *ctx)
{
    (void)ctx;
    const xf_rule *r = &rs->r[i].rule;
    return moves_a_scaling(r) && !xf_rule_is_view_move(r);
}

static void keep_scalings(xf_ruleset *rs)
{
    rs->irrelevant += drop_actions(rs, moves_kept_scaling, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int match_root_index(const xf_ruleset *rs, uint64_t sig)
{
    int lo = 0, hi = rs->n_roots; /* the answer lies in [lo, hi) */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (rs->root_sig[mid] < sig) lo = mid + 1;
        else hi = mid;
    }
    return lo < rs->n_roots && rs->root_sig[lo] == sig ? lo : -1;
}

/* Groups the actions by root signature (see struct xf_ruleset): each
 * group by growth, then index. */
static xf_status group_roots(xf_ruleset *rs, xf_error *err)
{
    enum { SPAN = 2 * XF_MATCH_MAX_NODES + 1 }; /* growths: -MAX .. MAX */
    int by_growth[SPAN + 1] = {0};
    int *order = xf_malloc(sizeof *order * ((size_t)rs->n + 1));
    rs->root_sig = xf_malloc(sizeof *rs->root_sig * ((size_t)rs->n + 1));
    rs->root_of = xf_malloc(sizeof *rs->root_of * ((size_t)rs->n + 1));
    rs->root_start = xf_calloc((size_t)rs->n + 2, sizeof *rs->root_start);
    rs->root_actions = xf_malloc(sizeof *rs->root_actions * ((size_t)rs->n + 1));
    if (!order || !rs->root_sig || !rs->root_of || !rs->root_start || !rs->root_actions) {
        xf_free(order);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory grouping %d rules", rs->n);
    }
    for (int i = 0; i < rs->n; i++) rs->root_sig[i] = rs->r[i].pat.root_sig;
    qsort(rs->root_sig, (size_t)rs->n, sizeof *rs->root_sig, cmp_u64);
    int n = 0;
    for (int i = 0; i < rs->n; i++)
        if (n == 0 || rs->root_sig[n - 1] != rs->root_sig[i]) rs->root_sig[n++] = rs->root_sig[i];
    rs->n_roots = n;
    /* a source has 1 to XF_MATCH_MAX_NODES operators, a target 0 to as many
     * (match_rule_compile): growths lie in -MAX .. MAX */
    for (int i = 0; i < rs->n; i++) {
        rs->r[i].growth = rs->r[i].rule.dst.n_nodes - rs->r[i].rule.src.n_nodes;
        rs->root_of[i] = match_root_index(rs, rs->r[i].pat.root_sig);
        rs->root_start[rs->root_of[i] + 1]++;
        by_growth[rs->r[i].growth + XF_MATCH_MAX_NODES + 1]++;
    }
    /* counting sorts, both stable: the actions by growth, then into groups */
    for (int k = 0; k < SPAN; k++) by_growth[k + 1] += by_growth[k];
    for (int i = 0; i < rs->n; i++) order[by_growth[rs->r[i].growth + XF_MATCH_MAX_NODES]++] = i;
    for (int j = 0; j < n; j++) rs->root_start[j + 1] += rs->root_start[j];
    for (int k = 0; k < rs->n; k++) rs->root_actions[rs->root_start[rs->root_of[order[k]]]++] = order[k];
    for (int j = n; j > 0; j--) rs->root_start[j] = rs->root_start[j - 1];
    rs->root_start[0] = 0;
    xf_free(order);
    return XF_OK;
}

/* Builds the set from n rules (taken over, all freed here); sides[i] is
 * the identity of rule i's sides (NULL: their xf_graph_hash). */
static xf_status build(xf_rule *rules, const int64_t *ids, const xf_rule_key *sides, int n,
                       const xf_ruleset_options *opt, xf_ruleset **out, xf_error *err)
{
    int both = opt->both_directions;
    xf_status st = XF_OK;
    xf_rule_key *seen = NULL;
    xf_ruleset *rs = xf_calloc(1, sizeof *rs);
    if (!rs || (both && n > 0 && !(seen = xf_malloc(sizeof *seen * (size_t)n)))) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory building a rule set of %d rules", n);
        goto out;
    }
    rs->commutative = opt->commutative;
    /* A rule given without a domain holds where its operators say it
     * applies (xf_domain_of_rule); one from a database has its own. */
    for (int i = 0; i < n && st == XF_OK; i++)
        if (!rules[i].domain.known) st = xf_domain_of_rule(&rules[i], &rules[i].domain, err);
    if (st != XF_OK) goto out;
    if (seen) {
        for (int i = 0; i < n && st == XF_OK; i++) {
            if (sides) seen[i] = sides[i];
            else st = xf_rule_key_as_written(&rules[i], &seen[i], err);
        }
        if (st != XF_OK) goto out;
        qsort(seen, (size_t)n, sizeof *seen, cmp_pair);
    }
    for (int i = 0; i < n && st == XF_OK; i++) {
        int64_t id = ids ? ids[i] : i + 1;
        xf_rule rev;
        int add_rev = 0;
        if (both) {
            /* is the reverse pair (dst, src) a rule of the set already? */
            xf_rule_key fwd = {0, 0};
            if (sides) fwd = sides[i];
            else st = xf_rule_key_as_written(&rules[i], &fwd, err);
            if (st != XF_OK) break;
            xf_rule_key key = {fwd.dst, fwd.src};
            add_rev = !bsearch(&key, seen, (size_t)n, sizeof *seen, cmp_pair);
            if (add_rev) st = reverse_of(&rules[i], &rev, err);
        }
        if (st == XF_OK) st = append(rs, &rules[i], id, err);
        if (add_rev && st == XF_OK) st = append(rs, &rev, -id, err);
        if (add_rev) xf_rule_free(&rev);
    }
    if (st == XF_OK) st = dedupe(rs, err);
    if (st == XF_OK && opt->keep_scalings) keep_scalings(rs);
    if (st == XF_OK && opt->restrict_to) restrict_actions(rs, opt->restrict_to);
    if (st == XF_OK) st = group_roots(rs, err);
    if (st == XF_OK && rs->n > 0 && rs->cap > rs->n) { /* the duplicates' room back */
        xf_rs_rule *p = xf_realloc(rs->r, sizeof *p * (size_t)rs->n);
        if (!p) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory building a rule set of %d rules", rs->n);
        else rs->r = p, rs->cap = rs->n;
    }
out:
    for (int i = 0; i < n; i++) xf_rule_free(&rules[i]);
    xf_free(seen);
    if (st != XF_OK) {
        xf_ruleset_free(rs);
        rs = NULL;
    }
    *out = rs;
    return st;
}

xf_status xf_ruleset_from_rules(const xf_rule *rules, const int64_t *ids, int n,
                                const xf_ruleset_options *opt, xf_ruleset **out, xf_error *err)
{
    *out = NULL;
    xf_ruleset_options def = xf_ruleset_options_default();
    if (!opt) opt = &def;
    if (n < 0) return XF_FAIL(err, XF_ERR_INVALID, "rule set: negative rule count %d", n);
    xf_rule *copy = xf_calloc((size_t)n + 1, sizeof *copy);
    if (!copy) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory copying %d rules", n);
    int kept = 0;
    int64_t *kept_ids = xf_malloc(sizeof *kept_ids * ((size_t)n + 1));
    xf_status st = kept_ids ? XF_OK : XF_FAIL(err, XF_ERR_NOMEM, "out of memory copying rules");
    for (int i = 0; i < n && st == XF_OK; i++) {
        int size = rules[i].src.n_nodes > rules[i].dst.n_nodes ? rules[i].src.n_nodes
                                                               : rules[i].dst.n_nodes;
        if (opt->max_size > 0 && size > opt->max_size) continue;
        xf_rule_init(&copy[kept]);
        st = xf_graph_clone(&rules[i].src, &copy[kept].src, err);
        if (st == XF_OK) st = xf_graph_clone(&rules[i].dst, &copy[kept].dst, err);
        if (st == XF_OK) st = xf_domain_copy(&rules[i].domain, &copy[kept].domain, err);
        copy[kept].fingerprint = rules[i].fingerprint;
        kept_ids[kept] = ids ? ids[i] : i + 1;
        kept++;
    }
    if (st == XF_OK) {
        st = build(copy, kept_ids, NULL, kept, opt, out, err);
    } else {
        for (int i = 0; i < kept; i++) xf_rule_free(&copy[i]);
    }
    xf_free(copy);
    xf_free(kept_ids);
    return st;
}

xf_status xf_ruleset_load(const char *db_path, const xf_ruleset_options *opt, xf_ruleset **out,
                          xf_error *err)
{
    *out = NULL;
    xf_ruleset_options def = xf_ruleset_options_default();
    if (!opt) opt = &def;
    xf_rulesdb *db = NULL;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    xf_rule *rules = NULL;
    int64_t *ids = NULL;
    xf_rule_key *sides = NULL;
    int n = 0, cap = 0, unrecorded = 0;
    int64_t first_unrecorded = 0;
    xf_status st = xf_rulesdb_open(db_path, XF_RULESDB_READONLY, &db, err);
    if (st != XF_OK) goto out;
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    int with_derived = opt->derived && opt->status == XF_RULE_PROVED;
    if (opt->status < 0 || with_derived) {
        f.any_status = 1;
    } else if (opt->status >= XF_RULE_STATUS_COUNT) {
        st = XF_FAIL(err, XF_ERR_INVALID, "rule set: status %d is not a rule status",
                     opt->status);
        goto out;
    } else {
        f.status = (xf_rule_status)opt->status;
        f.limit = opt->limit;
    }
    f.max_size = opt->max_size;
    st = xf_rulesdb_iter_begin(db, &f, &it, err);
    while (st == XF_OK) {
        int has = 0;
        st = xf_rulesdb_iter_next(it, &info, &has, err);
        if (st != XF_OK || !has) break;
        if (opt->status < 0 && (info.status == XF_RULE_REFUTED || info.status == XF_RULE_PRUNED))
            continue;
        if (with_derived && info.status != XF_RULE_PROVED && info.status != XF_RULE_DERIVED)
            continue;
        if (opt->limit > 0 && n >= opt->limit) break;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            xf_rule *r2 = xf_realloc(rules, sizeof *r2 * (size_t)cap);
            if (r2) rules = r2;
            int64_t *i2 = xf_realloc(ids, sizeof *i2 * (size_t)cap);
            if (i2) ids = i2;
            xf_rule_key *s2 = xf_realloc(sides, sizeof *s2 * (size_t)cap);
            if (s2) sides = s2;
            if (!r2 || !i2 || !s2) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading rules from %s", db_path);
                break;
            }
        }
        st = xf_rulesdb_load_rule(db, info.id, &rules[n], err);
        if (st != XF_OK) {
            xf_error_prefix(err, "loading rule %lld from %s", (long long)info.id, db_path);
            break;
        }
        if (info.status == XF_RULE_DERIVED && !rules[n].domain.known) {
            /* derived before domains were recorded: it holds nowhere known */
            if (unrecorded++ == 0) first_unrecorded = info.id;
            xf_rule_free(&rules[n]);
            continue;
        }
        /* fitted now, not when appended: the set holds them all until then */
        if ((st = fit_graph(&rules[n].src, err)) != XF_OK ||
            (st = fit_graph(&rules[n].dst, err)) != XF_OK) {
            xf_rule_free(&rules[n]);
            break;
        }
        sides[n] = (xf_rule_key){(uint64_t)info.src_graph, (uint64_t)info.dst_graph};
        ids[n++] = info.id;
    }
    if (st == XF_OK) {
        st = build(rules, ids, sides, n, opt, out, err);
        n = 0; /* taken over by build */
    }
    if (st == XF_OK && unrecorded > 0) {
        xf_ruleset *rs = *out;
        int before = rs->skipped;
        skip(rs, first_unrecorded,
             "derived without a recorded validity domain (xferverify derives it again)");
        rs->skipped = before + unrecorded;
    }
out:
    for (int i = 0; i < n; i++) xf_rule_free(&rules[i]);
    xf_free(rules);
    xf_free(ids);
    xf_free(sides);
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    xf_rulesdb_close(db);
    return st;
}

void xf_ruleset_free(xf_ruleset *rs)
{
    if (!rs) return;
    for (int i = 0; i < rs->n; i++) {
        xf_rule_free(&rs->r[i].rule);
        match_rule_compiled_free(&rs->r[i].tgt);
        xf_free(rs->r[i].text);
    }
    xf_free(rs->r);
    xf_free(rs->root_sig);
    xf_free(rs->root_of);
    xf_free(rs->root_start);
    xf_free(rs->root_actions);
    xf_free(rs);
}

int xf_ruleset_count(const xf_ruleset *rs)
{
    return rs ? rs->n : 0;
}

int xf_ruleset_skipped(const xf_ruleset *rs, const char **why)
{
    if (why) *why = rs && rs->skipped ? rs->why : NULL;
    return rs ? rs->skipped : 0;
}

int xf_ruleset_duplicates(const xf_ruleset *rs)
{
    return rs ? rs->duplicates : 0;
}

int xf_ruleset_irrelevant(const xf_ruleset *rs)
{
    return rs ? rs->irrelevant : 0;
}

int64_t xf_ruleset_rule_id(const xf_ruleset *rs, int i)
{
    return rs && i >= 0 && i < rs->n ? rs->r[i].id : 0;
}

const xf_rule *xf_ruleset_rule(const xf_ruleset *rs, int i)
{
    return rs && i >= 0 && i < rs->n ? &rs->r[i].rule : NULL;
}

int xf_ruleset_swaps_only(const xf_ruleset *rs, int i)
{
    return rs && rs->commutative && i >= 0 && i < rs->n && rs->r[i].swaps_only;
}

const char *xf_ruleset_text(const xf_ruleset *rs, int i)
{
    return rs && i >= 0 && i < rs->n ? rs->r[i].text : NULL;
}
