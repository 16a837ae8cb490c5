/*
 * import_pb.c — the protobuf-c allocator the importer decodes with: every
 * allocation of an unpack goes through the ir hook (xf_malloc/xf_free), so
 * that out-of-memory tests reach the decoder too, and a failed one is
 * remembered, so that the importer reports it as XF_ERR_NOMEM rather than
 * as a malformed file.
 */
#include "import_internal.h"

static void *pb_alloc(void *data, size_t size)
{
    imp_pb_alloc *a = data;
    void *p = xf_malloc(size);
    if (!p) a->failed = 1;
    return p;
}

static void pb_free(void *data, void *p)
{
    (void)data;
    xf_free(p);
}

void imp_pb_alloc_init(imp_pb_alloc *a)
{
    a->base.alloc = pb_alloc;
    a->base.free = pb_free;
    a->base.allocator_data = a;
    a->failed = 0;
}
