/*
 * nn_ckpt.c — versioned binary checkpoints of a parameter store (format in
 * nn.h): little-endian integers and float bit patterns, every byte hashed
 * into a trailing FNV-1a checksum, so a truncated or corrupted file is
 * caught. Loading checks names and shapes tensor by tensor against the
 * network built by the caller and changes nothing unless all is good.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/nn/nn.h"

static const char MAGIC[8] = {'X', 'F', 'N', 'N', 'C', 'K', 'P', 'T'};
#define FNV_BASIS 14695981039346656037ull
#define CHUNK 1024

typedef struct stream {
    FILE *f;
    uint64_t hash;
    const char *what;
} stream;

static const char *nm(const char *what) { return what ? what : "checkpoint stream"; }

static xf_status put(stream *s, const void *p, size_t n, xf_error *err)
{
    s->hash = xf_hash_bytes(s->hash, p, n);
    if (fwrite(p, 1, n, s->f) != n)
        return XF_FAIL(err, XF_ERR_IO, "cannot write %s", nm(s->what));
    return XF_OK;
}

static xf_status get(stream *s, void *p, size_t n, xf_error *err)
{
    if (fread(p, 1, n, s->f) != n)
        return XF_FAIL(err, XF_ERR_IO, "%s is truncated or unreadable", nm(s->what));
    s->hash = xf_hash_bytes(s->hash, p, n);
    return XF_OK;
}

static void le32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t rd32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static xf_status put_u32(stream *s, uint32_t v, xf_error *err)
{
    unsigned char b[4];
    le32(b, v);
    return put(s, b, 4, err);
}

static xf_status get_u32(stream *s, uint32_t *v, xf_error *err)
{
    unsigned char b[4];
    xf_status st = get(s, b, 4, err);
    *v = st == XF_OK ? rd32(b) : 0;
    return st;
}

static xf_status put_floats(stream *s, const float *x, size_t n, xf_error *err)
{
    unsigned char b[4 * CHUNK];
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t k = n - i < CHUNK ? n - i : CHUNK;
        for (size_t j = 0; j < k; j++) {
            uint32_t u;
            memcpy(&u, &x[i + j], 4);
            le32(b + 4 * j, u);
        }
        xf_status st = put(s, b, 4 * k, err);
        if (st != XF_OK) return st;
    }
    return XF_OK;
}

static xf_status get_floats(stream *s, float *x, size_t n, xf_error *err)
{
    unsigned char b[4 * CHUNK];
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t k = n - i < CHUNK ? n - i : CHUNK;
        xf_status st = get(s, b, 4 * k, err);
        if (st != XF_OK) return st;
        for (size_t j = 0; j < k; j++) {
            uint32_t u = rd32(b + 4 * j);
            memcpy(&x[i + j], &u, 4);
        }
    }
    return XF_OK;
}

xf_status xf_nn_params_save(const xf_nn_params *p, FILE *f, int with_moments, const char *what,
                            xf_error *err)
{
    stream s = {f, FNV_BASIS, what};
    xf_status st = put(&s, MAGIC, sizeof MAGIC, err);
    if (st == XF_OK) st = put_u32(&s, XF_NN_CKPT_VERSION, err);
    if (st == XF_OK) st = put_u32(&s, with_moments ? 1u : 0u, err);
    if (st == XF_OK) st = put_u32(&s, (uint32_t)p->n, err);
    for (int i = 0; st == XF_OK && i < p->n; i++) {
        const xf_nn_tensor_info *t = &p->t[i];
        size_t len = strlen(t->name);
        st = put_u32(&s, (uint32_t)len, err);
        if (st == XF_OK) st = put(&s, t->name, len, err);
        if (st == XF_OK) st = put_u32(&s, (uint32_t)t->rank, err);
        for (int d = 0; st == XF_OK && d < t->rank; d++) st = put_u32(&s, (uint32_t)t->dims[d], err);
        if (st == XF_OK) st = put_floats(&s, p->value + t->offset, t->size, err);
        if (st == XF_OK && with_moments) st = put_floats(&s, p->m + t->offset, t->size, err);
        if (st == XF_OK && with_moments) st = put_floats(&s, p->v + t->offset, t->size, err);
    }
    if (st != XF_OK) return st;
    unsigned char b[8];
    uint64_t h = s.hash;
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(h >> (8 * i));
    return put(&s, b, 8, err);
}

static void shape_str(char *buf, size_t n, int rank, const uint32_t *dims)
{
    xf_strbuf sb = {buf, n, 0, 0};
    xf_strbuf_printf(&sb, "[");
    for (int d = 0; d < rank; d++) xf_strbuf_printf(&sb, "%s%u", d ? "," : "", dims[d]);
    xf_strbuf_printf(&sb, "]");
}

/* Reads one tensor header (name, shape) and checks it against tensor i of p. */
static xf_status read_header(stream *s, const xf_nn_params *p, int i, uint32_t count,
                             xf_error *err)
{
    uint32_t len, rank, dims[XF_NN_MAX_RANK];
    char name[XF_NN_MAX_NAME];
    xf_status st = get_u32(s, &len, err);
    if (st != XF_OK) return st;
    if (len == 0 || len >= XF_NN_MAX_NAME)
        return XF_FAIL(err, XF_ERR_PARSE, "%s: tensor %d has a name of length %u", nm(s->what), i,
                       len);
    if ((st = get(s, name, len, err)) != XF_OK) return st;
    name[len] = '\0';
    if ((st = get_u32(s, &rank, err)) != XF_OK) return st;
    if (rank < 1 || rank > XF_NN_MAX_RANK)
        return XF_FAIL(err, XF_ERR_PARSE, "%s: tensor '%s' has rank %u", nm(s->what), name, rank);
    for (uint32_t d = 0; d < rank; d++)
        if ((st = get_u32(s, &dims[d], err)) != XF_OK) return st;
    if (i >= p->n)
        return XF_FAIL(err, XF_ERR_MISMATCH,
                       "%s holds tensor '%s', which the network does not have (%u tensors in the "
                       "checkpoint, %d in the network)",
                       nm(s->what), name, count, p->n);
    const xf_nn_tensor_info *t = &p->t[i];
    if (strcmp(name, t->name) != 0)
        return XF_FAIL(err, XF_ERR_MISMATCH,
                       "%s: tensor %d is '%s', the network expects '%s' there", nm(s->what), i,
                       name, t->name);
    int same = (int)rank == t->rank;
    for (int d = 0; same && d < t->rank; d++) same = (int)dims[d] == t->dims[d];
    if (!same) {
        char a[96], b[96];
        uint32_t td[XF_NN_MAX_RANK];
        for (int d = 0; d < t->rank; d++) td[d] = (uint32_t)t->dims[d];
        shape_str(a, sizeof a, (int)rank, dims);
        shape_str(b, sizeof b, t->rank, td);
        return XF_FAIL(err, XF_ERR_MISMATCH,
                       "%s: tensor '%s' has shape %s, the network expects %s", nm(s->what), name,
                       a, b);
    }
    return XF_OK;
}

xf_status xf_nn_params_load(xf_nn_params *p, FILE *f, const char *what, xf_error *err)
{
    stream s = {f, FNV_BASIS, what};
    char magic[8];
    uint32_t version, flags, count;
    float *buf = NULL;
    xf_status st = get(&s, magic, sizeof magic, err);
    if (st != XF_OK) return st;
    if (memcmp(magic, MAGIC, sizeof MAGIC) != 0)
        return XF_FAIL(err, XF_ERR_PARSE, "%s is not an rlflow network checkpoint (bad magic)",
                       nm(what));
    if ((st = get_u32(&s, &version, err)) != XF_OK) return st;
    if (version != XF_NN_CKPT_VERSION)
        return XF_FAIL(err, XF_ERR_PARSE, "%s has checkpoint version %u, this build reads %u",
                       nm(what), version, XF_NN_CKPT_VERSION);
    if ((st = get_u32(&s, &flags, err)) != XF_OK) return st;
    if ((st = get_u32(&s, &count, err)) != XF_OK) return st;
    if (flags > 1u)
        return XF_FAIL(err, XF_ERR_PARSE, "%s has unknown flags 0x%x", nm(what), flags);
    size_t per = flags ? 3 : 1;
    buf = xf_malloc((p->total ? p->total : 1) * per * sizeof(float));
    if (!buf) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading %s", nm(what));
    for (uint32_t i = 0; i < count; i++) {
        if ((st = read_header(&s, p, (int)i, count, err)) != XF_OK) goto out;
        const xf_nn_tensor_info *t = &p->t[i];
        for (size_t k = 0; k < per; k++)
            if ((st = get_floats(&s, buf + k * p->total + t->offset, t->size, err)) != XF_OK) goto out;
    }
    if ((int)count < p->n) {
        st = XF_FAIL(err, XF_ERR_MISMATCH,
                     "the network's tensor '%s' is missing from %s (%u tensors in the "
                     "checkpoint, %d in the network)",
                     p->t[count].name, nm(what), count, p->n);
        goto out;
    }
    uint64_t expect = s.hash;
    unsigned char b[8];
    if ((st = get(&s, b, 8, err)) != XF_OK) goto out;
    uint64_t h = 0;
    for (int i = 0; i < 8; i++) h |= (uint64_t)b[i] << (8 * i);
    if (h != expect) {
        st = XF_FAIL(err, XF_ERR_PARSE, "%s is corrupted (checksum mismatch)", nm(what));
        goto out;
    }
    if (p->total) {
        memcpy(p->value, buf, p->total * sizeof(float));
        if (flags) {
            memcpy(p->m, buf + p->total, p->total * sizeof(float));
            memcpy(p->v, buf + 2 * p->total, p->total * sizeof(float));
        } else {
            memset(p->m, 0, p->total * sizeof(float));
            memset(p->v, 0, p->total * sizeof(float));
        }
    }
out:
    xf_free(buf);
    return st;
}
