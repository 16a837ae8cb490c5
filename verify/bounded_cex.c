/*
 * bounded_cex.c — the counterexample blob stored with a refuted rule in the
 * rules database: the float32 input tensors that make the two sides differ.
 *
 * The blob is plain text so that an auditor can read it with sqlite3 alone
 * (format in docs/verify.md):
 *
 *     xf-counterexample 1
 *     inputs <n>
 *     tensor <rank> <d0> ... <d_rank-1>
 *     <v0> <v1> ...            (numel values, %.9g: float32 round-trips)
 *
 * one "tensor" line and one value line per input, in rule input order.
 */
#include "verify/verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

xf_status xf_verify_cex_encode(const xf_tensor *inputs, int n, uint8_t **buf, size_t *len,
                               xf_error *err)
{
    *buf = NULL;
    *len = 0;
    size_t cap = 64;
    for (int i = 0; i < n; i++) {
        if (inputs[i].dtype != XF_F32)
            return XF_FAIL(err, XF_ERR_INVALID, "counterexample: input %d is %s, not float32", i,
                           xf_dtype_name(inputs[i].dtype));
        cap += 32 + 24 * XF_MAX_DIMS + 18 * (size_t)xf_shape_numel(&inputs[i].shape);
    }
    char *s = xf_malloc(cap);
    if (!s) return XF_FAIL(err, XF_ERR_NOMEM, "counterexample: out of memory");
    xf_strbuf b = {s, cap, 0, 0};
    xf_strbuf_printf(&b, "xf-counterexample 1\ninputs %d\n", n);
    for (int i = 0; i < n; i++) {
        const xf_shape *sh = &inputs[i].shape;
        xf_strbuf_printf(&b, "tensor %d", sh->rank);
        for (int d = 0; d < sh->rank; d++) xf_strbuf_printf(&b, " %lld", (long long)sh->dims[d]);
        xf_strbuf_printf(&b, "\n");
        const float *v = inputs[i].data;
        for (int64_t e = 0; e < xf_shape_numel(sh); e++)
            xf_strbuf_printf(&b, "%s%.9g", e ? " " : "", (double)v[e]);
        xf_strbuf_printf(&b, "\n");
    }
    if (b.overflow) {
        xf_free(s);
        return XF_FAIL(err, XF_ERR_INTERNAL, "counterexample: buffer estimate too small");
    }
    *buf = (uint8_t *)s;
    *len = b.len;
    return XF_OK;
}

/* Next integer from *p; -1 with *ok = 0 when there is none. */
static long long next_int(char **p, int *ok)
{
    errno = 0;
    char *end;
    long long v = strtoll(*p, &end, 10);
    if (end == *p || errno) *ok = 0;
    *p = end;
    return v;
}

static int skip_word(char **p, const char *w)
{
    while (**p == ' ' || **p == '\n') (*p)++;
    size_t n = strlen(w);
    if (strncmp(*p, w, n) != 0) return 0;
    *p += n;
    return 1;
}

xf_status xf_verify_cex_decode(const uint8_t *buf, size_t len, xf_tensor **inputs, int *n,
                               xf_error *err)
{
    *inputs = NULL;
    *n = 0;
    char *s = xf_malloc(len + 1);
    if (!s) return XF_FAIL(err, XF_ERR_NOMEM, "counterexample: out of memory");
    memcpy(s, buf, len);
    s[len] = '\0';
    char *p = s;
    int ok = 1;
    if (!skip_word(&p, "xf-counterexample") || next_int(&p, &ok) != 1 || !ok ||
        !skip_word(&p, "inputs")) {
        xf_free(s);
        return XF_FAIL(err, XF_ERR_PARSE, "counterexample: not an xf-counterexample 1 blob");
    }
    long long count = next_int(&p, &ok);
    if (!ok || count < 0 || count > 1024) {
        xf_free(s);
        return XF_FAIL(err, XF_ERR_PARSE, "counterexample: bad input count");
    }
    xf_tensor *t = xf_calloc((size_t)count + 1, sizeof *t);
    xf_status st = t ? XF_OK : XF_FAIL(err, XF_ERR_NOMEM, "counterexample: out of memory");
    int done = 0;
    for (; st == XF_OK && done < count; done++) {
        xf_shape sh = {0, {0}};
        long long rank = skip_word(&p, "tensor") ? next_int(&p, &ok) : -1;
        if (!ok || rank < 0 || rank > XF_MAX_DIMS) {
            st = XF_FAIL(err, XF_ERR_PARSE, "counterexample: bad tensor header for input %d",
                         done);
            break;
        }
        sh.rank = (int)rank;
        for (int d = 0; d < sh.rank; d++) {
            sh.dims[d] = next_int(&p, &ok);
            if (!ok || sh.dims[d] < 0 || sh.dims[d] > 4096) ok = 0;
        }
        if (!ok) {
            st = XF_FAIL(err, XF_ERR_PARSE, "counterexample: bad shape for input %d", done);
            break;
        }
        st = xf_tensor_alloc(&t[done], XF_F32, &sh, err);
        float *v = st == XF_OK ? t[done].data : NULL;
        for (int64_t e = 0; st == XF_OK && e < xf_shape_numel(&sh); e++) {
            char *end;
            v[e] = strtof(p, &end);
            if (end == p)
                st = XF_FAIL(err, XF_ERR_PARSE, "counterexample: input %d has too few values",
                             done);
            p = end;
        }
        if (st != XF_OK) {
            done++; /* t[done] is allocated: free it below */
            break;
        }
    }
    xf_free(s);
    if (st != XF_OK) {
        for (int i = 0; t && i < done; i++) xf_tensor_free(&t[i]);
        xf_free(t);
        return st;
    }
    *inputs = t;
    *n = (int)count;
    return XF_OK;
}
