/*
 * domain.c — rule validity domains: where a rule holds, as conditions on
 * the dims of its inputs. One mechanism for every producer of rules:
 *
 *  - xferverify records the domain of a rule it proves: what the operators
 *    of its two sides demand of the input dims (xf_domain_of_rule,
 *    domain_infer.c), plus the conditions the bounded check needed where
 *    the rule is false elsewhere and the sizes its proof read at their own
 *    value (xf_domain_of_rule_held; verify/), so "proved" means "proved
 *    wherever these hold";
 *  - derive/ composes the domain of a derived rule: a chain is valid
 *    exactly where every graph on it can be built and every step's rule
 *    is valid at the dims it is applied at, each mapped onto the derived
 *    rule's inputs (xf_domain_add_graph, xf_domain_add_mapped);
 *  - the matcher (agent/rewrite) applies a rule only where its domain
 *    holds at the bound input shapes (xf_domain_holds).
 *
 * Representation (ir.h): a conjunction of conditions, each a linear form
 * sum(coef * dim) + c with integer coefficients over dims named (rule
 * input, axis counted from the end) and a relation: == 0 (XF_DOM_EQ),
 * >= 0 (XF_DOM_GE), == 0 modulo m (XF_DOM_MOD). Text (the rules
 * database's `domain` column, docs/rulesdb.md):
 *
 *     m2[-2] == m0[-1]; w0[-1] == 3; x0[-2] + x1[-2] == m0[-1]; (x0[-1]) % 2 == 0
 *
 * Adding a kind of condition (say a product of dims, for a reshape's
 * heads): a new xf_dom_kind, and its clause in the four switches below
 * (holds, normalise_atom, format_atom, parse_atom); the symbolic rules of
 * the operators that produce it go in domain_infer.c.
 *
 * Normal form (xf_domain_normalize): equalities between two dims and
 * between a dim and a constant are kept in a union-find whose class is
 * named by its lowest dim (input, then axis); every other condition has
 * those substituted, is divided by the gcd of its coefficients and
 * dropped when trivially true; the rest are sorted and deduplicated. So
 * the same conditions reached two ways (a derived rule's chain, the
 * verifier) mostly print the same, and an unsatisfiable domain is "0 == 1".
 */
#include "op_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void xf_domain_init(xf_domain *d)
{
    memset(d, 0, sizeof *d);
}

void xf_domain_free(xf_domain *d)
{
    xf_free(d->a);
    xf_domain_init(d);
}

void xf_domain_clear(xf_domain *d)
{
    d->n = 0;
    d->known = 1;
}

xf_status xf_domain_add(xf_domain *d, const xf_dom_atom *a, xf_error *err)
{
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 8;
        xf_dom_atom *p = xf_realloc(d->a, sizeof *p * (size_t)cap);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory building a validity domain");
        d->a = p;
        d->cap = cap;
    }
    d->a[d->n++] = *a;
    return XF_OK;
}

/* Appends every condition of src (known stays as it is in d). */
static xf_status domain_add_all(xf_domain *d, const xf_domain *src, xf_error *err)
{
    for (int i = 0; i < src->n; i++) {
        xf_status st = xf_domain_add(d, &src->a[i], err);
        if (st != XF_OK) return st;
    }
    return XF_OK;
}

xf_status xf_domain_copy(const xf_domain *src, xf_domain *dst, xf_error *err)
{
    dst->n = 0;
    dst->known = src->known;
    return domain_add_all(dst, src, err);
}

/* ------------------------------------------------------------- evaluation */

/* Dim `axis` (< 0) of s; 1 for an axis the tensor does not have. */
static int64_t dim_at(const xf_shape *s, int axis)
{
    int i = s->rank + axis;
    return i >= 0 && axis < 0 ? s->dims[i] : 1;
}

int xf_domain_holds(const xf_domain *d, const xf_shape *const *in, int n)
{
    if (!d->known) return 0;
    for (int i = 0; i < d->n; i++) {
        const xf_dom_atom *a = &d->a[i];
        int64_t v = a->c;
        for (int k = 0; k < a->n; k++) {
            if (a->dim[k].input < 0 || a->dim[k].input >= n || !in[a->dim[k].input]) return 0;
            int64_t t;
            if (__builtin_mul_overflow(a->coef[k], dim_at(in[a->dim[k].input], a->dim[k].axis),
                                       &t) ||
                __builtin_add_overflow(v, t, &v))
                return 0;
        }
        switch (a->kind) {
        case XF_DOM_EQ:
            if (v != 0) return 0;
            break;
        case XF_DOM_GE:
            if (v < 0) return 0;
            break;
        case XF_DOM_MOD:
            if (a->m < 1 || v % a->m != 0) return 0;
            break;
        default: return 0;
        }
    }
    return 1;
}

/* ---------------------------------------------------------- normal form */

static int64_t dim_key(xf_dim_ref r)
{
    return (int64_t)r.input * 64 + (r.axis + 32);
}

static int64_t gcd64(int64_t a, int64_t b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int64_t floor_div(int64_t a, int64_t b) /* b > 0 */
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int64_t mod_pos(int64_t a, int64_t m) /* m > 0: [0, m) */
{
    int64_t r = a % m;
    return r < 0 ? r + m : r;
}

/* Terms sorted by dim, equal dims merged, zero coefficients dropped;
 * -1 on overflow. */
static int merge_terms(xf_dom_atom *a)
{
    for (int i = 1; i < a->n; i++) /* insertion sort: n <= XF_DOMAIN_MAX_TERMS */
        for (int j = i; j > 0 && dim_key(a->dim[j]) < dim_key(a->dim[j - 1]); j--) {
            xf_dim_ref r = a->dim[j];
            a->dim[j] = a->dim[j - 1], a->dim[j - 1] = r;
            int64_t c = a->coef[j];
            a->coef[j] = a->coef[j - 1], a->coef[j - 1] = c;
        }
    int k = 0;
    for (int i = 0; i < a->n; i++) {
        if (k > 0 && dim_key(a->dim[k - 1]) == dim_key(a->dim[i])) {
            if (__builtin_add_overflow(a->coef[k - 1], a->coef[i], &a->coef[k - 1])) return -1;
        } else {
            a->dim[k] = a->dim[i];
            a->coef[k++] = a->coef[i];
        }
    }
    int m = 0;
    for (int i = 0; i < k; i++)
        if (a->coef[i] != 0) a->dim[m] = a->dim[i], a->coef[m++] = a->coef[i];
    a->n = m;
    return 0;
}

static int all_positive(const xf_dom_atom *a)
{
    for (int i = 0; i < a->n; i++)
        if (a->coef[i] <= 0) return 0;
    return 1;
}

/* One condition in normal form; returns 1 when it is trivially true, -1
 * when it can never hold, 0 otherwise, -2 on overflow. */
static int normalise_atom(xf_dom_atom *a)
{
    if (merge_terms(a) < 0) return -2;
    int64_t g = 0;
    for (int i = 0; i < a->n; i++) g = gcd64(g, a->coef[i]);
    switch (a->kind) {
    case XF_DOM_EQ:
        if (a->n == 0) return a->c == 0 ? 1 : -1;
        if (a->c % g != 0) return -1;
        if (a->coef[0] < 0) g = -g;
        for (int i = 0; i < a->n; i++) a->coef[i] /= g;
        a->c /= g;
        return 0;
    case XF_DOM_GE: {
        if (a->n == 0) return a->c >= 0 ? 1 : -1;
        for (int i = 0; i < a->n; i++) a->coef[i] /= g;
        a->c = floor_div(a->c, g);
        if (!all_positive(a)) return 0;
        int64_t least = a->c; /* its least value: every dim is at least 1 */
        for (int i = 0; i < a->n; i++)
            if (__builtin_add_overflow(least, a->coef[i], &least)) return 0;
        return least >= 0 ? 1 : 0;
    }
    case XF_DOM_MOD: {
        if (a->m < 1) return -1;
        for (int i = 0; i < a->n; i++) a->coef[i] = mod_pos(a->coef[i], a->m);
        a->c = mod_pos(a->c, a->m);
        if (merge_terms(a) < 0) return -2;
        int64_t h = a->m;
        for (int i = 0; i < a->n; i++) h = gcd64(h, a->coef[i]);
        if (a->c % h != 0) return -1;
        for (int i = 0; i < a->n; i++) a->coef[i] /= h;
        a->c /= h;
        a->m /= h;
        if (a->m == 1) return 1;
        if (a->n == 0) return a->c == 0 ? 1 : -1;
        return 0;
    }
    default: return -1;
    }
}

/* The union-find over the dims a domain names. */
typedef struct dims_uf {
    int n;
    int64_t *key;   /* sorted */
    int *parent;
    int *has_val;
    int64_t *val;
} dims_uf;

static int uf_index(const dims_uf *u, xf_dim_ref r)
{
    int64_t k = dim_key(r);
    int lo = 0, hi = u->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (u->key[mid] == k) return mid;
        if (u->key[mid] < k) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static int uf_find(dims_uf *u, int i)
{
    while (u->parent[i] != i) i = u->parent[i] = u->parent[u->parent[i]];
    return i;
}

static xf_dim_ref key_dim(int64_t k)
{
    xf_dim_ref r = {(int16_t)(k / 64), (int16_t)(k % 64 - 32)};
    return r;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_atom(const void *pa, const void *pb)
{
    const xf_dom_atom *a = pa, *b = pb;
    if (a->kind != b->kind) return a->kind - b->kind;
    if (a->n != b->n) return a->n - b->n;
    for (int i = 0; i < a->n; i++) {
        int64_t x = dim_key(a->dim[i]), y = dim_key(b->dim[i]);
        if (x != y) return x < y ? -1 : 1;
        if (a->coef[i] != b->coef[i]) return a->coef[i] < b->coef[i] ? -1 : 1;
    }
    if (a->c != b->c) return a->c < b->c ? -1 : 1;
    return (a->m > b->m) - (a->m < b->m);
}

/* Replaces each dim of a by its class's name or value. */
static int substitute(dims_uf *u, xf_dom_atom *a)
{
    for (int i = 0; i < a->n; i++) {
        int r = uf_find(u, uf_index(u, a->dim[i]));
        if (u->has_val[r]) {
            int64_t t;
            if (__builtin_mul_overflow(a->coef[i], u->val[r], &t) ||
                __builtin_add_overflow(a->c, t, &a->c))
                return -2;
            a->coef[i] = 0;
        } else {
            a->dim[i] = key_dim(u->key[r]);
        }
    }
    return normalise_atom(a);
}

/* Takes in a dim equality or value (EQ of one or two unit terms);
 * returns 1 when it did, -1 when it contradicts what is known, 0 when a
 * is some other condition. */
static int absorb(dims_uf *u, const xf_dom_atom *a)
{
    if (a->kind != XF_DOM_EQ) return 0;
    if (a->n == 1) { /* coef * x + c == 0, coef > 0 after normalising */
        if (a->coef[0] != 1) return 0;
        int r = uf_find(u, uf_index(u, a->dim[0]));
        u->has_val[r] = 1, u->val[r] = -a->c;
        return 1;
    }
    if (a->n == 2 && a->c == 0 && a->coef[0] == 1 && a->coef[1] == -1) {
        int x = uf_find(u, uf_index(u, a->dim[0])), y = uf_find(u, uf_index(u, a->dim[1]));
        if (x == y) return 1;
        int lo = x < y ? x : y, hi = x < y ? y : x; /* the lowest dim names the class */
        if (u->has_val[lo] && u->has_val[hi] && u->val[lo] != u->val[hi]) return -1;
        if (!u->has_val[lo] && u->has_val[hi]) u->has_val[lo] = 1, u->val[lo] = u->val[hi];
        u->parent[hi] = lo;
        return 1;
    }
    return 0;
}

static void set_false(xf_domain *d)
{
    xf_dom_atom f;
    memset(&f, 0, sizeof f);
    f.kind = XF_DOM_EQ;
    f.c = -1; /* "0 == 1" */
    d->n = 0;
    d->a[d->n++] = f; /* d->cap >= 1: it had a condition */
}

xf_status xf_domain_normalize(xf_domain *d, xf_error *err)
{
    if (d->n == 0) return XF_OK;
    dims_uf u;
    memset(&u, 0, sizeof u);
    int total = 0;
    for (int i = 0; i < d->n; i++) total += d->a[i].n;
    u.key = xf_malloc(sizeof *u.key * ((size_t)total + 1));
    u.parent = xf_malloc(sizeof *u.parent * ((size_t)total + 1));
    u.has_val = xf_calloc((size_t)total + 1, sizeof *u.has_val);
    u.val = xf_calloc((size_t)total + 1, sizeof *u.val);
    uint8_t *active = xf_malloc((size_t)d->n);
    xf_dom_atom *out = xf_malloc(sizeof *out * ((size_t)d->n + (size_t)total + 1));
    xf_status st = XF_OK;
    if (!u.key || !u.parent || !u.has_val || !u.val || !active || !out) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory normalising a validity domain");
        goto done;
    }
    for (int i = 0; i < d->n; i++)
        for (int k = 0; k < d->a[i].n; k++) u.key[u.n++] = dim_key(d->a[i].dim[k]);
    qsort(u.key, (size_t)u.n, sizeof *u.key, cmp_i64);
    int m = 0;
    for (int i = 0; i < u.n; i++)
        if (m == 0 || u.key[m - 1] != u.key[i]) u.key[m++] = u.key[i];
    u.n = m;
    for (int i = 0; i < u.n; i++) u.parent[i] = i;
    memset(active, 1, (size_t)d->n);
    int bad = 0;
    for (int changed = 1; changed && !bad;) {
        changed = 0;
        for (int i = 0; i < d->n && !bad; i++) {
            if (!active[i]) continue;
            int r = substitute(&u, &d->a[i]);
            if (r == -2) {
                st = XF_FAIL(err, XF_ERR_INVALID, "validity domain: a coefficient overflows");
                goto done;
            }
            if (r == -1) bad = 1;
            if (r != 0) {
                active[i] = 0;
                continue;
            }
            int took = absorb(&u, &d->a[i]);
            if (took < 0) bad = 1;
            if (took != 0) active[i] = 0, changed = 1;
        }
    }
    if (bad) {
        set_false(d);
        goto done;
    }
    int n = 0;
    for (int i = 0; i < u.n; i++) { /* class members, then values, by dim */
        int r = uf_find(&u, i);
        xf_dom_atom a;
        memset(&a, 0, sizeof a);
        a.kind = XF_DOM_EQ;
        if (r != i) {
            a.n = 2;
            a.dim[0] = key_dim(u.key[r]), a.coef[0] = 1;
            a.dim[1] = key_dim(u.key[i]), a.coef[1] = -1;
            out[n++] = a;
        } else if (u.has_val[r]) {
            a.n = 1;
            a.dim[0] = key_dim(u.key[i]), a.coef[0] = 1, a.c = -u.val[r];
            out[n++] = a;
        }
    }
    int first_other = n;
    for (int i = 0; i < d->n; i++)
        if (active[i]) out[n++] = d->a[i];
    qsort(out + first_other, (size_t)(n - first_other), sizeof *out, cmp_atom);
    int k = first_other;
    for (int i = first_other; i < n; i++)
        if (k == first_other || cmp_atom(&out[k - 1], &out[i]) != 0) out[k++] = out[i];
    n = k;
    if (n > d->cap) {
        xf_dom_atom *p = xf_realloc(d->a, sizeof *p * (size_t)n);
        if (!p) {
            st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory normalising a validity domain");
            goto done;
        }
        d->a = p;
        d->cap = n;
    }
    memcpy(d->a, out, sizeof *out * (size_t)n);
    d->n = n;
done:
    xf_free(u.key);
    xf_free(u.parent);
    xf_free(u.has_val);
    xf_free(u.val);
    xf_free(active);
    xf_free(out);
    return st;
}

xf_status xf_domain_implies(const xf_domain *a, const xf_domain *b, int *yes, xf_error *err)
{
    *yes = 0;
    if (!a->known || !b->known) return XF_OK;
    xf_domain x, y;
    xf_domain_init(&x);
    xf_domain_init(&y);
    xf_status st = xf_domain_copy(a, &x, err);
    if (st == XF_OK) st = xf_domain_copy(a, &y, err);
    if (st == XF_OK) st = domain_add_all(&y, b, err);
    if (st == XF_OK) st = xf_domain_normalize(&x, err);
    if (st == XF_OK) st = xf_domain_normalize(&y, err);
    if (st == XF_OK) *yes = xf_domain_equal(&x, &y);
    xf_domain_free(&x);
    xf_domain_free(&y);
    return st;
}

int xf_domain_equal(const xf_domain *a, const xf_domain *b)
{
    if (!a->known || !b->known || a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++)
        if (cmp_atom(&a->a[i], &b->a[i]) != 0) return 0;
    return 1;
}

/* ------------------------------------------------------------------ text */

static void put_dim(xf_strbuf *b, xf_dim_ref r, const char *const *names, int n_names)
{
    if (r.input >= 0 && r.input < n_names && names && names[r.input])
        xf_strbuf_printf(b, "%s[%d]", names[r.input], r.axis);
    else
        xf_strbuf_printf(b, "in%d[%d]", r.input, r.axis);
}

/* Writes the terms with sign `sign` (+1 or -1) as a sum of positive
 * terms, then the constant k when positive; "0" when nothing is written. */
static void put_side(xf_strbuf *b, const xf_dom_atom *a, int sign, int64_t k,
                     const char *const *names, int n_names)
{
    int any = 0;
    for (int i = 0; i < a->n; i++) {
        int64_t c = a->coef[i] * sign;
        if (c <= 0) continue;
        xf_strbuf_printf(b, "%s", any ? " + " : "");
        if (c != 1) xf_strbuf_printf(b, "%lld*", (long long)c);
        put_dim(b, a->dim[i], names, n_names);
        any = 1;
    }
    if (k > 0) xf_strbuf_printf(b, any ? " + %lld" : "%lld", (long long)k), any = 1;
    if (!any) xf_strbuf_printf(b, "0");
}

static void format_atom(xf_strbuf *b, const xf_dom_atom *a, const char *const *names, int n_names)
{
    switch (a->kind) {
    case XF_DOM_EQ:
    case XF_DOM_GE:
        put_side(b, a, 1, a->c, names, n_names);
        xf_strbuf_printf(b, a->kind == XF_DOM_EQ ? " == " : " >= ");
        put_side(b, a, -1, -a->c, names, n_names);
        break;
    case XF_DOM_MOD:
        xf_strbuf_printf(b, "(");
        for (int i = 0; i < a->n; i++) {
            int64_t c = a->coef[i];
            if (i > 0) xf_strbuf_printf(b, c < 0 ? " - " : " + ");
            else if (c < 0) xf_strbuf_printf(b, "-");
            if (c != 1 && c != -1) xf_strbuf_printf(b, "%lld*", (long long)(c < 0 ? -c : c));
            put_dim(b, a->dim[i], names, n_names);
        }
        xf_strbuf_printf(b, ") %% %lld == %lld", (long long)a->m, (long long)mod_pos(-a->c, a->m));
        break;
    default: xf_strbuf_printf(b, "?");
    }
}

xf_status xf_domain_format(const xf_domain *d, const char *const *names, int n_names, char *buf,
                           size_t n, xf_error *err)
{
    xf_strbuf b = {buf, n, 0, 0};
    if (n > 0) buf[0] = 0;
    for (int i = 0; i < d->n; i++) {
        if (i > 0) xf_strbuf_printf(&b, "; ");
        format_atom(&b, &d->a[i], names, n_names);
    }
    if (b.overflow)
        return XF_FAIL(err, XF_ERR_INVALID, "validity domain needs %zu bytes, buffer has %zu",
                       b.len + 1, n);
    return XF_OK;
}

/* The parser's state. */
typedef struct parser {
    const char *s, *p;
    const char *const *names;
    int n_names;
    xf_error *err;
} parser;

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n') ps->p++;
}

static int eat(parser *ps, const char *tok)
{
    skip_ws(ps);
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) != 0) return 0;
    ps->p += n;
    return 1;
}

static xf_status perr(parser *ps, const char *what)
{
    return XF_FAIL(ps->err, XF_ERR_PARSE, "validity domain '%s': %s at offset %d ('%.16s')", ps->s,
                   what, (int)(ps->p - ps->s), ps->p);
}

static xf_status read_int(parser *ps, int64_t *v)
{
    skip_ws(ps);
    if (!isdigit((unsigned char)*ps->p)) return perr(ps, "expected a number");
    int64_t x = 0;
    while (isdigit((unsigned char)*ps->p)) {
        if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *ps->p - '0', &x))
            return perr(ps, "number out of range");
        ps->p++;
    }
    *v = x;
    return XF_OK;
}

static xf_status read_dim(parser *ps, xf_dim_ref *r)
{
    skip_ws(ps);
    const char *q = ps->p;
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_') ps->p++;
    size_t len = (size_t)(ps->p - q);
    if (len == 0) return perr(ps, "expected an input name");
    int input = -1;
    for (int i = 0; i < ps->n_names && input < 0; i++)
        if (ps->names && ps->names[i] && strlen(ps->names[i]) == len &&
            strncmp(ps->names[i], q, len) == 0)
            input = i;
    if (input < 0 && len > 2 && strncmp(q, "in", 2) == 0) {
        char *end = NULL;
        long v = strtol(q + 2, &end, 10);
        if (end == ps->p && v >= 0 && v < 32767) input = (int)v;
    }
    if (input < 0) {
        ps->p = q;
        return perr(ps, "not an input of the rule");
    }
    if (!eat(ps, "[")) return perr(ps, "expected '['");
    if (!eat(ps, "-")) return perr(ps, "an axis is counted from the end ([-1] is the last)");
    int64_t a = 0;
    xf_status st = read_int(ps, &a);
    if (st != XF_OK) return st;
    if (a < 1 || a > XF_MAX_DIMS) return perr(ps, "axis out of range");
    if (!eat(ps, "]")) return perr(ps, "expected ']'");
    r->input = (int16_t)input;
    r->axis = (int16_t)-a;
    return XF_OK;
}

/* A sum of terms, added to a with sign `sign`. */
static xf_status read_linear(parser *ps, xf_dom_atom *a, int sign)
{
    int s = 1;
    if (eat(ps, "-")) s = -1;
    for (;;) {
        skip_ws(ps);
        int64_t k = 1;
        int has_num = 0;
        if (isdigit((unsigned char)*ps->p)) {
            xf_status st = read_int(ps, &k);
            if (st != XF_OK) return st;
            has_num = 1;
        }
        int has_dim = !has_num || eat(ps, "*");
        if (has_dim) {
            if (a->n == XF_DOMAIN_MAX_TERMS) return perr(ps, "too many terms");
            xf_status st = read_dim(ps, &a->dim[a->n]);
            if (st != XF_OK) return st;
            a->coef[a->n++] = k * s * sign;
        } else {
            a->c += k * s * sign;
        }
        if (eat(ps, "+")) s = 1;
        else if (eat(ps, "-")) s = -1;
        else return XF_OK;
    }
}

static xf_status parse_atom(parser *ps, xf_dom_atom *a)
{
    memset(a, 0, sizeof *a);
    xf_status st;
    if (eat(ps, "(")) {
        a->kind = XF_DOM_MOD;
        st = read_linear(ps, a, 1);
        if (st != XF_OK) return st;
        if (!eat(ps, ")")) return perr(ps, "expected ')'");
        if (!eat(ps, "%")) return perr(ps, "expected '%'");
        if ((st = read_int(ps, &a->m)) != XF_OK) return st;
        if (a->m < 2) return perr(ps, "a modulus is at least 2");
        if (!eat(ps, "==")) return perr(ps, "expected '=='");
        int64_t r = 0;
        if ((st = read_int(ps, &r)) != XF_OK) return st;
        a->c -= r;
        return XF_OK;
    }
    if ((st = read_linear(ps, a, 1)) != XF_OK) return st;
    int flip = 0;
    if (eat(ps, "==")) a->kind = XF_DOM_EQ;
    else if (eat(ps, ">=")) a->kind = XF_DOM_GE;
    else if (eat(ps, "<=")) a->kind = XF_DOM_GE, flip = 1;
    else return perr(ps, "expected '==', '>=' or '<='");
    if ((st = read_linear(ps, a, -1)) != XF_OK) return st;
    if (flip) {
        for (int i = 0; i < a->n; i++) a->coef[i] = -a->coef[i];
        a->c = -a->c;
    }
    return XF_OK;
}

xf_status xf_domain_parse(const char *text, const char *const *names, int n_names,
                          xf_domain *out, xf_error *err)
{
    xf_domain_clear(out);
    parser ps = {text, text, names, n_names, err};
    skip_ws(&ps);
    while (*ps.p) {
        xf_dom_atom a;
        xf_status st = parse_atom(&ps, &a);
        if (st == XF_OK && normalise_atom(&a) == -2) st = perr(&ps, "number out of range");
        if (st == XF_OK) st = xf_domain_add(out, &a, err);
        if (st != XF_OK) {
            out->n = 0;
            return st;
        }
        skip_ws(&ps);
        if (*ps.p && !eat(&ps, ";")) return perr(&ps, "expected ';' between conditions");
        skip_ws(&ps);
    }
    return XF_OK;
}
