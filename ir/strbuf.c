/*
 * strbuf.c — the bounded string builder (xf_strbuf) used wherever rlflow
 * composes a description piece by piece into a fixed buffer: vocabulary
 * lines, cost-cache keys, messages.
 */
#include "ir.h"

#include <stdio.h>

void xf_strbuf_printf(xf_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t at = b->len < b->n ? b->len : b->n;
    size_t room = b->n - at;
    int k = vsnprintf(room ? b->p + at : NULL, room, fmt, ap);
    va_end(ap);
    if (k < 0) {
        b->overflow = 1;
        return;
    }
    if ((size_t)k >= room) b->overflow = 1;
    b->len += (size_t)k;
}
