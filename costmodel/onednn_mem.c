/*
 * onednn_mem.c — oneDNN memory descriptors for rlflow tensors: the dense
 * row-major f32 layout every reference kernel and every graph boundary
 * uses, the test of whether a descriptor is that layout (so a value can be
 * handed to the reference kernel or reshaped without a copy), and buffer
 * sizes (blocked layouts pad channels, so they can exceed numel*4).
 */
#include <string.h>

#include "onednn_internal.h"

void cm_onednn_md_plain_dims(dnnl_memory_desc_t *md, int ndims, const int64_t *dims)
{
    dnnl_dims_t d, strides;
    if (ndims == 0) {
        d[0] = 1;
        ndims = 1;
    } else {
        for (int i = 0; i < ndims; i++) d[i] = dims[i];
    }
    dnnl_dim_t s = 1;
    for (int i = ndims - 1; i >= 0; i--) {
        strides[i] = s;
        s *= d[i] > 0 ? d[i] : 1;
    }
    memset(md, 0, sizeof *md);
    /* Cannot fail for ndims <= DNNL_MAX_NDIMS and non-negative dims. */
    dnnl_memory_desc_init_by_strides(md, ndims, d, dnnl_f32, strides);
}

void cm_onednn_md_plain(dnnl_memory_desc_t *md, const xf_shape *s)
{
    cm_onednn_md_plain_dims(md, s->rank, s->dims);
}

void cm_onednn_md_any(dnnl_memory_desc_t *md, const xf_shape *s)
{
    dnnl_dims_t d;
    int nd = s->rank ? s->rank : 1;
    d[0] = 1;
    for (int i = 0; i < s->rank; i++) d[i] = s->dims[i];
    memset(md, 0, sizeof *md);
    /* Cannot fail for ndims <= DNNL_MAX_NDIMS and non-negative dims. */
    dnnl_memory_desc_init_by_tag(md, nd, d, dnnl_f32, dnnl_format_tag_any);
}

int cm_onednn_md_is_plain(const dnnl_memory_desc_t *md)
{
    if (md->format_kind != dnnl_blocked || md->data_type != dnnl_f32 || md->offset0 != 0)
        return 0;
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    if (b->inner_nblks != 0) return 0;
    dnnl_dim_t s = 1;
    for (int i = md->ndims - 1; i >= 0; i--) {
        if (md->padded_dims[i] != md->dims[i] || md->padded_offsets[i] != 0) return 0;
        /* A dim of size 1 may carry any stride. */
        if (md->dims[i] != 1 && b->strides[i] != s) return 0;
        s *= md->dims[i];
    }
    return 1;
}

size_t cm_onednn_md_bytes(const dnnl_memory_desc_t *md)
{
    size_t n = dnnl_memory_desc_get_size(md);
    return n ? n : 1;
}
