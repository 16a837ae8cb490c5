/*
 * xfergen_coverage.c — matches TASO's rules against an xfergen database.
 *
 * Method. Both TASO's readable rules and ours are written in one small
 * expression language whose labels ignore what the two systems store
 * differently: operator names are mapped (TASO's conv2d[kernel_h=3,
 * kernel_w=3,activation=2] is conv{3x3,relu}, matmul[activation=0] is
 * matmul, const_identity_conv is iconv, const_pool_ones is cpool, ...),
 * concat/split axes become negative (relative to the last dim), a
 * transpose is its permutation, and a graph input is only its rank. A rule
 * is the text of its source outputs and target outputs with inputs numbered
 * in order of first use; the key is the smallest such text over both
 * orientations and all output orders, so renaming, swapped sides and
 * reordered outputs do not matter. A TASO rule is covered when its key is
 * the key of some rule in the database (any status).
 *
 * TASO's avgpool_sum summed instead of averaging and its const_pool_ones
 * was all ones; they are mapped to our avgpool and const_pool (both scaled
 * by 1/(kh*kw)), which keeps every rule that uses them consistently true.
 * Shapes are not compared (TASO's leaves are 2x4 / 4x4 / 2x4x5x5 tensors),
 * only ranks and operator parameters. A missing rule that reads more
 * distinct inputs of some rank than the run's input set has cannot be
 * enumerated by that run and is counted apart; the others are listed (up to
 * a limit): typically rules whose sides contain a subgraph that is not its
 * class's representative (not built by design: they follow from smaller
 * rules), or kernels with no weight input of that shape.
 */
#include "xfergen_coverage.h"

#include "rulesdb/rulesdb.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = xf_realloc(b->p, cap);
        if (!p) abort(); /* a benchmark out of memory has nothing left to report */
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

static void sb_leaf(sbuf *b, const char *name, int rank)
{
    char t[128];
    snprintf(t, sizeof t, "$%s:%d$", name, rank);
    sb_str(b, t);
}

/* ---------------------------------------------------------- TASO text */

typedef struct tparse {
    const char *p;
    int bad;
} tparse;

static int taso_leaf_rank(const char *name)
{
    if (name[0] == 's') return 0;
    if (name[0] == 'x') return 2;
    if (name[0] == 'i') return 4;
    if (name[0] == 'w') return atoi(name + 1) <= 3 ? 2 : 4;
    return -1;
}

static long param(const char *params, const char *key, long dflt)
{
    const char *q = strstr(params, key);
    if (!q || q[strlen(key)] != '=') return dflt;
    return strtol(q + strlen(key) + 1, NULL, 10);
}

/* Parses one TASO expression, appends its text; returns its rank. */
static int taso_expr(tparse *tp, sbuf *out)
{
    char name[64], params[256] = "";
    int n = 0;
    while (isalnum((unsigned char)*tp->p) || *tp->p == '_' || *tp->p == '.') {
        if (n < 63) name[n++] = *tp->p;
        tp->p++;
    }
    name[n] = '\0';
    if (n == 0) {
        tp->bad = 1;
        return -1;
    }
    if (*tp->p == '[') {
        const char *e = strchr(tp->p, ']');
        if (!e) {
            tp->bad = 1;
            return -1;
        }
        size_t l = (size_t)(e - tp->p - 1);
        if (l >= sizeof params) l = sizeof params - 1;
        memcpy(params, tp->p + 1, l);
        params[l] = '\0';
        tp->p = e + 1;
    }
    if (*tp->p != '(') {
        int r = taso_leaf_rank(name);
        if (r < 0) tp->bad = 1;
        sb_leaf(out, name, r);
        return r;
    }
    tp->p++;
    sbuf args = {0};
    int rank0 = -1, na = 0;
    while (*tp->p && *tp->p != ')') {
        if (na) sb_str(&args, ",");
        int r = taso_expr(tp, &args);
        if (na == 0) rank0 = r;
        na++;
        if (tp->bad) break;
        while (*tp->p == ',' || *tp->p == ' ') tp->p++;
    }
    if (*tp->p == ')') tp->p++;
    else tp->bad = 1;
    char label[128];
    int rank = rank0;
    long kh = param(params, "kernel_h", 0), kw = param(params, "kernel_w", 0);
    if (strcmp(name, "matmul") == 0) {
        snprintf(label, sizeof label, param(params, "activation", 0) ? "matmul{relu}" : "matmul");
    } else if (strcmp(name, "conv2d") == 0) {
        snprintf(label, sizeof label, "conv{%ldx%ld,%s}", kh, kw,
                 param(params, "activation", 0) == 2 ? "relu" : "none");
        rank = 4;
    } else if (strcmp(name, "avgpool_sum") == 0 || strcmp(name, "maxpool") == 0) {
        snprintf(label, sizeof label, "%s{%ldx%ld}", name[0] == 'a' ? "avgpool" : "maxpool", kh, kw);
    } else if (strcmp(name, "concat") == 0) {
        snprintf(label, sizeof label, "concat{%ld}", param(params, "axis", 0) - rank0);
    } else if (strncmp(name, "split.", 6) == 0) {
        snprintf(label, sizeof label, "split{%ld}#%s", param(params, "axis", 0) - rank0, name + 6);
    } else if (strcmp(name, "transpose") == 0) {
        snprintf(label, sizeof label, "transpose{1,0}"); /* TASO's only permutation */
    } else if (strcmp(name, "enlarge") == 0) {
        snprintf(label, sizeof label, "enlarge{%ldx%ld}", kh, kw);
        rank = 4;
    } else if (strcmp(name, "const_identity_conv") == 0) {
        snprintf(label, sizeof label, "iconv{%ldx%ld}", kh, kw);
        rank = 4;
    } else if (strcmp(name, "const_pool_ones") == 0) {
        snprintf(label, sizeof label, "cpool{%ldx%ld}", kh, kw);
        rank = 4;
    } else if (strcmp(name, "const_identity_matmul") == 0) {
        snprintf(label, sizeof label, "imatrix");
        rank = 2;
    } else if (strcmp(name, "const_ones") == 0) {
        snprintf(label, sizeof label, "ones");
        rank = 4;
    } else if (strcmp(name, "ewadd") == 0 || strcmp(name, "ewmul") == 0 ||
               strcmp(name, "relu") == 0 || strcmp(name, "scalar_mul") == 0) {
        snprintf(label, sizeof label, "%s", name);
    } else {
        snprintf(label, sizeof label, "?%s", name);
    }
    sb_str(out, label);
    sb_str(out, "(");
    if (args.p) sb_str(out, args.p);
    sb_str(out, ")");
    xf_free(args.p);
    return rank;
}

/* ------------------------------------------------------------ our graphs */

static void our_value(const xf_graph *g, int v, sbuf *out)
{
    const xf_value *val = &g->values[v];
    if (val->kind != XF_VALUE_NODE) {
        sb_leaf(out, val->name ? val->name : "?", val->shape.rank);
        return;
    }
    const xf_node *nd = &g->nodes[val->producer];
    const xf_params *p = &nd->params;
    int r0 = nd->n_inputs > 0 && nd->inputs[0] >= 0 ? g->values[nd->inputs[0]].shape.rank : 0;
    char label[128];
    switch (nd->op) {
    case XF_OP_CONV:
        snprintf(label, sizeof label, "conv{%dx%d,%s}", p->kernel[0], p->kernel[1],
                 p->activation == XF_ACT_RELU ? "relu" : "none");
        break;
    case XF_OP_AVGPOOL:
    case XF_OP_MAXPOOL:
        snprintf(label, sizeof label, "%s{%dx%d}", nd->op == XF_OP_AVGPOOL ? "avgpool" : "maxpool",
                 p->kernel[0], p->kernel[1]);
        break;
    case XF_OP_CONCAT:
        snprintf(label, sizeof label, "concat{%d}", p->axis >= 0 ? p->axis - r0 : p->axis);
        break;
    case XF_OP_SPLIT:
        snprintf(label, sizeof label, "split{%d}#%d", p->axis >= 0 ? p->axis - r0 : p->axis,
                 val->producer_output);
        break;
    case XF_OP_TRANSPOSE: {
        int len = snprintf(label, sizeof label, "transpose{");
        for (int i = 0; i < p->n_axes && len < 100; i++)
            len += snprintf(label + len, sizeof label - (size_t)len, "%s%lld", i ? "," : "",
                            (long long)(p->axes[i] < 0 ? p->axes[i] + r0 : p->axes[i]));
        snprintf(label + len, sizeof label - (size_t)len, "}");
        break;
    }
    case XF_OP_ENLARGE: snprintf(label, sizeof label, "enlarge{%dx%d}", p->kernel[0], p->kernel[1]); break;
    case XF_OP_CONST_IDENTITY_CONV:
    case XF_OP_CONST_POOL:
        snprintf(label, sizeof label, "%s{%lldx%lld}",
                 nd->op == XF_OP_CONST_POOL ? "cpool" : "iconv", (long long)val->shape.dims[2],
                 (long long)val->shape.dims[3]);
        break;
    case XF_OP_CONST_IDENTITY_MATRIX: snprintf(label, sizeof label, "imatrix"); break;
    case XF_OP_CONST_ONES: snprintf(label, sizeof label, "ones"); break;
    case XF_OP_ADD: snprintf(label, sizeof label, "ewadd"); break;
    case XF_OP_MUL: snprintf(label, sizeof label, "ewmul"); break;
    default: snprintf(label, sizeof label, "%s", xf_op_get(nd->op)->name); break;
    }
    sb_str(out, label);
    sb_str(out, "(");
    for (int i = 0; i < nd->n_inputs; i++) {
        if (i) sb_str(out, ",");
        if (nd->inputs[i] >= 0) our_value(g, nd->inputs[i], out);
    }
    sb_str(out, ")");
}

/* ------------------------------------------------------------ rule keys */

/* Text with leaves renumbered by first use ($name:r$ -> $k:r$). */
static char *renumber(const char *s)
{
    sbuf out = {0};
    char names[64][64];
    int n = 0;
    while (*s) {
        if (*s != '$') {
            sb_put(&out, s++, 1);
            continue;
        }
        const char *colon = strchr(s + 1, ':'), *end = colon ? strchr(colon, '$') : NULL;
        if (!end) break;
        char name[64];
        size_t l = (size_t)(colon - s - 1) < 63 ? (size_t)(colon - s - 1) : 63;
        memcpy(name, s + 1, l);
        name[l] = '\0';
        int k;
        for (k = 0; k < n; k++)
            if (strcmp(names[k], name) == 0) break;
        if (k == n && n < 64) memcpy(names[n++], name, l + 1);
        char t[96];
        snprintf(t, sizeof t, "$%d%.*s", k, (int)(end - colon + 1), colon);
        sb_str(&out, t);
        s = end + 1;
    }
    if (!out.p) sb_str(&out, "");
    return out.p;
}

typedef struct key_search {
    char **src, **dst;
    int k;
    char *best;
} key_search;

/* Renumbered text under order o; keeps the smaller one. */
static int try_order(void *ctx, const xf_rule_order *o)
{
    key_search *ks = ctx;
    sbuf raw = {0};
    for (int i = 0; i < ks->k; i++) {
        sb_str(&raw, i ? ";" : "");
        sb_str(&raw, (o->swap ? ks->dst : ks->src)[o->out[i]]);
    }
    sb_str(&raw, "=>");
    for (int i = 0; i < ks->k; i++) {
        sb_str(&raw, i ? ";" : "");
        sb_str(&raw, (o->swap ? ks->src : ks->dst)[o->out[i]]);
    }
    char *cand = renumber(raw.p);
    xf_free(raw.p);
    if (!ks->best || strcmp(cand, ks->best) < 0) {
        xf_free(ks->best);
        ks->best = cand;
    } else {
        xf_free(cand);
    }
    return 0;
}

/* Smallest renumbered text over orientations and output orders (k <= 4):
 * the renaming search of ir/rule_orders.c, inputs numbered by first use. */
static char *rule_key(char **src, char **dst, int k)
{
    if (k > 4) return NULL;
    key_search ks = {src, dst, k, NULL};
    xf_rule_orders orders = {0, k, NULL, 0, 4, 1, try_order, &ks};
    xf_error err = {0};
    if (xf_rule_orders_each(&orders, &err) != XF_OK) abort(); /* out of memory, as sb_put */
    return ks.best;
}

/* Distinct inputs per rank (0..6) in a renumbered key ($k:r$). */
static void leaves_per_rank(const char *key, int *per_rank)
{
    int seen[64] = {0};
    for (int r = 0; r <= XF_MAX_DIMS; r++) per_rank[r] = 0;
    for (const char *q = strchr(key, '$'); q; q = strchr(q + 1, '$')) {
        int k, r;
        if (sscanf(q, "$%d:%d$", &k, &r) == 2 && k >= 0 && k < 64 && r >= 0 && r <= XF_MAX_DIMS &&
            !seen[k]) {
            seen[k] = 1;
            per_rank[r]++;
        }
        q = strchr(q + 1, '$'); /* skip the closing '$' */
        if (!q) break;
    }
}

/* Inputs per rank of the most recent run ("x0:2x4x4x4,s0:scalar,..."). */
static xf_status run_inputs_per_rank(xf_rulesdb *db, int *per_rank, xf_error *err)
{
    for (int r = 0; r <= XF_MAX_DIMS; r++) per_rank[r] = 0;
    int64_t id;
    int n = 0;
    xf_status st = xf_rulesdb_run_recent(db, &id, 1, &n, err);
    if (st != XF_OK || n == 0) return st;
    xf_rulesdb_run_info info;
    xf_rulesdb_run_info_init(&info);
    st = xf_rulesdb_run_get(db, id, &info, err);
    for (const char *q = info.input_set; st == XF_OK && q && *q;) {
        const char *colon = strchr(q, ':');
        if (!colon) break;
        const char *end = strchr(colon, ',');
        size_t len = end ? (size_t)(end - colon - 1) : strlen(colon + 1);
        int rank = 0;
        if (!(len == 6 && strncmp(colon + 1, "scalar", 6) == 0)) {
            rank = 1;
            for (size_t i = 0; i < len; i++) rank += colon[1 + i] == 'x';
        }
        if (rank <= XF_MAX_DIMS) per_rank[rank]++;
        q = end ? end + 1 : NULL;
    }
    xf_rulesdb_run_info_free(&info);
    return st;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct keyset {
    char **v;
    size_t n, cap;
} keyset;

static void ks_add(keyset *s, char *k)
{
    if (!k) return;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->v = xf_realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) abort();
    }
    s->v[s->n++] = k;
}

static int ks_has(const keyset *s, const char *k)
{
    return k && s->n && bsearch(&k, s->v, s->n, sizeof *s->v, cmp_str) != NULL;
}

static void ks_free(keyset *s)
{
    for (size_t i = 0; i < s->n; i++) xf_free(s->v[i]);
    xf_free(s->v);
}

/* Keys of every rule in the database; `kept` only those still candidates. */
static xf_status our_keys(const char *path, keyset *all, keyset *kept, int *inputs_per_rank,
                          xf_error *err)
{
    xf_rulesdb *db;
    xf_status st = xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, err);
    if (st != XF_OK) return st;
    st = run_inputs_per_rank(db, inputs_per_rank, err);
    if (st != XF_OK) {
        xf_rulesdb_close(db);
        return st;
    }
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = 1;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    st = xf_rulesdb_iter_begin(db, &f, &it, err);
    while (st == XF_OK) {
        int has = 0;
        st = xf_rulesdb_iter_next(it, &info, &has, err);
        if (st != XF_OK || !has) break;
        xf_rule r;
        st = xf_rulesdb_load_rule(db, info.id, &r, err);
        if (st != XF_OK) break;
        int k = r.src.n_outputs;
        char *src[4] = {0}, *dst[4] = {0};
        for (int i = 0; i < k && i < 4; i++) {
            sbuf a = {0}, b = {0};
            our_value(&r.src, r.src.outputs[i], &a);
            our_value(&r.dst, r.dst.outputs[i], &b);
            src[i] = a.p;
            dst[i] = b.p;
        }
        char *key = rule_key(src, dst, k);
        for (int i = 0; i < 4; i++) {
            xf_free(src[i]);
            xf_free(dst[i]);
        }
        if (key && info.status == XF_RULE_CANDIDATE) ks_add(kept, xf_strdup(key));
        ks_add(all, key);
        xf_rule_free(&r);
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    xf_rulesdb_close(db);
    if (all->n) qsort(all->v, all->n, sizeof *all->v, cmp_str);
    if (kept->n) qsort(kept->v, kept->n, sizeof *kept->v, cmp_str);
    return st;
}

xf_status xfb_coverage(const char *db, const char *taso_txt, const char *label, int show_missing,
                       FILE *out, xf_error *err)
{
    FILE *f = fopen(taso_txt, "r");
    if (!f) return XF_FAIL(err, XF_ERR_IO, "cannot read %s", taso_txt);
    keyset all = {0}, kept = {0};
    int have[XF_MAX_DIMS + 1];
    xf_status st = our_keys(db, &all, &kept, have, err);
    if (st != XF_OK) {
        fclose(f);
        return st;
    }
    char line[8192];
    int total = 0, found = 0, found_kept = 0, odd = 0, shown = 0, too_many_inputs = 0;
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        line[strcspn(line, "\n")] = '\0';
        total++;
        char *src[4] = {0}, *dst[4] = {0};
        int k = 0, bad = 0;
        for (char *part = tab + 1; part && !bad;) {
            char *next = strstr(part, " ; ");
            if (next) *next = '\0';
            char *arrow = strstr(part, " => ");
            if (!arrow || k == 4) {
                bad = 1;
                break;
            }
            *arrow = '\0';
            sbuf a = {0}, b = {0};
            tparse pa = {part, 0}, pb = {arrow + 4, 0};
            taso_expr(&pa, &a);
            taso_expr(&pb, &b);
            src[k] = a.p;
            dst[k] = b.p;
            k++;
            bad = pa.bad || pb.bad || strchr(a.p, '?') || strchr(b.p, '?');
            *arrow = ' ';
            part = next ? next + 3 : NULL;
            if (next) *next = ' ';
        }
        char *key = bad ? NULL : rule_key(src, dst, k);
        if (bad) odd++;
        else if (ks_has(&all, key)) {
            found++;
            found_kept += ks_has(&kept, key);
        } else {
            int need[XF_MAX_DIMS + 1], short_of = 0;
            leaves_per_rank(key, need);
            for (int r = 0; r <= XF_MAX_DIMS; r++) short_of |= need[r] > have[r];
            too_many_inputs += short_of;
            if (!short_of && shown < show_missing) {
                fprintf(out, "  missing: %s\n", line);
                shown++;
            }
        }
        for (int i = 0; i < 4; i++) {
            xf_free(src[i]);
            xf_free(dst[i]);
        }
        xf_free(key);
    }
    fclose(f);
    fprintf(out,
            "%s: %d TASO rules, %d with an equivalent in %s (%d of them kept as candidates), "
            "%d not expressible; of the %d missing, %d read more inputs of some rank than the "
            "run had\n",
            label, total, found, db, found_kept, odd, total - found - odd, too_many_inputs);
    ks_free(&all);
    ks_free(&kept);
    return XF_OK;
}
