/*
 * import_pb.c — the protobuf-c allocator the importer decodes with: every
 * allocation of an unpack goes through the ir hook (xf_malloc/xf_free), so
 * that out-of-memory tests reach the decoder too, and a failed one is
 * remembered, so that the importer reports it as XF_ERR_NOMEM rather than
 * as a malformed file; and the nesting check before decoding
 * (ox_pb_unpack_model): a walk of the wire format led by protobuf-c's
 * message descriptors, descending only into fields that are messages, its
 * recursion bounded by IMP_PB_MAX_DEPTH, each byte read once. The same walk
 * tells whether any tensor of a model keeps its data in an external file
 * (ox_pb_external_data), without decoding the model.
 */
#include "import_internal.h"

/* A base-128 varint at *pos of p[0..len); 0 when it runs past the end. */
static int varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && *pos < len; shift += 7) {
        uint8_t b = p[(*pos)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return 1;
    }
    return 0;
}

/* TensorProto.data_location's field number and its EXTERNAL value. */
enum { DATA_LOCATION_FIELD = 14 };

/* 1 when message `d` in p[0..len) nests no deeper than IMP_PB_MAX_DEPTH
 * (it is at `depth`); malformed bytes are left to the decoder (0 is only
 * for depth). *external is set when a TensorProto in it says its data are
 * in an external file. */
static int shallow(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len, int depth,
                   int *external)
{
    if (depth > IMP_PB_MAX_DEPTH) return 0;
    size_t pos = 0;
    while (pos < len) {
        uint64_t key, n;
        if (!varint(p, len, &pos, &key)) return 1;
        switch (key & 7) {
        case 0:
            if (!varint(p, len, &pos, &n)) return 1;
            if (d == &onnx__tensor_proto__descriptor && key >> 3 == DATA_LOCATION_FIELD &&
                n == (uint64_t)ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
                *external = 1;
            break;
        case 1: pos += 8; break;
        case 5: pos += 4; break;
        case 2: {
            if (!varint(p, len, &pos, &n) || n > len - pos) return 1;
            const ProtobufCFieldDescriptor *f =
                key >> 3 <= UINT32_MAX
                    ? protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3))
                    : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
                !shallow((const ProtobufCMessageDescriptor *)f->descriptor, p + pos, (size_t)n,
                         depth + 1, external))
                return 0;
            pos += (size_t)n;
            break;
        }
        default: return 1; /* groups: not ONNX; the decoder refuses them */
        }
    }
    return 1;
}

Onnx__ModelProto *ox_pb_unpack_model(imp_pb_alloc *a, size_t len, const uint8_t *buf,
                                      int *too_deep)
{
    int external = 0;
    *too_deep = !shallow(&onnx__model_proto__descriptor, buf, len, 0, &external);
    return *too_deep ? NULL : onnx__model_proto__unpack(&a->base, len, buf);
}

int ox_pb_external_data(const uint8_t *buf, size_t len)
{
    int external = 0;
    if (!shallow(&onnx__model_proto__descriptor, buf, len, 0, &external)) return 1;
    return external;
}

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

void ox_pb_alloc_init(imp_pb_alloc *a)
{
    a->base.alloc = pb_alloc;
    a->base.free = pb_free;
    a->base.allocator_data = a;
    a->failed = 0;
}
