/*
 * error.c — status names and the xf_error helpers behind XF_FAIL.
 * A failing function records the first cause; callers higher up may prefix
 * context ("importing model.onnx: ...") so the user sees one actionable line.
 */
#include "ir.h"

#include <stdio.h>
#include <string.h>

xf_status xf_error_set(xf_error *err, xf_status code, const char *file, int line,
                       const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    err->src_file = file;
    err->src_line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

void xf_error_prefix(xf_error *err, const char *fmt, ...)
{
    if (!err) return;
    char head[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    char old[sizeof err->msg];
    memcpy(old, err->msg, sizeof old);
    size_t hn = strnlen(head, sizeof err->msg - 3);
    memcpy(err->msg, head, hn);
    memcpy(err->msg + hn, ": ", 2);
    size_t room = sizeof err->msg - hn - 3;
    size_t on = strnlen(old, room);
    memcpy(err->msg + hn + 2, old, on);
    err->msg[hn + 2 + on] = '\0';
}

void xf_error_clear(xf_error *err)
{
    if (!err) return;
    memset(err, 0, sizeof *err);
}

const char *xf_status_name(xf_status s)
{
    switch (s) {
    case XF_OK: return "ok";
    case XF_ERR_INVALID: return "invalid";
    case XF_ERR_NOMEM: return "out of memory";
    case XF_ERR_IO: return "i/o error";
    case XF_ERR_PARSE: return "parse error";
    case XF_ERR_UNSUPPORTED: return "unsupported";
    case XF_ERR_SHAPE: return "shape error";
    case XF_ERR_GRAPH: return "graph error";
    case XF_ERR_MISMATCH: return "mismatch";
    case XF_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}
