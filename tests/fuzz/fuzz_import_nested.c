/*
 * fuzz_import_nested.c — a structure-aware libFuzzer harness for deep
 * nesting in ONNX models: the input does not hold a model, it describes
 * one. Byte 0 picks how graphs nest (an If's then_branch, its else_branch,
 * a Loop's body, or a graph input whose type is a sequence of sequences of
 * ...), bytes 1-2 how deep (0..8191 levels, so inputs far past the
 * importer's limit of IMP_PB_MAX_DEPTH messages are short), and the rest is
 * the innermost message's bytes (a GraphProto's or TypeProto's fields as
 * the mutator makes them). The model is built around them and imported: it
 * must import, or fail with an error status (a model nested too deep is
 * refused before it is decoded); never crash or overflow the stack (3,000
 * nested If branches did, in protobuf-c's recursive decoder).
 *
 * The model is written back to front into one buffer (every nesting field
 * is the last field of its message, which protobuf allows in any order),
 * so building it costs its size, not its size times its depth.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "onnx/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bytes are prepended: the message is b[s, cap). */
typedef struct rbuf {
    uint8_t *b;
    size_t s, cap;
} rbuf;

static int prepend(rbuf *r, const void *p, size_t n)
{
    if (n > r->s) return 0;
    r->s -= n;
    memcpy(r->b + r->s, p, n);
    return 1;
}

static int prepend_varint(rbuf *r, uint64_t v)
{
    uint8_t t[10];
    int n = 0;
    do {
        t[n] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
        v >>= 7;
        n++;
    } while (v);
    return prepend(r, t, (size_t)n);
}

/* A length-delimited header for the message that fills b[at, cap). */
static int header(rbuf *r, unsigned field, size_t at)
{
    return prepend_varint(r, r->cap - at) && prepend_varint(r, (uint64_t)field << 3 | 2);
}

static int text(rbuf *r, unsigned field, const char *s)
{
    size_t n = strlen(s);
    return prepend(r, s, n) && prepend_varint(r, n) && prepend_varint(r, (uint64_t)field << 3 | 2);
}

static int number(rbuf *r, unsigned field, uint64_t v)
{
    return prepend_varint(r, v) && prepend_varint(r, (uint64_t)field << 3);
}

/* Wraps the message at r->s once: in a graph attribute of a node of a
 * graph (kind 0 If then_branch, 1 If else_branch, 2 Loop body), or, kind
 * 3, as the element type of a sequence type. */
static int wrap(rbuf *r, int kind)
{
    if (kind == 3) /* TypeProto { sequence_type (4) { elem_type (1) } } */
        return header(r, 1, r->s) && header(r, 4, r->s);
    static const char *const names[3] = {"then_branch", "else_branch", "body"};
    static const char *const ops[3] = {"If", "If", "Loop"};
    return header(r, 6, r->s) && number(r, 20, 5) && text(r, 1, names[kind]) && /* attr */
           header(r, 5, r->s) && text(r, 4, ops[kind]) && text(r, 2, "y") && text(r, 1, "c") &&
           header(r, 1, r->s) && text(r, 2, "g"); /* the node in a graph named g */
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
    rbuf r;
    r.cap = r.s = size + (size_t)depth * 64 + 256;
    r.b = malloc(r.cap);
    if (!r.b) return 0;
    int ok = prepend(&r, data + 3, size - 3);
    for (int i = 0; ok && i < depth; i++) ok = wrap(&r, kind);
    if (ok && kind == 3) /* a graph with one input "x" of that type */
        ok = header(&r, 2, r.s) && text(&r, 1, "x") && header(&r, 11, r.s) && text(&r, 2, "g");
    ok = ok && header(&r, 7, r.s) && prepend_varint(&r, 13) && prepend_varint(&r, 2 << 3) &&
         prepend_varint(&r, 2) && prepend_varint(&r, 8 << 3 | 2) && number(&r, 1, 8);
    if (ok) {
        xf_graph g;
        xf_error err;
        if (xf_onnx_load_buffer(r.b + r.s, r.cap - r.s, "nested.onnx", NULL, NULL, &g, &err) ==
            XF_OK) {
            if (xf_graph_validate(&g, &err) != XF_OK) abort();
            xf_graph_free(&g);
        }
    }
    free(r.b);
    return 0;
}
