/*
 * import_tensor.c — onnx.TensorProto -> xf_tensor: dims, dtype, data from
 * raw_data (little-endian bytes), from the typed repeated fields, or from an
 * external data file next to the model (external_read.c). Every size is checked against the
 * element count before anything is allocated, so a corrupt or hostile file
 * gives an error naming the tensor instead of a huge allocation or an
 * out-of-bounds read. Also xf_onnx_load_tensor for test_data_set files.
 */
#include "import_internal.h"
#include "onnx_dtype_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tensors larger than this are refused (1 TiB): a corrupt header, not a model. */
#define MAX_TENSOR_BYTES ((uint64_t)1 << 40)

char *ox_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *src = slash ? path : ".";
    size_t n = slash ? (size_t)(slash - path) : 1;
    if (slash && n == 0) n = 1; /* "/model.onnx" -> "/" */
    char *d = xf_malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, src, n);
    d[n] = '\0';
    return d;
}

xf_status ox_read_file(const char *path, uint8_t **buf, size_t *len, xf_error *err)
{
    *buf = NULL;
    *len = 0;
    FILE *f;
    xf_status st = xf_infile_open(path, &f, err);
    if (st != XF_OK) return st;
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = xf_malloc(cap);
    while (b) {
        if (n == cap) {
            uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : xf_realloc(b, cap * 2);
            if (!nb) {
                xf_free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (!b)
        st = XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory reading the file", path);
    else if (ferror(f)) {
        st = XF_FAIL(err, XF_ERR_IO, "%s: read error: %s", path, strerror(errno));
        xf_free(b);
    } else {
        *buf = b;
        *len = n;
    }
    fclose(f);
    return st;
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* Converts little-endian elements of `size` bytes to host order in place. */
static void from_little_endian(void *data, size_t n_elems, size_t size)
{
    if (size == 1 || host_is_little_endian()) return;
    uint8_t *p = data;
    for (size_t e = 0; e < n_elems; e++, p += size)
        for (size_t i = 0; i < size / 2; i++) {
            uint8_t t = p[i];
            p[i] = p[size - 1 - i];
            p[size - 1 - i] = t;
        }
}

/* Number of values in the typed repeated field that holds dtype `dt`. */
static size_t typed_count(const Onnx__TensorProto *tp, xf_dtype dt)
{
    switch (dt) {
    case XF_F32: return tp->n_float_data;
    case XF_I64: return tp->n_int64_data;
    case XF_I32:
    case XF_BOOL:
    case XF_F16: /* each value's 16 bits in one int32 */
    case XF_I8:
    case XF_U8: return tp->n_int32_data;
    case XF_F64: return tp->n_double_data;
    default: return 0;
    }
}

/* Copies the typed repeated field (numel values, already counted) into dst. */
static void read_typed(const Onnx__TensorProto *tp, xf_dtype dt, void *dst, size_t numel)
{
    if (numel == 0) return;
    switch (dt) {
    case XF_F32: memcpy(dst, tp->float_data, numel * sizeof(float)); break;
    case XF_I64: memcpy(dst, tp->int64_data, numel * sizeof(int64_t)); break;
    case XF_I32: memcpy(dst, tp->int32_data, numel * sizeof(int32_t)); break;
    case XF_BOOL:
        for (size_t i = 0; i < numel; i++) ((uint8_t *)dst)[i] = tp->int32_data[i] != 0;
        break;
    case XF_F16:
        for (size_t i = 0; i < numel; i++) ((uint16_t *)dst)[i] = (uint16_t)tp->int32_data[i];
        break;
    case XF_I8:
        for (size_t i = 0; i < numel; i++) ((int8_t *)dst)[i] = (int8_t)tp->int32_data[i];
        break;
    case XF_U8:
        for (size_t i = 0; i < numel; i++) ((uint8_t *)dst)[i] = (uint8_t)tp->int32_data[i];
        break;
    case XF_F64: memcpy(dst, tp->double_data, numel * sizeof(double)); break;
    default: break;
    }
}

xf_status ox_tensor_decode(const Onnx__TensorProto *tp, const char *what, const char *base_dir,
                            xf_tensor *t, xf_error *err)
{
    imp_ext_src src = {base_dir, NULL};
    return ox_tensor_decode_src(tp, what, &src, t, NULL, err);
}

xf_status ox_tensor_decode_src(const Onnx__TensorProto *tp, const char *what,
                                const imp_ext_src *src, xf_tensor *t, int *borrowed,
                                xf_error *err)
{
    if (borrowed) *borrowed = 0;
    memset(t, 0, sizeof *t);
    int code = tp->has_data_type ? tp->data_type : 0;
    xf_dtype dt = xf_onnx_dtype_of_code(code);
    if (dt == XF_DTYPE_INVALID)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s has dtype %s; rlflow supports " OX_DTYPES_SUPPORTED, what,
                       ox_dtype_name(code));
    if (tp->n_dims > XF_MAX_DIMS)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s has rank %zu; rlflow supports at most %d",
                       what, tp->n_dims, XF_MAX_DIMS);
    if (tp->segment)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s is a segment of a larger tensor", what);
    size_t esize = xf_dtype_size(dt);
    uint64_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0)
            return XF_FAIL(err, XF_ERR_PARSE, "%s: dimension %zu is negative (%lld)", what, i,
                           (long long)tp->dims[i]);
        if (tp->dims[i] > 0 && numel > MAX_TENSOR_BYTES / esize / (uint64_t)tp->dims[i])
            return XF_FAIL(err, XF_ERR_PARSE, "%s: its dims describe an impossibly large tensor",
                           what);
        numel *= (uint64_t)tp->dims[i];
    }
    size_t bytes = (size_t)numel * esize;
    int external = tp->has_data_location &&
                   tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (tp->has_raw_data && !external && tp->raw_data.len != bytes)
        return XF_FAIL(err, XF_ERR_PARSE, "%s: raw_data has %zu bytes, its shape needs %zu", what,
                       tp->raw_data.len, bytes);
    if (!external && !tp->has_raw_data && typed_count(tp, dt) != numel)
        return XF_FAIL(err, XF_ERR_PARSE, "%s: has %zu values, its shape needs %llu%s", what,
                       typed_count(tp, dt), (unsigned long long)numel,
                       typed_count(tp, dt) == 0 ? " (no raw_data and no typed data)" : "");
    xf_shape sh;
    memset(&sh, 0, sizeof sh);
    sh.rank = (int)tp->n_dims;
    for (size_t i = 0; i < tp->n_dims; i++) sh.dims[i] = tp->dims[i];
    if (external && src->mem && borrowed && host_is_little_endian()) {
        const void *data;
        xf_status st = ox_ext_lookup(tp, what, src->mem, bytes, &data, err);
        if (st != XF_OK) return st;
        t->dtype = dt;
        t->shape = sh;
        t->data = (void *)(uintptr_t)data;
        *borrowed = 1;
        return XF_OK;
    }
    xf_status st = xf_tensor_alloc(t, dt, &sh, err);
    if (st != XF_OK) return st;
    if (external && src->mem) {
        const void *data;
        st = ox_ext_lookup(tp, what, src->mem, bytes, &data, err);
        if (st == XF_OK && bytes) memcpy(t->data, data, bytes);
    } else if (external)
        st = ox_ext_read(tp, what, src->base_dir, t->data, bytes, err);
    else if (tp->has_raw_data) {
        if (bytes) memcpy(t->data, tp->raw_data.data, bytes);
    } else
        read_typed(tp, dt, t->data, (size_t)numel);
    if (st != XF_OK) {
        xf_tensor_free(t);
        return st;
    }
    if (external || tp->has_raw_data) {
        from_little_endian(t->data, (size_t)numel, esize);
        if (dt == XF_BOOL)
            for (size_t i = 0; i < bytes; i++) ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
    }
    return XF_OK;
}

xf_status xf_onnx_load_tensor(const char *path, xf_tensor *t, char **name, xf_error *err)
{
    memset(t, 0, sizeof *t);
    if (name) *name = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    xf_status st = ox_read_file(path, &buf, &len, err);
    if (st != XF_OK) return st;
    imp_pb_alloc pa;
    ox_pb_alloc_init(&pa);
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(&pa.base, len, buf);
    xf_free(buf);
    if (!tp && pa.failed) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory decoding", path);
    if (!tp) return XF_FAIL(err, XF_ERR_PARSE, "%s: not a valid serialized ONNX TensorProto", path);
    char *dir = ox_dirname(path);
    char what[1024];
    snprintf(what, sizeof what, "%s: tensor '%s'", path, ox_str(tp->name));
    if (!dir)
        st = XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", path);
    else
        st = ox_tensor_decode(tp, what, dir, t, err);
    if (st == XF_OK && name) {
        size_t n = strlen(ox_str(tp->name)) + 1;
        *name = xf_malloc(n);
        if (*name)
            memcpy(*name, ox_str(tp->name), n);
        else {
            xf_tensor_free(t);
            st = XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", path);
        }
    }
    xf_free(dir);
    onnx__tensor_proto__free_unpacked(tp, &pa.base);
    return st;
}
