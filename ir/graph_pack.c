/*
 * graph_pack.c — a graph held compactly while it waits (xf_graph_pack).
 *
 * The TASO search queues up to its budget of graphs (a thousand), each a
 * clone sharing its constants: on a BERT-base that is 500 KB of structure
 * per graph, 0.5 GB in all, more than its weights. Most of it is zero: a
 * node carries a full xf_params (864 bytes) of which an operator reads a
 * few fields (the rest canonically zero). Packing run-length encodes the
 * graph's node and value arrays (runs of zero bytes, then literal bytes);
 * everything they point to (names, the nodes' input and output arrays, the
 * clone block, opaque nodes, constant data) stays where it is, owned by the
 * packed graph, so unpacking is one decode and the graph is the same
 * bytes as before.
 */
#include <string.h>

#include "ir.h"

/* Spare room of the arrays a graph is unpacked into (as a clone has). */
#define UNPACK_SPARE 16

static size_t put_varint(uint8_t *out, size_t v)
{
    size_t n = 0;
    do {
        uint8_t b = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (out) out[n] = (uint8_t)(b | (v ? 0x80 : 0));
        n++;
    } while (v);
    return n;
}

static size_t get_varint(const uint8_t *in, size_t *v)
{
    size_t n = 0, shift = 0;
    *v = 0;
    for (;;) {
        uint8_t b = in[n++];
        *v |= (size_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return n;
        shift += 7;
    }
}

/* Encodes a[0 .. len) into out (NULL: only counts); returns the bytes. */
static size_t encode(const uint8_t *a, size_t len, uint8_t *out)
{
    size_t i = 0, n = 0;
    while (i < len) {
        size_t z = i;
        while (z < len && a[z] == 0) z++;
        size_t l = z;
        /* a literal ends at a run of 8 zeros or more (shorter runs cost more as runs) */
        while (l < len) {
            size_t r = l;
            while (r < len && a[r] == 0 && r - l < 8) r++;
            if (r - l >= 8 || r == len) break;
            l = r + 1;
        }
        if (l > len) l = len;
        n += put_varint(out ? out + n : NULL, z - i);
        n += put_varint(out ? out + n : NULL, l - z);
        if (out && l > z) memcpy(out + n, a + z, l - z);
        n += l - z;
        i = l;
    }
    return n;
}

static size_t decode(const uint8_t *in, uint8_t *a, size_t len)
{
    size_t i = 0, n = 0;
    while (i < len) {
        size_t zeros, lit;
        n += get_varint(in + n, &zeros);
        n += get_varint(in + n, &lit);
        memset(a + i, 0, zeros);
        i += zeros;
        memcpy(a + i, in + n, lit);
        i += lit;
        n += lit;
    }
    return n;
}

xf_status xf_graph_pack(xf_graph *g, xf_graph_packed *p, xf_error *err)
{
    memset(p, 0, sizeof *p);
    size_t nb = (size_t)g->n_nodes * sizeof *g->nodes, vb = (size_t)g->n_values * sizeof *g->values;
    size_t n = encode((const uint8_t *)g->nodes, nb, NULL) +
               encode((const uint8_t *)g->values, vb, NULL);
    p->bytes = xf_malloc(n ? n : 1);
    if (!p->bytes) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory packing a graph");
    size_t k = encode((const uint8_t *)g->nodes, nb, p->bytes);
    encode((const uint8_t *)g->values, vb, p->bytes + k);
    p->n_bytes = n;
    xf_free(g->nodes);
    xf_free(g->values);
    g->nodes = NULL;
    g->values = NULL;
    g->cap_nodes = g->cap_values = 0;
    p->g = *g;
    xf_graph_init(g);
    return XF_OK;
}

xf_status xf_graph_unpack(xf_graph_packed *p, xf_graph *g, xf_error *err)
{
    xf_graph_init(g);
    xf_graph s = p->g;
    size_t cn = (size_t)s.n_nodes + UNPACK_SPARE, cv = (size_t)s.n_values + UNPACK_SPARE;
    s.nodes = xf_malloc(cn * sizeof *s.nodes);
    s.values = xf_malloc(cv * sizeof *s.values);
    if (!s.nodes || !s.values) {
        xf_free(s.nodes);
        xf_free(s.values);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory unpacking a graph");
    }
    size_t k = decode(p->bytes, (uint8_t *)s.nodes, (size_t)s.n_nodes * sizeof *s.nodes);
    decode(p->bytes + k, (uint8_t *)s.values, (size_t)s.n_values * sizeof *s.values);
    s.cap_nodes = (int)cn;
    s.cap_values = (int)cv;
    *g = s;
    xf_free(p->bytes);
    memset(p, 0, sizeof *p);
    return XF_OK;
}

/* Decodes `count` elements of `size` bytes from in, one at a time into
 * `elem`, calling fn on each; returns the bytes read. No allocation. */
static size_t decode_each(const uint8_t *in, size_t size, size_t count, uint8_t *elem,
                          void (*fn)(const xf_graph *, void *), const xf_graph *g)
{
    size_t n = 0, filled = 0, zeros = 0, lit = 0, total = size * count;
    for (size_t done = 0; done < total;) {
        if (!zeros && !lit) {
            n += get_varint(in + n, &zeros);
            n += get_varint(in + n, &lit);
            continue;
        }
        size_t room = size - filled, take;
        if (zeros) {
            take = zeros < room ? zeros : room;
            memset(elem + filled, 0, take);
            zeros -= take;
        } else {
            take = lit < room ? lit : room;
            memcpy(elem + filled, in + n, take);
            n += take;
            lit -= take;
        }
        filled += take;
        done += take;
        if (filled == size) {
            fn(g, elem);
            filled = 0;
        }
    }
    return n;
}

static void free_node(const xf_graph *g, void *e)
{
    xf_node *nd = e;
    xf_graph_release(g, nd->name);
    xf_graph_release(g, nd->inputs);
    xf_graph_release(g, nd->outputs);
    xf_opaque_free(nd->opaque);
}

static void free_value(const xf_graph *g, void *e)
{
    xf_value *v = e;
    xf_graph_release(g, v->name);
    if (!v->borrowed) xf_free(v->data);
}

void xf_graph_packed_free(xf_graph_packed *p)
{
    if (!p || !p->bytes) return;
    xf_node nd;
    xf_value v;
    size_t k = decode_each(p->bytes, sizeof nd, (size_t)p->g.n_nodes, (uint8_t *)&nd, free_node,
                           &p->g);
    decode_each(p->bytes + k, sizeof v, (size_t)p->g.n_values, (uint8_t *)&v, free_value, &p->g);
    xf_free(p->bytes);
    p->g.n_nodes = p->g.n_values = 0; /* freed above; the rest goes with the graph */
    xf_graph_free(&p->g);
    memset(p, 0, sizeof *p);
}

size_t xf_graph_packed_bytes(const xf_graph_packed *p)
{
    return p->n_bytes;
}
