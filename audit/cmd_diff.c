/*
 * cmd_diff.c — `xferdb diff A.db B.db`: which rules one database has and
 * the other has not, modulo renaming of inputs (xf_rule_key_of in
 * ir/rule_key.c: x0,x1 and a,b name the same rule when the shapes agree and
 * the graphs match under some renaming). Rules of every status take part. Lists the rules only in
 * A ("<"), only in B (">") — noting when the other database has the rule
 * the other way round (target => source) — then rules in both whose status
 * differs ("!", informative) or, of one status and with the same input
 * names, whose validity domain differs ("~"), and a summary line. Exit status like diff(1): 0 the rule
 * sets are equal, 1 they differ, 2 trouble (an unreadable database).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_impl.h"

typedef struct entry {
    xf_rule_key key, rev; /* rev: the key of target => source */
    int64_t id;
    xf_rule_status status;
    char *text;   /* "src  =>  dst" */
    char *domain; /* where it holds, as stored (NULL: not recorded) */
    char *names;  /* its input names, as stored */
} entry;

typedef struct side {
    const char *path;
    entry *e;
    size_t n, cap;
} side;

static void side_free(side *s)
{
    for (size_t i = 0; i < s->n; i++) {
        xf_free(s->e[i].text);
        xf_free(s->e[i].domain);
        xf_free(s->e[i].names);
    }
    xf_free(s->e);
}

static int push(side *s, const entry *e)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 256;
        entry *p = xf_realloc(s->e, nc * sizeof *p);
        if (!p) return 0;
        s->e = p;
        s->cap = nc;
    }
    s->e[s->n++] = *e;
    return 1;
}

static char *rule_text(const xf_rule *r, xf_error *err)
{
    char *a = audit_format(&r->src, err);
    char *b = a ? audit_format(&r->dst, err) : NULL;
    char *t = b ? xf_malloc(strlen(a) + strlen(b) + 8) : NULL;
    if (t) sprintf(t, "%s  =>  %s", a, b);
    else if (b) XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    xf_free(a);
    xf_free(b);
    return t;
}

/* One rule into s: loaded, keyed, described. */
static xf_status add_rule(xf_rulesdb *db, const xf_rulesdb_rule_info *info, side *s,
                          xf_error *err)
{
    xf_rule r;
    xf_status st = xf_rulesdb_load_rule(db, info->id, &r, err);
    if (st != XF_OK) return st;
    entry e = {{0, 0}, {0, 0}, info->id, info->status, NULL, NULL, NULL};
    st = xf_rule_key_of(&r, &e.key, &e.rev, err);
    if (st == XF_OK) {
        e.text = rule_text(&r, err);
        if (!e.text) st = err->code;
    }
    if (st == XF_OK && info->domain && !(e.domain = xf_strdup(info->domain)))
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading %s", s->path);
    if (st == XF_OK && info->input_names && !(e.names = xf_strdup(info->input_names)))
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading %s", s->path);
    if (st == XF_OK && !push(s, &e)) {
        xf_free(e.domain);
        xf_free(e.names);
        xf_free(e.text);
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading %s", s->path);
    }
    if (st != XF_OK) xf_error_prefix(err, "rule %" PRId64, info->id);
    xf_rule_free(&r);
    return st;
}

static int by_key(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = xf_rule_key_cmp(&x->key, &y->key);
    return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* Reads every rule of s->path; an exit status. */
static int read_side(side *s)
{
    xf_error err;
    xf_rulesdb *db = NULL;
    if (xf_rulesdb_open(s->path, XF_RULESDB_READONLY, &db, &err) != XF_OK) {
        audit_error(&err);
        return 2;
    }
    xf_rulesdb_filter all;
    memset(&all, 0, sizeof all);
    all.any_status = 1;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    int rc = 0, has = 0;
    xf_status st = xf_rulesdb_iter_begin(db, &all, &it, &err);
    while (st == XF_OK && (st = xf_rulesdb_iter_next(it, &info, &has, &err)) == XF_OK && has)
        st = add_rule(db, &info, s, &err);
    if (st != XF_OK) {
        xf_error_prefix(&err, "%s", s->path);
        audit_error(&err);
        rc = 2;
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    xf_rulesdb_close(db);
    qsort(s->e, s->n, sizeof *s->e, by_key);
    return rc;
}

/* The entry of s with key k, or NULL (s is sorted by key). */
static const entry *find(const side *s, const xf_rule_key *k)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (xf_rule_key_cmp(&s->e[mid].key, k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && xf_rule_key_cmp(&s->e[lo].key, k) == 0 ? &s->e[lo] : NULL;
}

static int by_id(const void *x, const void *y)
{
    const entry *a = *(const entry *const *)x, *b = *(const entry *const *)y;
    return (a->id > b->id) - (a->id < b->id);
}

/* Lists, in id order, the rules of `a` whose key `b` lacks, noting those
 * `b` has the other way round; returns how many (-1 when out of memory),
 * *reversed how many of them. */
static int64_t only_in(FILE *out, const side *a, const side *b, char mark, int64_t *reversed)
{
    const entry **list = xf_malloc(sizeof *list * (a->n + 1));
    if (!list) return -1;
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++)
        if (!find(b, &a->e[i].key)) list[n++] = &a->e[i];
    qsort(list, n, sizeof *list, by_id);
    *reversed = 0;
    if (n) fprintf(out, "only in %s:\n", a->path);
    for (size_t i = 0; i < n; i++) {
        const entry *e = list[i];
        fprintf(out, "%c %6" PRId64 "  %-9s  %s", mark, e->id, xf_rulesdb_status_name(e->status), e->text);
        const entry *r = find(b, &e->rev);
        if (r) {
            fprintf(out, "  [reversed in %s: rule %" PRId64 "]", b->path, r->id);
            (*reversed)++;
        }
        fprintf(out, "\n");
    }
    xf_free(list);
    return (int64_t)n;
}

static int same_text(const char *x, const char *y)
{
    return (!x && !y) || (x && y && strcmp(x, y) == 0);
}

/* Pairs equal keys (k-th of a group with k-th) and lists status changes,
 * and, for pairs of one status whose inputs have the same names, the
 * validity domains that differ (*domains counts them). */
static int64_t status_changes(FILE *out, const side *a, const side *b, int64_t *in_both, int64_t *domains)
{
    int64_t n = 0;
    size_t i = 0, j = 0;
    *in_both = 0;
    *domains = 0;
    while (i < a->n && j < b->n) {
        int c = xf_rule_key_cmp(&a->e[i].key, &b->e[j].key);
        if (c < 0) {
            i++;
        } else if (c > 0) {
            j++;
        } else {
            (*in_both)++;
            if (a->e[i].status != b->e[j].status) {
                if (n++ == 0) fprintf(out, "in both, status differs (%s id, %s id):\n", a->path, b->path);
                fprintf(out, "! %6" PRId64 " %-9s -> %6" PRId64 " %-9s  %s\n", a->e[i].id,
                       xf_rulesdb_status_name(a->e[i].status), b->e[j].id,
                       xf_rulesdb_status_name(b->e[j].status), b->e[j].text);
            } else if (same_text(a->e[i].names, b->e[j].names) &&
                       !same_text(a->e[i].domain, b->e[j].domain)) {
                (*domains)++;
                fprintf(out, "~ %6" PRId64 " %-9s holds where %s -> %6" PRId64 " where %s\n",
                       a->e[i].id, xf_rulesdb_status_name(a->e[i].status),
                       a->e[i].domain ? a->e[i].domain : "(not recorded)", b->e[j].id,
                       b->e[j].domain ? b->e[j].domain : "(not recorded)");
            }
            i++;
            j++;
        }
    }
    return n;
}

int xf_audit_diff(FILE *out, const xf_audit_options *o)
{
    side a = {o->db, NULL, 0, 0}, b = {o->db2, NULL, 0, 0};
    int rc = read_side(&a);
    if (rc == 0) rc = read_side(&b);
    if (rc == 0) {
        int64_t rev_a = 0, rev_b = 0, both = 0;
        int64_t only_a = only_in(out, &a, &b, '<', &rev_a);
        int64_t only_b = only_in(out, &b, &a, '>', &rev_b);
        int64_t domains = 0;
        int64_t changed = status_changes(out, &a, &b, &both, &domains);
        if (only_a < 0 || only_b < 0) {
            fprintf(stderr, "xferdb: out of memory comparing the databases\n");
            side_free(&a);
            side_free(&b);
            return 2;
        }
        fprintf(out, "diff: %s has %zu rules, %s has %zu: %" PRId64 " only in %s (%" PRId64
               " reversed in the other), %" PRId64 " only in %s (%" PRId64
               " reversed in the other), %" PRId64 " pairs in both (%" PRId64
               " with another status, %" PRId64 " with another validity domain)\n",
               a.path, a.n, b.path, b.n, only_a, a.path, rev_a, only_b, b.path, rev_b, both,
               changed, domains);
        rc = only_a || only_b ? 1 : 0;
    }
    side_free(&a);
    side_free(&b);
    return rc;
}
