/*
 * fuzz_rulesdb_graph.c — libFuzzer harness for the rules-database graph
 * decoder (rulesdb/graph_codec.c, params_codec.c, bytes.c): any byte string
 * stored as a rule side must either decode into a graph that validates, or
 * fail with an error status; never crash, hang, leak or touch memory out of
 * bounds. A decoded graph then goes where a loaded rule goes: it is hashed,
 * printed in infix form, and serialized again; that serialization must
 * decode and serialize to the same bytes (the format is canonical), or the
 * harness aborts. Seeds: the blobs of a real rules database (tools/fuzz.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "rulesdb/rulesdb.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    xf_log_set_level(XF_LOG_OFF);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xf_graph g, g2;
    xf_error err;
    if (xf_rulesdb_graph_deserialize(data, size, NULL, &g, &err) != XF_OK) return 0;
    if (xf_graph_validate(&g, &err) != XF_OK) abort(); /* decode must only return valid graphs */
    uint64_t hash;
    (void)xf_graph_hash_checked(&g, XF_HASH_CONTENT, &hash, &err);
    char text[4096];
    (void)xf_graph_format(&g, text, sizeof text, &err);
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (xf_rulesdb_graph_serialize(&g, &a, &na, &err) == XF_OK) {
        if (xf_rulesdb_graph_deserialize(a, na, NULL, &g2, &err) != XF_OK) abort();
        if (xf_rulesdb_graph_serialize(&g2, &b, &nb, &err) != XF_OK) abort();
        if (na != nb || memcmp(a, b, na) != 0) abort(); /* not canonical */
        xf_graph_free(&g2);
    }
    xf_free(a);
    xf_free(b);
    xf_graph_free(&g);
    return 0;
}
