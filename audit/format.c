/*
 * format.c — infix text of a rule side for xferdb, in a buffer that grows
 * until the whole expression fits.
 */
#include <stdlib.h>

#include "audit_impl.h"

char *audit_format(const xf_graph *g, xf_error *err)
{
    for (size_t n = 256; n <= ((size_t)1 << 24); n *= 4) {
        char *buf = xf_malloc(n);
        if (!buf) {
            XF_FAIL(err, XF_ERR_NOMEM, "out of memory formatting a rule");
            return NULL;
        }
        xf_status st = xf_graph_format(g, buf, n, err);
        if (st == XF_OK) return buf;
        xf_free(buf);
        if (st != XF_ERR_INVALID) return NULL;
    }
    XF_FAIL(err, XF_ERR_UNSUPPORTED, "rule text is longer than 16 MiB");
    return NULL;
}
