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
 * the canonical hashes of both sides (xf_graph_hash: ops, parameters,
 * input positions, shapes).
 */
#include <stdlib.h>
#include <string.h>

#include "agent/match_impl.h"
#include "rulesdb/rulesdb.h"

typedef struct pair_hash {
    uint64_t src, dst;
} pair_hash;

static int cmp_pair(const void *a, const void *b)
{
    const pair_hash *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    return (x->dst > y->dst) - (x->dst < y->dst);
}

static void skip(xf_ruleset *rs, int64_t id, const char *why)
{
    if (rs->skipped++ == 0) {
        xf_strbuf b = {rs->why, sizeof rs->why, 0, 0};
        xf_strbuf_printf(&b, "rule %lld: %s", (long long)id, why);
    }
}

/* Appends rule r (taken over: r is left empty) as action rs->n, unless the
 * matcher cannot use it. */
static xf_status append(xf_ruleset *rs, xf_rule *r, int64_t id, xf_error *err)
{
    const char *why = NULL;
    if (rs->n == rs->cap) {
        int cap = rs->cap ? 2 * rs->cap : 64;
        xf_rs_rule *p = realloc(rs->r, sizeof *p * (size_t)cap);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading rule %lld", (long long)id);
        rs->r = p;
        rs->cap = cap;
    }
    xf_rs_rule *e = &rs->r[rs->n];
    memset(e, 0, sizeof *e);
    if (!xf_rule_compile(r, &e->pat, &e->tgt, &why)) {
        skip(rs, id, why);
        xf_rule_free(r);
        return XF_OK;
    }
    char s[2048], d[2048];
    xf_graph_format(&r->src, s, sizeof s, NULL);
    xf_graph_format(&r->dst, d, sizeof d, NULL);
    size_t len = strlen(s) + strlen(d) + 5;
    e->text = malloc(len);
    if (!e->text) {
        xf_rule_free(r);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading rule %lld", (long long)id);
    }
    xf_strbuf b = {e->text, len, 0, 0};
    xf_strbuf_printf(&b, "%s => %s", s, d);
    e->rule = *r;
    xf_rule_init(r);
    e->id = id;
    rs->n++;
    return XF_OK;
}

static xf_status reverse_of(const xf_rule *r, xf_rule *rev, xf_error *err)
{
    xf_rule_init(rev);
    xf_status st = xf_graph_clone(&r->dst, &rev->src, err);
    if (st == XF_OK) st = xf_graph_clone(&r->src, &rev->dst, err);
    if (st != XF_OK) xf_rule_free(rev);
    rev->fingerprint = r->fingerprint;
    return st;
}

/* Builds the set from n rules (taken over, all freed here). */
static xf_status build(xf_rule *rules, const int64_t *ids, int n, int both, xf_ruleset **out,
                       xf_error *err)
{
    xf_status st = XF_OK;
    pair_hash *seen = NULL;
    xf_ruleset *rs = calloc(1, sizeof *rs);
    if (!rs || (both && n > 0 && !(seen = malloc(sizeof *seen * (size_t)n)))) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory building a rule set of %d rules", n);
        goto out;
    }
    if (both) {
        for (int i = 0; i < n; i++)
            seen[i] = (pair_hash){xf_graph_hash(&rules[i].src), xf_graph_hash(&rules[i].dst)};
        qsort(seen, (size_t)n, sizeof *seen, cmp_pair);
    }
    for (int i = 0; i < n && st == XF_OK; i++) {
        int64_t id = ids ? ids[i] : i + 1;
        xf_rule rev;
        int add_rev = 0;
        if (both) {
            pair_hash key = {xf_graph_hash(&rules[i].dst), xf_graph_hash(&rules[i].src)};
            add_rev = !bsearch(&key, seen, (size_t)n, sizeof *seen, cmp_pair);
            if (add_rev) st = reverse_of(&rules[i], &rev, err);
        }
        if (st == XF_OK) st = append(rs, &rules[i], id, err);
        if (add_rev && st == XF_OK) st = append(rs, &rev, -id, err);
        if (add_rev) xf_rule_free(&rev);
    }
out:
    for (int i = 0; i < n; i++) xf_rule_free(&rules[i]);
    free(seen);
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
    xf_rule *copy = calloc((size_t)n + 1, sizeof *copy);
    if (!copy) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory copying %d rules", n);
    int kept = 0;
    int64_t *kept_ids = malloc(sizeof *kept_ids * ((size_t)n + 1));
    xf_status st = kept_ids ? XF_OK : XF_FAIL(err, XF_ERR_NOMEM, "out of memory copying rules");
    for (int i = 0; i < n && st == XF_OK; i++) {
        int size = rules[i].src.n_nodes > rules[i].dst.n_nodes ? rules[i].src.n_nodes
                                                               : rules[i].dst.n_nodes;
        if (opt->max_size > 0 && size > opt->max_size) continue;
        xf_rule_init(&copy[kept]);
        st = xf_graph_clone(&rules[i].src, &copy[kept].src, err);
        if (st == XF_OK) st = xf_graph_clone(&rules[i].dst, &copy[kept].dst, err);
        copy[kept].fingerprint = rules[i].fingerprint;
        kept_ids[kept] = ids ? ids[i] : i + 1;
        kept++;
    }
    if (st == XF_OK) {
        st = build(copy, kept_ids, kept, opt->both_directions, out, err);
    } else {
        for (int i = 0; i < kept; i++) xf_rule_free(&copy[i]);
    }
    free(copy);
    free(kept_ids);
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
    int n = 0, cap = 0;
    xf_status st = xf_rulesdb_open(db_path, XF_RULESDB_READONLY, &db, err);
    if (st != XF_OK) goto out;
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    if (opt->status < 0) {
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
        if (opt->limit > 0 && n >= opt->limit) break;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            xf_rule *r2 = realloc(rules, sizeof *r2 * (size_t)cap);
            if (r2) rules = r2;
            int64_t *i2 = realloc(ids, sizeof *i2 * (size_t)cap);
            if (i2) ids = i2;
            if (!r2 || !i2) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading rules from %s", db_path);
                break;
            }
        }
        st = xf_rulesdb_load_rule(db, info.id, &rules[n], err);
        if (st != XF_OK) {
            xf_error_prefix(err, "loading rule %lld from %s", (long long)info.id, db_path);
            break;
        }
        ids[n++] = info.id;
    }
    if (st == XF_OK) {
        st = build(rules, ids, n, opt->both_directions, out, err);
        n = 0; /* taken over by build */
    }
out:
    for (int i = 0; i < n; i++) xf_rule_free(&rules[i]);
    free(rules);
    free(ids);
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
        free(rs->r[i].text);
    }
    free(rs->r);
    free(rs);
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

int64_t xf_ruleset_rule_id(const xf_ruleset *rs, int i)
{
    return rs && i >= 0 && i < rs->n ? rs->r[i].id : 0;
}

const xf_rule *xf_ruleset_rule(const xf_ruleset *rs, int i)
{
    return rs && i >= 0 && i < rs->n ? &rs->r[i].rule : NULL;
}

const char *xf_ruleset_text(const xf_ruleset *rs, int i)
{
    return rs && i >= 0 && i < rs->n ? rs->r[i].text : NULL;
}
