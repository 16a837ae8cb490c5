/*
 * cands.c — an xfergen run's candidate list, kept as serialized records
 * in one buffer that is at the same time the run's checkpoint blob (layout
 * in pipeline_internal.h). Stored in the run's row of the rules database
 * (xf_rulesdb_run_checkpoint), it lets an interrupted run resume with
 * exactly the candidates it had confirmed; kept in memory this way, a
 * million candidates take about a hundred megabytes instead of gigabytes.
 */
#include "pipeline_internal.h"

#include "rulesdb/rulesdb.h"

#include <stdlib.h>
#include <string.h>

#define BLOB_VERSION 1u
#define HEADER 24

void en_cand_list_free(cand_list *c)
{
    xf_free(c->buf);
    xf_free(c->off);
    memset(c, 0, sizeof *c);
}

void en_cand_list_clear(cand_list *c)
{
    c->len = 0;
    c->n = 0;
}

static int reserve(cand_list *c, size_t n)
{
    if (c->len + n <= c->cap) return 1;
    size_t cap = c->cap ? c->cap : 1 << 16;
    while (cap < c->len + n) cap *= 2;
    uint8_t *p = xf_realloc(c->buf, cap);
    if (!p) return 0;
    c->buf = p;
    c->cap = cap;
    return 1;
}

static void put(cand_list *c, const void *data, size_t n)
{
    if (n) memcpy(c->buf + c->len, data, n);
    c->len += n;
}

static void put_le(cand_list *c, uint64_t v, int bytes)
{
    uint8_t x[8];
    for (int i = 0; i < bytes; i++) x[i] = (uint8_t)(v >> (8 * i));
    put(c, x, (size_t)bytes);
}

static void write_header(cand_list *c)
{
    size_t len = c->len;
    uint64_t secs;
    memcpy(&secs, &c->enum_seconds, 8);
    c->len = 0;
    put(c, "XFGC", 4);
    put_le(c, BLOB_VERSION, 4);
    put_le(c, c->n, 8);
    put_le(c, secs, 8);
    c->len = len;
}

/* Makes room for a record of `need` bytes and starts it (its offset
 * noted); 0 when out of memory. */
static int start_record(cand_list *c, size_t need)
{
    if (c->n == c->cap_off) {
        size_t cap = c->cap_off ? c->cap_off * 2 : 4096;
        size_t *o = xf_realloc(c->off, cap * sizeof *o);
        if (!o) return 0;
        c->off = o;
        c->cap_off = cap;
    }
    if (!reserve(c, need + (c->len == 0 ? HEADER : 0))) return 0;
    if (c->len == 0) c->len = HEADER;
    c->off[c->n++] = c->len;
    return 1;
}

xf_status en_cand_list_push(cand_list *c, const xf_rule *r, xf_error *err)
{
    uint8_t *g[2] = {NULL, NULL};
    size_t gl[2] = {0, 0};
    xf_status st = XF_OK;
    for (int side = 0; side < 2 && st == XF_OK; side++)
        st = xf_rulesdb_graph_serialize(side ? &r->dst : &r->src, &g[side], &gl[side], err);
    if (st != XF_OK) {
        xf_error_prefix(err, "keeping candidate %zu", c->n);
        goto out;
    }
    size_t need = 8 + 4 + 8 + gl[0] + gl[1];
    for (int k = 0; k < r->src.n_inputs; k++) {
        const char *nm = r->src.values[r->src.inputs[k]].name;
        need += 2 + (nm ? strlen(nm) : 0);
    }
    if (!start_record(c, need)) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory keeping %zu candidates", c->n);
        goto out;
    }
    put_le(c, r->fingerprint, 8);
    put_le(c, (uint64_t)r->src.n_inputs, 4);
    for (int k = 0; k < r->src.n_inputs; k++) {
        const char *nm = r->src.values[r->src.inputs[k]].name;
        size_t nl = nm ? strlen(nm) : 0;
        put_le(c, nl, 2);
        put(c, nm, nl);
    }
    for (int side = 0; side < 2; side++) {
        put_le(c, gl[side], 4);
        put(c, g[side], gl[side]);
    }
out:
    xf_free(g[0]);
    xf_free(g[1]);
    return st;
}

const uint8_t *en_cand_list_record(const cand_list *c, size_t i, size_t *len)
{
    size_t end = i + 1 < c->n ? c->off[i + 1] : c->len;
    *len = end - c->off[i];
    return c->buf + c->off[i];
}

xf_status en_cand_list_push_record(cand_list *c, const uint8_t *rec, size_t len, xf_error *err)
{
    if (!start_record(c, len))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory keeping %zu candidates", c->n);
    put(c, rec, len);
    return XF_OK;
}

typedef struct rd {
    const uint8_t *p;
    size_t n, at;
    int bad;
} rd;

static const uint8_t *take(rd *r, size_t n)
{
    if (r->bad || r->n - r->at < n) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *p = r->p + r->at;
    r->at += n;
    return p;
}

static uint64_t get_le(rd *r, int bytes)
{
    const uint8_t *p = take(r, (size_t)bytes);
    uint64_t v = 0;
    for (int i = 0; p && i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Skips one record; 0 when it does not fit. */
static int skip_record(rd *r)
{
    get_le(r, 8);
    uint32_t n_in = (uint32_t)get_le(r, 4);
    for (uint32_t k = 0; k < n_in && !r->bad; k++) take(r, (size_t)get_le(r, 2));
    for (int side = 0; side < 2 && !r->bad; side++) take(r, (size_t)get_le(r, 4));
    return !r->bad;
}

/* Candidate i's record, read: the input names (NULL-terminated, with their
 * bytes in the same allocation: xf_free(names)) and both graphs' bytes. */
typedef struct record {
    uint64_t fp;
    char **names;
    const uint8_t *g[2];
    size_t gl[2];
} record;

static xf_status read_record(const cand_list *c, size_t i, record *rec, xf_error *err)
{
    memset(rec, 0, sizeof *rec);
    rd r = {c->buf, c->len, c->off[i], 0};
    rec->fp = get_le(&r, 8);
    uint32_t n_in = (uint32_t)get_le(&r, 4);
    size_t names_at = r.at, bytes = 0;
    for (uint32_t k = 0; k < n_in && !r.bad; k++) {
        size_t nl = (size_t)get_le(&r, 2);
        take(&r, nl);
        bytes += nl + 1;
    }
    for (int side = 0; side < 2 && !r.bad; side++) {
        rec->gl[side] = (size_t)get_le(&r, 4);
        rec->g[side] = take(&r, rec->gl[side]);
    }
    if (r.bad) return XF_FAIL(err, XF_ERR_PARSE, "candidate %zu: record is truncated", i);
    rec->names = xf_malloc(((size_t)n_in + 1) * sizeof *rec->names + bytes);
    if (!rec->names) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory rebuilding candidate %zu", i);
    char *p = (char *)(rec->names + n_in + 1);
    r.at = names_at;
    for (uint32_t k = 0; k < n_in; k++) {
        size_t nl = (size_t)get_le(&r, 2);
        const uint8_t *s = take(&r, nl);
        if (nl) memcpy(p, s, nl);
        p[nl] = '\0';
        rec->names[k] = p;
        p += nl + 1;
    }
    rec->names[n_in] = NULL;
    return XF_OK;
}

xf_status en_cand_list_get(const cand_list *c, size_t i, xf_rule *out, xf_error *err)
{
    xf_rule_init(out);
    record rec;
    xf_status st = read_record(c, i, &rec, err);
    for (int side = 0; side < 2 && st == XF_OK; side++) {
        st = xf_rulesdb_graph_deserialize(rec.g[side], rec.gl[side],
                                          (const char *const *)rec.names,
                                          side ? &out->dst : &out->src, err);
        if (st != XF_OK) xf_error_prefix(err, "candidate %zu", i);
    }
    xf_free(rec.names);
    out->fingerprint = rec.fp;
    if (st != XF_OK) xf_rule_free(out);
    return st;
}

xf_status en_cand_list_feed(const cand_list *c, size_t i, const xf_graph_sink *src,
                            const xf_graph_sink *dst, xf_error *err)
{
    record rec;
    xf_status st = read_record(c, i, &rec, err);
    for (int side = 0; side < 2 && st == XF_OK; side++) {
        st = xf_rulesdb_graph_decode(rec.g[side], rec.gl[side], (const char *const *)rec.names,
                                     side ? dst : src, err);
        if (st != XF_OK) xf_error_prefix(err, "candidate %zu", i);
    }
    xf_free(rec.names);
    return st;
}

const uint8_t *en_cand_list_blob(cand_list *c, size_t *len)
{
    if (c->len < HEADER) { /* no candidate yet: an empty list still has a header */
        if (!reserve(c, HEADER)) {
            *len = 0;
            return NULL;
        }
        c->len = HEADER;
    }
    write_header(c);
    *len = c->len;
    return c->buf;
}

xf_status en_cand_list_blob_read(const uint8_t *blob, size_t len, cand_list *c, xf_error *err)
{
    en_cand_list_free(c);
    rd r = {blob, len, 0, 0};
    const uint8_t *magic = take(&r, 4);
    if (!magic || memcmp(magic, "XFGC", 4) != 0 || get_le(&r, 4) != BLOB_VERSION)
        return XF_FAIL(err, XF_ERR_PARSE,
                       "the run's checkpoint is not an xfergen checkpoint of version %u",
                       BLOB_VERSION);
    uint64_t n = get_le(&r, 8);
    uint64_t secs = get_le(&r, 8);
    c->buf = xf_malloc(len);
    c->off = xf_malloc(((size_t)n + 1) * sizeof *c->off);
    if (!c->buf || !c->off) {
        en_cand_list_free(c);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading a checkpoint of %zu bytes", len);
    }
    memcpy(c->buf, blob, len);
    c->len = c->cap = len;
    c->cap_off = (size_t)n + 1;
    memcpy(&c->enum_seconds, &secs, 8);
    for (uint64_t i = 0; i < n; i++) {
        size_t at = r.at;
        if (!skip_record(&r)) break;
        c->off[c->n++] = at;
    }
    if (r.bad || r.at != len) {
        size_t got = c->n;
        en_cand_list_free(c);
        return XF_FAIL(err, XF_ERR_PARSE, "the run's checkpoint is damaged (%zu of %llu candidates readable)",
                       got, (unsigned long long)n);
    }
    return XF_OK;
}
