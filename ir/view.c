/*
 * view.c — what a reshape does to the axes (xf_view_classify): flatten or
 * unflatten leading axes, split or merge the last one, or something else.
 * Rules and the matcher speak of reshapes by these kinds rather than by
 * their target shapes, so a rule found at 2x4x4 applies to a model's
 * [4, 128, 768] -> [512, 768] (ir.h has the definitions).
 */
#include "ir.h"

static int64_t prod(const int64_t *d, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= d[i];
    return p;
}

static int same_dims(const int64_t *a, const int64_t *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* `big` is `small` with its first k axes merged into its first. */
static int merges_lead(const xf_shape *big, const xf_shape *small, int *k)
{
    int kk = big->rank - small->rank + 1;
    if (kk < 2 || small->rank < 1) return 0;
    if (prod(big->dims, kk) != small->dims[0]) return 0;
    if (!same_dims(big->dims + kk, small->dims + 1, small->rank - 1)) return 0;
    *k = kk;
    return 1;
}

/* `big` is `small` with its last axis split in two. */
static int splits_last(const xf_shape *small, const xf_shape *big)
{
    int r = small->rank;
    if (r < 1 || big->rank != r + 1) return 0;
    if (!same_dims(small->dims, big->dims, r - 1)) return 0;
    return big->dims[r - 1] * big->dims[r] == small->dims[r - 1];
}

xf_view_kind xf_view_classify(const xf_shape *in, const xf_shape *out, int *k)
{
    int kk = 0;
    *k = 0;
    if (merges_lead(in, out, &kk)) {
        *k = kk;
        return XF_VIEW_FLATTEN;
    }
    if (merges_lead(out, in, &kk)) {
        *k = kk;
        return XF_VIEW_UNFLATTEN;
    }
    if (splits_last(in, out)) return XF_VIEW_SPLIT_LAST;
    if (splits_last(out, in)) return XF_VIEW_MERGE_LAST;
    return XF_VIEW_GENERAL;
}

const char *xf_view_kind_name(xf_view_kind kind)
{
    switch (kind) {
    case XF_VIEW_FLATTEN: return "flatten";
    case XF_VIEW_UNFLATTEN: return "unflatten";
    case XF_VIEW_SPLIT_LAST: return "split_last";
    case XF_VIEW_MERGE_LAST: return "merge_last";
    default: return "general";
    }
}
