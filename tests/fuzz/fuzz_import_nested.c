/*
 * fuzz_import_nested.c — a structure-aware libFuzzer harness for deep
 * nesting in ONNX models: the input does not hold a model, it describes
 * one. Byte 0 picks how graphs nest (an If's then_branch, its else_branch,
 * a Loop's body, or a graph input whose type is a sequence of sequences of
 * ...), bytes 1-2 how deep (0..8191 levels, so inputs far past the
 * importer's limit of IMP_PB_MAX_DEPTH messages are short), and the rest is
 * the innermost graph's bytes (a GraphProto's fields as the mutator makes
 * them). The model is built around them and imported: it must import, or
 * fail with an error status (a model nested too deep is refused before it
 * is decoded); never crash or overflow the stack (3,000 nested If branches
 * did, in protobuf-c's recursive decoder).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "onnx/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static int put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) return 0;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    return 1;
}

static int varint(buf *b, uint64_t v)
{
    uint8_t t[10];
    int n = 0;
    do {
        t[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) t[n] |= 0x80;
        n++;
    } while (v);
    return put(b, t, (size_t)n);
}

/* Field `f` (length-delimited) holding p[0..n) appended to b. */
static int field(buf *b, unsigned f, const void *p, size_t n)
{
    return varint(b, (uint64_t)f << 3 | 2) && varint(b, n) && put(b, p, n);
}

/* Field `f` (varint) holding v. */
static int vfield(buf *b, unsigned f, uint64_t v)
{
    return varint(b, (uint64_t)f << 3) && varint(b, v);
}

/* The graph `inner` wrapped once: in a node's graph attribute (kind 0:
 * If then_branch, 1: If else_branch, 2: Loop body) or, kind 3, as the
 * element type of a sequence type ("inner" is then a TypeProto). */
static int wrap(int kind, const buf *inner, buf *out)
{
    buf a = {0}, n = {0};
    int ok;
    if (kind == 3) { /* TypeProto.sequence_type (4) { elem_type (1) } */
        ok = field(&a, 1, inner->p, inner->n) && field(out, 4, a.p, a.n);
    } else {
        static const char *const names[3] = {"then_branch", "else_branch", "body"};
        static const char *const ops[3] = {"If", "If", "Loop"};
        ok = field(&a, 1, names[kind], strlen(names[kind])) && vfield(&a, 20, 5) &&
             field(&a, 6, inner->p, inner->n) && field(&n, 1, "c", 1) &&
             field(&n, 2, "y", 1) && field(&n, 4, ops[kind], strlen(ops[kind])) &&
             field(&n, 5, a.p, a.n) && field(out, 1, n.p, n.n) && field(out, 2, "g", 1);
    }
    free(a.p);
    free(n.p);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready = 0;
    if (!ready) {
        xf_log_set_level(XF_LOG_OFF);
        xf_mem_limit_set((size_t)1 << 20);
        ready = 1;
    }
    if (size < 3) return 0;
    int kind = data[0] % 4;
    int depth = (data[1] | data[2] << 8) % 8192;
    buf cur = {0}, next = {0};
    int ok = put(&cur, data + 3, size - 3);
    for (int i = 0; ok && i < depth; i++) {
        next.n = 0;
        ok = wrap(kind, &cur, &next);
        buf t = cur;
        cur = next;
        next = t;
    }
    buf model = {0};
    if (ok && kind == 3) { /* a graph with one input of that type */
        buf vi = {0}, g = {0};
        ok = field(&vi, 1, "x", 1) && field(&vi, 2, cur.p, cur.n) && field(&g, 11, vi.p, vi.n) &&
             field(&g, 2, "g", 1);
        free(cur.p);
        cur = g;
        free(vi.p);
    }
    ok = ok && vfield(&model, 1, 8) && varint(&model, 8 << 3 | 2) && varint(&model, 2) &&
         vfield(&model, 2, 13) && field(&model, 7, cur.p, cur.n);
    if (ok) {
        xf_graph g;
        xf_error err;
        if (xf_onnx_load_buffer(model.p, model.n, "nested.onnx", NULL, NULL, &g, &err) == XF_OK) {
            if (xf_graph_validate(&g, &err) != XF_OK) abort();
            xf_graph_free(&g);
        }
    }
    free(cur.p);
    free(next.p);
    free(model.p);
    return 0;
}
