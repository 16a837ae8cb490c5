/*
 * memlimit.c — the memory limit on tensors: the most bytes the tensors of
 * one piece of work may take (one tensor, one graph run by the interpreter
 * or an executor, one operator measured by a cost backend). Work over the
 * limit is refused with a message naming the tensor and the limit before
 * anything is allocated, so a model sized by a mistaken or hostile --dim
 * fails at once instead of running the machine out of memory. The limit is
 * process-wide, set once by a tool before any work starts; by default half
 * of the physical memory.
 */
#include "ir.h"

#include <stdio.h>
#include <unistd.h>

static size_t mem_limit; /* 0: not set, the default applies */

/* Half of the physical memory; 4 GiB when the system does not say. */
static size_t default_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return (size_t)4 << 30;
    uint64_t phys = (uint64_t)pages * (uint64_t)page;
    if (phys / 2 > (uint64_t)XF_SHAPE_MAX_ELEMS) return (size_t)XF_SHAPE_MAX_ELEMS;
    return (size_t)(phys / 2);
}

size_t xf_mem_limit(void)
{
    return mem_limit ? mem_limit : default_limit();
}

void xf_mem_limit_set(size_t bytes)
{
    mem_limit = bytes > (size_t)XF_SHAPE_MAX_ELEMS ? (size_t)XF_SHAPE_MAX_ELEMS : bytes;
}

char *xf_bytes_str(double bytes, char *buf, size_t n)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 6) bytes /= 1024.0, u++;
    if (u == 0)
        snprintf(buf, n, "%.0f bytes", bytes);
    else
        snprintf(buf, n, "%.1f %s", bytes, unit[u]);
    return buf;
}

xf_status xf_mem_limit_check(size_t bytes, const char *what, xf_error *err)
{
    size_t limit = xf_mem_limit();
    if (bytes <= limit) return XF_OK;
    char b[32], l[32];
    return XF_FAIL(err, XF_ERR_NOMEM,
                   "%s needs %s, over the memory limit of %s (set it with --mem-limit or "
                   "RLFLOW_MEM_LIMIT)",
                   what, xf_bytes_str((double)bytes, b, sizeof b),
                   xf_bytes_str((double)limit, l, sizeof l));
}

/* "input 'x' [999999999,4] float32" or "output 0 of node 3 'r' (Relu) ...". */
static void describe_value(const xf_graph *g, int v, char *buf, size_t n)
{
    const xf_value *val = &g->values[v];
    char s[160], d[256];
    xf_shape_str(&val->shape, s, sizeof s);
    if (val->kind == XF_VALUE_NODE)
        snprintf(buf, n, "output %d of %s, %s %s", val->producer_output,
                 xf_node_describe(g, val->producer, d, sizeof d), s, xf_dtype_name(val->dtype));
    else
        snprintf(buf, n, "%s '%s', %s %s", val->kind == XF_VALUE_INPUT ? "input" : "constant",
                 val->name ? val->name : "", s, xf_dtype_name(val->dtype));
}

xf_status xf_graph_mem_check(const xf_graph *g, xf_error *err)
{
    size_t total = 0, largest = 0;
    int big = -1;
    for (int v = 0; v < g->n_values; v++) {
        size_t bytes;
        /* every value of a graph passed xf_shape_check when it was added:
         * each is below 2^62 bytes, so the sum of a graph's values (at most
         * INT_MAX of them) is kept from wrapping by saturating */
        if (xf_shape_check(&g->values[v].shape, g->values[v].dtype, NULL, &bytes, err) != XF_OK)
            return err ? err->code : XF_ERR_SHAPE;
        total = total > SIZE_MAX - bytes ? SIZE_MAX : total + bytes;
        if (big < 0 || bytes > largest) largest = bytes, big = v;
    }
    size_t limit = xf_mem_limit();
    if (total <= limit) return XF_OK;
    char what[512], t[32], b[32], l[32];
    describe_value(g, big, what, sizeof what);
    return XF_FAIL(err, XF_ERR_NOMEM,
                   "the graph's tensors need %s, over the memory limit of %s (set it with "
                   "--mem-limit or RLFLOW_MEM_LIMIT); the largest is %s, %s",
                   xf_bytes_str((double)total, t, sizeof t), xf_bytes_str((double)limit, l, sizeof l),
                   what, xf_bytes_str((double)largest, b, sizeof b));
}
