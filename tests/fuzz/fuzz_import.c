/*
 * fuzz_import.c — libFuzzer harness for the ONNX importer: any byte string
 * must either import into a graph that validates, or fail with an error
 * status; never crash, hang, leak or touch memory out of bounds. When the
 * import succeeds, the graph is exported again, which exercises the
 * exporter on whatever the importer accepted.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ir/ir.h"
#include "onnx/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet = 0;
    if (!quiet) {
        xf_log_set_level(XF_LOG_OFF);
        quiet = 1;
    }
    xf_graph g;
    xf_error err;
    if (xf_onnx_load_buffer(data, size, "fuzz.onnx", NULL, NULL, &g, &err) != XF_OK) return 0;
    if (xf_graph_validate(&g, &err) != XF_OK) abort(); /* import must only return valid graphs */
    uint8_t *buf = NULL;
    size_t len = 0;
    if (xf_onnx_save_buffer(&g, &buf, &len, &err) == XF_OK) free(buf);
    xf_graph_free(&g);
    return 0;
}
