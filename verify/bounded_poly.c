/*
 * bounded_poly.c — canonical polynomial forms of the bounded check's terms,
 * so that most output elements are decided equal without the solver.
 *
 * A real term is normalised into a sum of monomials with exact rational
 * coefficients (int64 numerator and denominator; overflow gives up). A
 * monomial is a sorted multiset of atoms; an atom is an input constant or a
 * non-polynomial node whose arguments are normalised first: ite(cond, p, q),
 * an abstract function applied to p, p / q. A quotient by a q that is
 * positive by the check's facts (vf_bounded_canon_fact: exp > 0, a layer norm's
 * deviation > 0) is p times the atom 1/q instead, 1 when p is q and 0 when
 * p is 0, so a softmax over one element is 1 and the mean of a layer norm
 * cancels; sums and products then use q * (1/q) = 1 on the multiples of q
 * among the terms carrying 1/q (cancel_inverses), so a softmax summed
 * along its axis is 1. Conditions a > b and a >= b
 * become (a - b) > 0 and (a - b) >= 0 with a - b scaled so its first
 * coefficient is +-1. Atoms, monomials and polynomials are interned (hash
 * tables), so two terms have the same canonical id exactly when their
 * normal forms are identical; equal normal forms are equal for every value
 * of the inputs and of the abstract functions that satisfies the facts,
 * which is what the bounded check asserts (its queries assume the facts).
 * Only an element whose two sides differ is rebuilt from its normal form
 * as a Z3 term (building the terms of equal elements was
 * most of the time of a rule of three convolutions), so the solver sees
 * shared subterms (relu conditions) as one term.
 *
 * Anything else (a Z3 operator not listed, a coefficient that overflows, a
 * polynomial beyond XFB_POLY_MAX_TERMS monomials) leaves the term as it
 * was: the caller then compares the raw terms with the solver, except past
 * the size limit (vf_bounded_canon_too_large), where it stops instead: a solver
 * given raw convolutions of convolutions of that size ran 45 s a rule to
 * its timeout. Running out
 * of memory is not "outside the normaliser": every allocation site sets the
 * table's sticky nomem flag, and vf_bounded_canon_id and vf_bounded_canon_build then
 * report XF_ERR_NOMEM,
 * so the check fails instead of quietly falling back to the solver.
 */
#include "bounded_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XFB_POLY_MAX_TERMS 20000

/* Interned uint32 blobs in one pool, each stored as a header (its length,
 * then its hash in two words) and its words; off[id] is where blob id
 * starts. The index maps a blob's hash to the blob's id and offset packed in
 * one value (id | offset << 32), so a probe reads its slot and the blob and
 * nothing else (an offset array and a length array read on every hit were
 * two more cache misses). A new blob is written where it would be stored,
 * at the pool's tail (itab_tail), and kept only when it is not there
 * already (itab_keep_tail): no copy. The caller gives the hash: a blob's
 * words hashed (hash_words), or for a monomial one that a product or a
 * quotient gets from its factors' (mono_hash). Ids count up in the order
 * blobs are first kept, whatever the hash. */
typedef struct itab {
    uint32_t *pool;
    size_t pool_n, pool_cap;
    uint32_t *off;
    uint32_t n, cap;
    xf_htab index; /* blob hash -> id | offset << 32 */
} itab;

enum { ITAB_HEAD = 3 }; /* length, hash (low, high) */

static uint64_t hash_words(const uint32_t *w, uint32_t n)
{
    return xf_hash_bytes(n, w, (size_t)n * sizeof *w);
}

static void itab_free(itab *t)
{
    xf_free(t->pool);
    xf_free(t->off);
    xf_htab_free(&t->index);
    memset(t, 0, sizeof *t);
}

/* Room for one more blob of up to n words: where its words go (the pool's
 * tail, past its header), NULL when out of memory. Pointers into the pool
 * taken before are stale after this call. */
static uint32_t *itab_tail(itab *t, size_t n)
{
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 1024;
        uint32_t *o = xf_realloc(t->off, (size_t)cap * sizeof *o);
        if (!o) return NULL;
        t->off = o, t->cap = cap;
    }
    if (t->pool_n + ITAB_HEAD + n > t->pool_cap) {
        size_t cap = t->pool_cap ? 2 * t->pool_cap : 1 << 16;
        while (cap < t->pool_n + ITAB_HEAD + n) cap *= 2;
        uint32_t *p = xf_realloc(t->pool, cap * sizeof *p);
        if (!p) return NULL;
        t->pool = p, t->pool_cap = cap;
    }
    return t->pool + t->pool_n + ITAB_HEAD;
}

/* Id of the blob of n words written at itab_tail, whose hash is h, kept
 * when new; -1 when out of memory (or past the offsets the index holds,
 * 16 GiB of pool). */
static int32_t itab_keep_tail(itab *t, uint32_t n, uint64_t h)
{
    uint32_t *w = t->pool + t->pool_n + ITAB_HEAD;
    size_t pos = XF_HTAB_START;
    for (const uint64_t *e; (e = xf_htab_next(&t->index, xf_htab_key(h), &pos));) {
        const uint32_t *b = t->pool + (*e >> 32);
        if (b[0] == n && memcmp(b + ITAB_HEAD, w, (size_t)n * sizeof *w) == 0)
            return (int32_t)(uint32_t)*e;
    }
    if (t->pool_n > UINT32_MAX) return -1;
    if (xf_htab_add(&t->index, xf_htab_key(h), t->n | (uint64_t)t->pool_n << 32, NULL) != XF_OK)
        return -1;
    w[-3] = n, w[-2] = (uint32_t)h, w[-1] = (uint32_t)(h >> 32);
    t->off[t->n] = (uint32_t)t->pool_n;
    t->pool_n += ITAB_HEAD + (size_t)n;
    return (int32_t)t->n++;
}

/* Id of blob w[0..n) (not in t's pool) whose hash is h, added when new;
 * -1 when out of memory. */
static int32_t itab_intern(itab *t, const uint32_t *w, uint32_t n, uint64_t h)
{
    uint32_t *at = itab_tail(t, n);
    if (!at) return -1;
    if (n) memcpy(at, w, (size_t)n * sizeof *w);
    return itab_keep_tail(t, n, h);
}

static const uint32_t *itab_get(const itab *t, int32_t id, uint32_t *n)
{
    const uint32_t *b = t->pool + t->off[id];
    *n = b[0];
    return b + ITAB_HEAD;
}

/* Words of blob id. */
static uint32_t itab_len(const itab *t, int32_t id)
{
    return t->pool[t->off[id]];
}

/* The hash blob id was kept with. */
static uint64_t itab_hash(const itab *t, int32_t id)
{
    const uint32_t *b = t->pool + t->off[id];
    return (uint64_t)b[1] | (uint64_t)b[2] << 32;
}

/* ------------------------------------------------------------- rationals */

typedef struct rat {
    int64_t n, d; /* d > 0, gcd 1 */
} rat;

static __int128 gcd128(__int128 a, __int128 b)
{
    if (a < 0) a = -a;
    while (b) {
        __int128 r = a % b;
        a = b, b = r < 0 ? -r : r;
    }
    return a;
}

/* 0 when n/d fits int64 after reduction. */
static int rat_make(__int128 n, __int128 d, rat *out)
{
    if (d < 0) n = -n, d = -d;
    __int128 g = gcd128(n, d);
    if (g > 1) n /= g, d /= g;
    if (n > INT64_MAX || n < -INT64_MAX || d > INT64_MAX) return -1;
    out->n = (int64_t)n, out->d = (int64_t)d;
    return 0;
}

static int rat_add(rat a, rat b, rat *out)
{
    return rat_make((__int128)a.n * b.d + (__int128)b.n * a.d, (__int128)a.d * b.d, out);
}

static int rat_mul(rat a, rat b, rat *out)
{
    return rat_make((__int128)a.n * b.n, (__int128)a.d * b.d, out);
}

/* ------------------------------------------------------------ normaliser */

/* How many monomial lookups ahead a loop over a polynomial's terms loads
 * the slot of (xf_htab_prefetch): enough misses in flight to overlap. */
enum { PREFETCH_AHEAD = 8 };

/* Atom tags (first word of an atom blob). */
enum { A_VAR, A_ITE, A_APP, A_DIV, A_GT, A_GE, A_NOT, A_AND, A_OR, A_INV };

typedef struct term {
    int32_t mono;
    rat c;
} term;

struct xfb_canon {
    Z3_context z;
    Z3_sort real;
    itab atoms, monos, polys;
    Z3_ast *atom_ast; /* per atom id: what it stands for (var, decl, rebuilt node) */
    uint8_t *atom_pos; /* per atom id: 1 when it is positive (a fact, or 1/q with q so) */
    Z3_ast *poly_ast; /* per poly id: rebuilt term, NULL until built */
    uint32_t atom_cap, poly_cap;
    int32_t *memo;    /* per Z3 ast id: poly/bool-atom id + 1, 0 unknown, -1 failed */
    uint32_t memo_cap;
    int nomem; /* an allocation failed: every result since is meaningless */
    int64_t too_large; /* polynomials given up as beyond XFB_POLY_MAX_TERMS */
};

/* Records an allocation failure; -1 for the caller to return. */
static int32_t nomem(xfb_canon *c)
{
    c->nomem = 1;
    return -1;
}

/* itab_intern into one of c's tables, recording an allocation failure. */
static int32_t intern(xfb_canon *c, itab *t, const uint32_t *w, uint32_t n, uint64_t h)
{
    int32_t id = itab_intern(t, w, n, h);
    return id < 0 ? nomem(c) : id;
}

xfb_canon *vf_bounded_canon_new(Z3_context z, Z3_sort real)
{
    xfb_canon *c = xf_calloc(1, sizeof *c);
    if (c) c->z = z, c->real = real;
    return c;
}

void vf_bounded_canon_free(xfb_canon *c)
{
    if (!c) return;
    itab_free(&c->atoms);
    itab_free(&c->monos);
    itab_free(&c->polys);
    xf_free(c->atom_ast);
    xf_free(c->atom_pos);
    xf_free(c->poly_ast);
    xf_free(c->memo);
    xf_free(c);
}

/* itab_tail into one of c's tables, recording an allocation failure. */
static uint32_t *tail(xfb_canon *c, itab *t, size_t n)
{
    uint32_t *w = itab_tail(t, n);
    if (!w) nomem(c);
    return w;
}

/* itab_keep_tail in one of c's tables, recording an allocation failure. */
static int32_t keep_tail(xfb_canon *c, itab *t, uint32_t n, uint64_t h)
{
    int32_t id = itab_keep_tail(t, n, h);
    return id < 0 ? nomem(c) : id;
}

/* A monomial's hash: the sum of its atoms' mixed ids, so that a product's
 * is the sum of its factors' and a quotient's their difference, without
 * reading the atoms (mono_mul, mono_div). */
static uint64_t mono_hash(const uint32_t *atoms, uint32_t n)
{
    uint64_t h = 0;
    for (uint32_t i = 0; i < n; i++) h += xf_hash_u64(0, atoms[i]);
    return h;
}

static int32_t atom_intern(xfb_canon *c, const uint32_t *w, uint32_t n, Z3_ast a)
{
    int32_t id = intern(c, &c->atoms, w, n, hash_words(w, n));
    if (id < 0) return -1;
    if ((uint32_t)id >= c->atom_cap) {
        uint32_t cap = c->atom_cap ? 2 * c->atom_cap : 1024;
        Z3_ast *p = xf_realloc(c->atom_ast, (size_t)cap * sizeof *p);
        if (!p) return nomem(c);
        c->atom_ast = p;
        uint8_t *q = xf_realloc(c->atom_pos, cap);
        if (!q) return nomem(c);
        c->atom_pos = q;
        memset(p + c->atom_cap, 0, (size_t)(cap - c->atom_cap) * sizeof *p);
        memset(q + c->atom_cap, 0, cap - c->atom_cap);
        c->atom_cap = cap;
    }
    if (!c->atom_ast[id]) c->atom_ast[id] = a;
    return id;
}

static int term_cmp(const void *x, const void *y)
{
    int32_t a = ((const term *)x)->mono, b = ((const term *)y)->mono;
    return (a > b) - (a < b);
}

/* Sorts and merges t[0..n) in place, interns the polynomial. */
static int32_t poly_intern(xfb_canon *c, term *t, size_t n)
{
    qsort(t, n, sizeof *t, term_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        term s = t[i++];
        while (i < n && t[i].mono == s.mono)
            if (rat_add(s.c, t[i++].c, &s.c) != 0) return -1;
        if (s.c.n != 0) t[k++] = s;
    }
    if (k > XFB_POLY_MAX_TERMS) return c->too_large++, -1;
    uint32_t *w = tail(c, &c->polys, 5 * k);
    if (!w) return -1;
    for (size_t i = 0; i < k; i++) {
        uint64_t nn = (uint64_t)t[i].c.n, dd = (uint64_t)t[i].c.d;
        w[5 * i] = (uint32_t)t[i].mono;
        w[5 * i + 1] = (uint32_t)nn, w[5 * i + 2] = (uint32_t)(nn >> 32);
        w[5 * i + 3] = (uint32_t)dd, w[5 * i + 4] = (uint32_t)(dd >> 32);
    }
    int32_t id = keep_tail(c, &c->polys, (uint32_t)(5 * k), hash_words(w, (uint32_t)(5 * k)));
    if (id < 0) return -1;
    if ((uint32_t)id >= c->poly_cap) {
        uint32_t cap = c->poly_cap ? 2 * c->poly_cap : 1024;
        Z3_ast *p = xf_realloc(c->poly_ast, (size_t)cap * sizeof *p);
        if (!p) return nomem(c);
        memset(p + c->poly_cap, 0, (size_t)(cap - c->poly_cap) * sizeof *p);
        c->poly_ast = p, c->poly_cap = cap;
    }
    return id;
}

/* The term stored at w[0..5) of a polynomial blob: monomial id, then the
 * numerator and denominator as two 32-bit halves each (poly_intern). */
static term term_at(const uint32_t *w)
{
    term t;
    t.mono = (int32_t)w[0];
    t.c.n = (int64_t)((uint64_t)w[1] | (uint64_t)w[2] << 32);
    t.c.d = (int64_t)((uint64_t)w[3] | (uint64_t)w[4] << 32);
    return t;
}

/* Terms of poly id into a fresh array (caller xf_frees). */
static term *poly_terms(xfb_canon *c, int32_t id, size_t *n)
{
    uint32_t len;
    const uint32_t *w = itab_get(&c->polys, id, &len);
    *n = len / 5;
    term *t = xf_malloc((*n + 1) * sizeof *t);
    if (!t) return nomem(c), NULL;
    for (size_t i = 0; i < *n; i++) t[i] = term_at(w + 5 * i);
    return t;
}

static int32_t mono_unit(xfb_canon *c)
{
    static const uint32_t none[1] = {0};
    return intern(c, &c->monos, none, 0, 0);
}

/* The monomial of one atom. */
static int32_t mono_atom(xfb_canon *c, uint32_t atom)
{
    return intern(c, &c->monos, &atom, 1, mono_hash(&atom, 1));
}

/* The product of monomials a and b, whose hash is h (the sum of theirs),
 * merged at the monomial pool's tail. */
static int32_t mono_mul_hashed(xfb_canon *c, int32_t a, int32_t b, uint64_t h)
{
    uint32_t na, nb;
    uint32_t *w = tail(c, &c->monos, (size_t)itab_len(&c->monos, a) + itab_len(&c->monos, b));
    if (!w) return -1;
    const uint32_t *x = itab_get(&c->monos, a, &na);
    const uint32_t *y = itab_get(&c->monos, b, &nb);
    uint32_t i = 0, j = 0, k = 0;
    while (i < na || j < nb) w[k++] = j >= nb || (i < na && x[i] <= y[j]) ? x[i++] : y[j++];
    return keep_tail(c, &c->monos, k, h);
}

static int32_t mono_mul(xfb_canon *c, int32_t a, int32_t b)
{
    return mono_mul_hashed(c, a, b, itab_hash(&c->monos, a) + itab_hash(&c->monos, b));
}

/* Polynomial made of one atom. */
static int32_t poly_atom(xfb_canon *c, int32_t atom)
{
    term t = {mono_atom(c, (uint32_t)atom), {1, 1}};
    return t.mono < 0 ? -1 : poly_intern(c, &t, 1);
}

static int32_t poly_const(xfb_canon *c, rat k)
{
    term t = {mono_unit(c), k};
    return t.mono < 0 ? -1 : poly_intern(c, &t, k.n ? 1 : 0);
}

/* sum of k_i * p_i */
static int32_t poly_lin(xfb_canon *c, const int32_t *p, const rat *k, unsigned n)
{
    size_t total = 0, m;
    for (unsigned i = 0; i < n; i++) total += itab_len(&c->polys, p[i]) / 5;
    term *all = xf_malloc((total + 1) * sizeof *all);
    if (!all) return nomem(c);
    size_t at = 0;
    for (unsigned i = 0; i < n; i++) {
        term *t = poly_terms(c, p[i], &m);
        if (!t) return xf_free(all), -1;
        for (size_t j = 0; j < m; j++) {
            all[at] = t[j];
            if (rat_mul(t[j].c, k[i], &all[at].c) != 0) return xf_free(t), xf_free(all), -1;
            at++;
        }
        xf_free(t);
    }
    int32_t id = poly_intern(c, all, at);
    xf_free(all);
    return id;
}

static int32_t poly_mul(xfb_canon *c, int32_t a, int32_t b)
{
    size_t na, nb;
    if ((double)(itab_len(&c->polys, a) / 5) * (double)(itab_len(&c->polys, b) / 5) >
        4.0 * XFB_POLY_MAX_TERMS)
        return c->too_large++, -1;
    term *x = poly_terms(c, a, &na), *y = poly_terms(c, b, &nb);
    term *t = xf_malloc((na * nb + 1) * sizeof *t);
    uint64_t *hx = xf_malloc((na + nb + 1) * sizeof *hx), *hy = hx ? hx + na : NULL;
    int32_t id = -1;
    if (!t || !hx) nomem(c);
    if (x && y && t && hx) {
        /* Most of a product's time is its monomials' lookups in a table
         * larger than the caches: the slot of the product PREFETCH_AHEAD
         * on is loaded while this one is merged and looked up, its hash
         * the sum of its factors'. */
        for (size_t i = 0; i < na; i++) hx[i] = itab_hash(&c->monos, x[i].mono);
        for (size_t j = 0; j < nb; j++) hy[j] = itab_hash(&c->monos, y[j].mono);
        size_t k = 0, ai = nb ? 0 : na, aj = 0; /* a product by 0 looks nothing up */
        for (int d = 0; d < PREFETCH_AHEAD && ai < na; d++) {
            xf_htab_prefetch(&c->monos.index, xf_htab_key(hx[ai] + hy[aj]));
            if (++aj == nb) aj = 0, ai++;
        }
        for (size_t i = 0; i < na; i++)
            for (size_t j = 0; j < nb; j++, k++) {
                if (ai < na) {
                    xf_htab_prefetch(&c->monos.index, xf_htab_key(hx[ai] + hy[aj]));
                    if (++aj == nb) aj = 0, ai++;
                }
                t[k].mono = mono_mul_hashed(c, x[i].mono, y[j].mono, hx[i] + hy[j]);
                if (t[k].mono < 0 || rat_mul(x[i].c, y[j].c, &t[k].c) != 0) goto out;
            }
        id = poly_intern(c, t, k);
    }
out:
    xf_free(x);
    xf_free(y);
    xf_free(t);
    xf_free(hx);
    return id;
}

static int memo_reserve(xfb_canon *c, unsigned id)
{
    if (id < c->memo_cap) return 0;
    uint32_t cap = c->memo_cap ? c->memo_cap : 4096;
    while (cap <= id) cap *= 2;
    int32_t *m = xf_realloc(c->memo, (size_t)cap * sizeof *m);
    if (!m) return nomem(c);
    memset(m + c->memo_cap, 0, (size_t)(cap - c->memo_cap) * sizeof *m);
    c->memo = m, c->memo_cap = cap;
    return 0;
}

static int32_t norm(xfb_canon *c, Z3_ast a);

/* Difference a - b scaled so the first coefficient is +-1 (its sign kept). */
static int32_t cmp_poly(xfb_canon *c, Z3_ast a, Z3_ast b)
{
    int32_t p[2] = {norm(c, a), norm(c, b)};
    if (p[0] < 0 || p[1] < 0) return -1;
    rat k[2] = {{1, 1}, {-1, 1}};
    int32_t d = poly_lin(c, p, k, 2);
    if (d < 0 || itab_len(&c->polys, d) == 0) return d;
    size_t n;
    term *t = poly_terms(c, d, &n);
    if (!t) return -1;
    rat s = {t[0].c.d, t[0].c.n < 0 ? -t[0].c.n : t[0].c.n};
    xf_free(t);
    return poly_lin(c, &d, &s, 1);
}

/* Boolean atom of a comparison or connective; -1 outside the fragment. */
static int32_t norm_bool(xfb_canon *c, Z3_ast a)
{
    if (Z3_get_ast_kind(c->z, a) != Z3_APP_AST) return -1;
    Z3_app app = Z3_to_app(c->z, a);
    Z3_decl_kind k = Z3_get_decl_kind(c->z, Z3_get_app_decl(c->z, app));
    unsigned n = Z3_get_app_num_args(c->z, app);
    uint32_t w[3];
    if ((k == Z3_OP_GT || k == Z3_OP_LT || k == Z3_OP_GE || k == Z3_OP_LE) && n == 2) {
        int lt = k == Z3_OP_LT || k == Z3_OP_LE;
        int32_t p = cmp_poly(c, Z3_get_app_arg(c->z, app, lt), Z3_get_app_arg(c->z, app, !lt));
        if (p < 0) return -1;
        w[0] = k == Z3_OP_GT || k == Z3_OP_LT ? A_GT : A_GE, w[1] = (uint32_t)p;
        return atom_intern(c, w, 2, NULL);
    }
    if ((k == Z3_OP_NOT && n == 1) || ((k == Z3_OP_AND || k == Z3_OP_OR) && n == 2)) {
        w[0] = k == Z3_OP_NOT ? A_NOT : k == Z3_OP_AND ? A_AND : A_OR;
        for (unsigned i = 0; i < n; i++) {
            int32_t b = norm_bool(c, Z3_get_app_arg(c->z, app, i));
            if (b < 0) return -1;
            w[1 + i] = (uint32_t)b;
        }
        return atom_intern(c, w, 1 + n, NULL);
    }
    return -1;
}

static int32_t norm_ite(xfb_canon *c, Z3_app app)
{
    int32_t b = norm_bool(c, Z3_get_app_arg(c->z, app, 0));
    int32_t p = b < 0 ? -1 : norm(c, Z3_get_app_arg(c->z, app, 1));
    int32_t q = p < 0 ? -1 : norm(c, Z3_get_app_arg(c->z, app, 2));
    if (q < 0 || p == q) return q;
    uint32_t w[4] = {A_ITE, (uint32_t)b, (uint32_t)p, (uint32_t)q};
    int32_t at = atom_intern(c, w, 4, NULL);
    return at < 0 ? -1 : poly_atom(c, at);
}

/* m / d for monomials (sorted multisets of atoms): its id; -2 when d does
 * not divide m, -1 when out of memory. */
static int32_t mono_div(xfb_canon *c, int32_t m, int32_t d)
{
    uint32_t nm, nd;
    if (itab_len(&c->monos, d) > itab_len(&c->monos, m)) return -2;
    uint32_t *w = tail(c, &c->monos, itab_len(&c->monos, m));
    if (!w) return -1;
    const uint32_t *x = itab_get(&c->monos, m, &nm), *y = itab_get(&c->monos, d, &nd);
    uint32_t i = 0, j = 0, k = 0;
    while (i < nm && !(j < nd && y[j] < x[i])) {
        if (j < nd && x[i] == y[j]) i++, j++;
        else w[k++] = x[i++];
    }
    return j < nd ? -2
                  : keep_tail(c, &c->monos, k,
                              itab_hash(&c->monos, m) - itab_hash(&c->monos, d));
}

/* The term of sorted t[0..n) with monomial m, NULL when none. */
static term *find_term(term *t, size_t n, int32_t m)
{
    term key = {m, {0, 1}};
    return bsearch(&key, t, n, sizeof *t, term_cmp);
}

/* The inverse atom 1/q occurring in a monomial of t[0..n) other than the
 * ones in done[0..n_done), -1 when none. */
static int32_t next_inverse(xfb_canon *c, const term *t, size_t n, const int32_t *done,
                            int n_done)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t m;
        const uint32_t *mono = itab_get(&c->monos, t[i].mono, &m);
        for (uint32_t j = 0; j < m; j++) {
            uint32_t len;
            if (itab_get(&c->atoms, (int32_t)mono[j], &len)[0] != A_INV) continue;
            int seen = 0;
            for (int k = 0; k < n_done && !seen; k++) seen = done[k] == (int32_t)mono[j];
            if (!seen) return (int32_t)mono[j];
        }
    }
    return -1;
}

/* Takes every multiple k*M*q of q out of the cofactor cf[0..n) (sorted,
 * zero terms kept in place) of an inverse atom 1/q, appending k*M to
 * out[*n_out]. A multiple is taken only when each of its monomials is
 * already a term of cf, so each step zeroes one term and adds none, and the
 * loop ends. Returns -1 when out of memory (c->nomem set) or a coefficient
 * overflows. */
static int take_multiples(xfb_canon *c, term *cf, size_t n, const term *q, size_t nq, term *out,
                          size_t *n_out)
{
    term **hit = xf_malloc((nq + 1) * sizeof *hit);
    if (!hit) return nomem(c);
    int st = 0;
    for (size_t i = 0; st == 0 && i < n; i++) {
        for (size_t a = 0; st == 0 && a < nq && cf[i].c.n != 0; a++) {
            int32_t m = mono_div(c, cf[i].mono, q[a].mono), mb = 0;
            if (m == -2) continue;
            rat k;
            if (m < 0 || rat_mul(cf[i].c, (rat){q[a].c.d, q[a].c.n}, &k) != 0) st = -1;
            size_t b = 0;
            for (; st == 0 && b < nq; b++) {
                if ((mb = mono_mul(c, m, q[b].mono)) < 0) st = -1;
                else if (!(hit[b] = find_term(cf, n, mb))) break;
            }
            if (st != 0 || b < nq) continue;
            for (b = 0; st == 0 && b < nq; b++) {
                rat kq;
                if (rat_mul(k, (rat){-q[b].c.n, q[b].c.d}, &kq) != 0 ||
                    rat_add(hit[b]->c, kq, &hit[b]->c) != 0)
                    st = -1;
            }
            out[(*n_out)++] = (term){m, k};
        }
    }
    xf_free(hit);
    return st;
}

/* Uses q * (1/q) = 1, which holds as q is positive: in the terms that carry
 * 1/q, a multiple k*M*q of q becomes k*M. So a softmax summed along its
 * axis, (e0 + e1 + e2) / (e0 + e1 + e2), is 1, and a layer norm of a
 * tensor constant along its axis is 0. id itself when nothing changes;
 * -1 only when out of memory. */
static int32_t cancel_inverses(xfb_canon *c, int32_t id)
{
    size_t n;
    term *t = poly_terms(c, id, &n);
    if (!t) return -1;
    int32_t done[8], r = id;
    int n_done = 0;
    for (int32_t inv; r >= 0 && n_done < 8 && (inv = next_inverse(c, t, n, done, n_done)) >= 0;) {
        done[n_done++] = inv;
        uint32_t len;
        int32_t q = (int32_t)itab_get(&c->atoms, inv, &len)[1], unit = mono_atom(c, (uint32_t)inv);
        size_t nq, ncf = 0, nout = 0;
        term *qt = unit < 0 ? NULL : poly_terms(c, q, &nq);
        term *cf = qt ? xf_malloc((2 * n + 1) * sizeof *cf) : NULL, *out = cf ? cf + n : NULL;
        if (!cf) {
            if (qt) nomem(c);
            r = -1;
        }
        /* the slot of the quotient PREFETCH_AHEAD terms on (its hash its
         * term's less the unit's) loads while this one is divided */
        uint64_t hu = unit < 0 ? 0 : itab_hash(&c->monos, unit);
        for (size_t i = 0; r >= 0 && i < n; i++) {
            if (i + PREFETCH_AHEAD < n) {
                uint64_t h = itab_hash(&c->monos, t[i + PREFETCH_AHEAD].mono) - hu;
                xf_htab_prefetch(&c->monos.index, xf_htab_key(h));
            }
            int32_t m = mono_div(c, t[i].mono, unit);
            if (m == -1) r = -1;
            else if (m == -2) out[nout++] = t[i];
            else cf[ncf++] = (term){m, t[i].c};
        }
        size_t before = nout;
        if (r >= 0) {
            qsort(cf, ncf, sizeof *cf, term_cmp);
            if (take_multiples(c, cf, ncf, qt, nq, out, &nout) != 0) r = -1;
        }
        if (r >= 0 && nout > before) { /* something cancelled: the new polynomial */
            for (size_t i = 0; r >= 0 && i < ncf; i++)
                if (cf[i].c.n != 0 && (cf[i].mono = mono_mul(c, cf[i].mono, unit)) < 0) r = -1;
            size_t k = 0;
            for (size_t i = 0; i < ncf; i++)
                if (cf[i].c.n != 0) cf[k++] = cf[i];
            memmove(cf + k, out, nout * sizeof *out);
            if (r >= 0) r = poly_intern(c, cf, k + nout);
            xf_free(t);
            t = r >= 0 ? poly_terms(c, r, &n) : NULL;
            if (r >= 0 && !t) r = -1;
        }
        xf_free(qt);
        xf_free(cf);
    }
    xf_free(t);
    return r < 0 && !c->nomem ? id : r; /* a coefficient overflowed: id as it was */
}

/* Whether poly id is positive for every value of the inputs that satisfies
 * the registered facts: a sum of products of positive atoms with positive
 * coefficients. */
static int poly_positive(xfb_canon *c, int32_t id)
{
    uint32_t len;
    const uint32_t *w = itab_get(&c->polys, id, &len);
    if (len == 0) return 0;
    for (uint32_t i = 0; i < len; i += 5) {
        term t = term_at(w + i);
        uint32_t m;
        const uint32_t *mono = itab_get(&c->monos, t.mono, &m);
        if (t.c.n <= 0) return 0;
        for (uint32_t j = 0; j < m; j++)
            if (!c->atom_pos[mono[j]]) return 0;
    }
    return 1;
}

/* p / q with q positive: 0 when p is, 1 when p is q, else p times the atom
 * 1/q (itself positive), so quotients by one divisor (a layer norm's
 * deviation, a softmax's sum) add up and cancel like any monomial. */
static int32_t div_positive(xfb_canon *c, int32_t p, int32_t q)
{
    if (itab_len(&c->polys, p) == 0) return p;
    if (p == q) return poly_const(c, (rat){1, 1});
    uint32_t w[2] = {A_INV, (uint32_t)q};
    int32_t at = atom_intern(c, w, 2, NULL);
    if (at < 0) return -1;
    c->atom_pos[at] = 1;
    int32_t inv = poly_atom(c, at);
    int32_t r = inv < 0 ? -1 : poly_mul(c, p, inv);
    return r < 0 ? r : cancel_inverses(c, r);
}

/* Arguments p[0..n) normalised, combined by operator k (declaration f). */
static int32_t combine(xfb_canon *c, Z3_ast a, Z3_func_decl f, Z3_decl_kind k, const int32_t *p,
                       unsigned n)
{
    switch (k) {
    case Z3_OP_ADD: case Z3_OP_SUB: case Z3_OP_UMINUS: {
        rat *kk = xf_malloc((size_t)(n + 1) * sizeof *kk);
        if (!kk) return nomem(c);
        for (unsigned i = 0; i < n; i++)
            kk[i] = (rat){k == Z3_OP_UMINUS || (k == Z3_OP_SUB && i > 0) ? -1 : 1, 1};
        int32_t r = poly_lin(c, p, kk, n);
        xf_free(kk);
        return r < 0 ? r : cancel_inverses(c, r);
    }
    case Z3_OP_MUL: {
        int32_t r = n ? p[0] : -1;
        for (unsigned i = 1; r >= 0 && i < n; i++) r = poly_mul(c, r, p[i]);
        return r < 0 || n < 2 ? r : cancel_inverses(c, r);
    }
    case Z3_OP_DIV: case Z3_OP_UNINTERPRETED: {
        if ((k == Z3_OP_DIV && n != 2) || n > 6) return -1;
        if (k == Z3_OP_DIV && poly_positive(c, p[1])) return div_positive(c, p[0], p[1]);
        uint32_t w[8];
        w[0] = k == Z3_OP_DIV ? A_DIV : n == 0 ? A_VAR : A_APP;
        w[1] = Z3_get_ast_id(c->z, Z3_func_decl_to_ast(c->z, f));
        for (unsigned i = 0; i < n; i++) w[2 + i] = (uint32_t)p[i];
        int32_t at = atom_intern(c, w, 2 + n, n == 0 ? a : Z3_func_decl_to_ast(c->z, f));
        return at < 0 ? -1 : poly_atom(c, at);
    }
    default: return -1;
    }
}

static int32_t norm_app(xfb_canon *c, Z3_ast a)
{
    Z3_app app = Z3_to_app(c->z, a);
    Z3_func_decl f = Z3_get_app_decl(c->z, app);
    Z3_decl_kind k = Z3_get_decl_kind(c->z, f);
    unsigned n = Z3_get_app_num_args(c->z, app);
    if (k == Z3_OP_ITE) return norm_ite(c, app);
    int32_t *p = xf_malloc((size_t)(n + 1) * sizeof *p), r = p ? 0 : nomem(c);
    for (unsigned i = 0; r >= 0 && i < n; i++) r = p[i] = norm(c, Z3_get_app_arg(c->z, app, i));
    if (r >= 0) r = combine(c, a, f, k, p, n);
    xf_free(p);
    return r;
}

/* Poly id of real term a; -1 outside the fragment. */
static int32_t norm(xfb_canon *c, Z3_ast a)
{
    if (c->nomem) return -1;
    unsigned id = Z3_get_ast_id(c->z, a);
    if (memo_reserve(c, id) != 0) return -1;
    if (c->memo[id]) return c->memo[id] < 0 ? -1 : c->memo[id] - 1;
    int32_t r = -1;
    Z3_ast_kind kind = Z3_get_ast_kind(c->z, a);
    if (kind == Z3_NUMERAL_AST) {
        int64_t n, d;
        rat q;
        if (Z3_get_numeral_small(c->z, a, &n, &d) && rat_make(n, d, &q) == 0) r = poly_const(c, q);
    } else if (kind == Z3_APP_AST) {
        r = norm_app(c, a);
    }
    c->memo[id] = r < 0 ? -1 : r + 1;
    return r;
}

/* ------------------------------------------------------------- rebuild */

static Z3_ast build_poly(xfb_canon *c, int32_t id);

static Z3_ast build_atom(xfb_canon *c, uint32_t id)
{
    uint32_t n;
    const uint32_t *w = itab_get(&c->atoms, (int32_t)id, &n);
    Z3_context z = c->z;
    Z3_ast zero = Z3_mk_real(z, 0, 1), args[8];
    switch (w[0]) {
    case A_VAR: return c->atom_ast[id];
    case A_GT: return Z3_mk_gt(z, build_poly(c, (int32_t)w[1]), zero);
    case A_GE: return Z3_mk_ge(z, build_poly(c, (int32_t)w[1]), zero);
    case A_NOT: return Z3_mk_not(z, build_atom(c, w[1]));
    case A_AND: case A_OR:
        args[0] = build_atom(c, w[1]), args[1] = build_atom(c, w[2]);
        return w[0] == A_AND ? Z3_mk_and(z, 2, args) : Z3_mk_or(z, 2, args);
    case A_ITE:
        return Z3_mk_ite(z, build_atom(c, w[1]), build_poly(c, (int32_t)w[2]),
                         build_poly(c, (int32_t)w[3]));
    case A_DIV: return Z3_mk_div(z, build_poly(c, (int32_t)w[2]), build_poly(c, (int32_t)w[3]));
    case A_INV: return Z3_mk_div(z, Z3_mk_real(z, 1, 1), build_poly(c, (int32_t)w[1]));
    default: /* A_APP */
        for (uint32_t i = 2; i < n; i++) args[i - 2] = build_poly(c, (int32_t)w[i]);
        return Z3_mk_app(z, Z3_to_func_decl(z, c->atom_ast[id]), n - 2, args);
    }
}

static Z3_ast build_poly(xfb_canon *c, int32_t id)
{
    if (c->poly_ast[id]) return c->poly_ast[id];
    uint32_t len;
    const uint32_t *w = itab_get(&c->polys, id, &len);
    size_t n = len / 5;
    Z3_ast *s = xf_malloc((n + 1) * sizeof *s), r = NULL;
    if (!s) {
        /* Not NULL, which build_atom would hand to Z3; vf_bounded_canon_build
         * reports the failure and the term is never used. */
        nomem(c);
        return Z3_mk_real(c->z, 0, 1);
    }
    for (size_t i = 0; i < n; i++) {
        term t = term_at(w + 5 * i);
        uint32_t m;
        const uint32_t *mono = itab_get(&c->monos, t.mono, &m);
        Z3_ast f[64];
        unsigned k = 0;
        if (m >= 63) goto out;
        if (t.c.n != 1 || t.c.d != 1 || m == 0) {
            char q[48];
            snprintf(q, sizeof q, "%lld/%lld", (long long)t.c.n, (long long)t.c.d);
            f[k++] = Z3_mk_numeral(c->z, q, c->real);
        }
        for (uint32_t j = 0; j < m; j++)
            if (!(f[k++] = build_atom(c, mono[j]))) goto out;
        s[i] = k == 1 ? f[0] : Z3_mk_mul(c->z, k, f);
    }
    r = n == 0 ? Z3_mk_real(c->z, 0, 1) : n == 1 ? s[0] : Z3_mk_add(c->z, (unsigned)n, s);
out:
    xf_free(s);
    return c->poly_ast[id] = r;
}

int64_t vf_bounded_canon_too_large(const xfb_canon *c)
{
    return c->too_large;
}

int vf_bounded_canon_size(const xfb_canon *c, int32_t id)
{
    return (int)(itab_len(&c->polys, id) / 5);
}

xf_status vf_bounded_canon_fact(xfb_canon *c, Z3_ast fact, xf_error *err)
{
    Z3_context z = c->z;
    if (Z3_get_ast_kind(z, fact) != Z3_APP_AST) return XF_OK;
    Z3_app app = Z3_to_app(z, fact);
    int64_t num, den;
    if (Z3_get_decl_kind(z, Z3_get_app_decl(z, app)) != Z3_OP_GT ||
        Z3_get_app_num_args(z, app) != 2 ||
        !Z3_get_numeral_small(z, Z3_get_app_arg(z, app, 1), &num, &den) || num != 0)
        return XF_OK;
    int32_t id = norm(c, Z3_get_app_arg(z, app, 0));
    if (c->nomem)
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory normalising a fact");
    uint32_t len;
    const uint32_t *w = id < 0 ? NULL : itab_get(&c->polys, id, &len);
    term t = w && len == 5 ? term_at(w) : (term){-1, {0, 1}};
    if (t.c.n != 1 || t.c.d != 1) return XF_OK; /* one term with coefficient 1 */
    uint32_t m;
    const uint32_t *mono = itab_get(&c->monos, t.mono, &m);
    if (m == 1) c->atom_pos[mono[0]] = 1; /* t is one atom: the atom is positive */
    return XF_OK;
}

xf_status vf_bounded_canon_id(xfb_canon *c, Z3_ast t, int32_t *id, xf_error *err)
{
    *id = norm(c, t);
    if (!c->nomem) return XF_OK;
    *id = -1;
    return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory normalising an output element");
}

xf_status vf_bounded_canon_build(xfb_canon *c, int32_t id, Z3_ast *out, xf_error *err)
{
    *out = build_poly(c, id);
    if (!c->nomem) return XF_OK;
    *out = NULL;
    return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory rebuilding an output element");
}
