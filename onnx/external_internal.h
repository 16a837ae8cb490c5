/*
 * external_internal.h — private to the ONNX module: tensors in ONNX's external-data
 * layout (TensorProto.data_location = EXTERNAL with external_data entries
 * location / offset / length), shared by import (external_read.c) and
 * export (external_write.c).
 *
 * Protobuf cannot encode a message over 2 GiB, so big models keep their
 * weights in a separate file next to the model. A location is a path
 * relative to the model's directory; one that is absolute or climbs out of
 * it with '..' is refused on both sides.
 *
 * A model exported but not yet written (xf_onnx_writer) is read back from
 * memory: its external data is then an imp_ext_mem, the list of segments the
 * data file will hold, and the tensors read back borrow those bytes instead
 * of copying them, so the check costs no second copy of the weights.
 */
#ifndef XF_ONNX_EXTERNAL_INTERNAL_H
#define XF_ONNX_EXTERNAL_INTERNAL_H

#include "onnx.h"
#include "onnx.pb-c.h"

/* Offsets of external tensors are multiples of this, so that a reader can
 * memory-map each tensor (ONNX Runtime does for aligned offsets). */
#define XF_ONNX_EXT_ALIGN 4096

/* One tensor's bytes in the data file: little-endian, `length` bytes at
 * `offset` (onnx.h's extent). */
typedef xf_onnx_extent imp_ext_seg;

/* The data file of a model held in memory: segments by increasing offset. */
typedef struct imp_ext_mem {
    const char *location;
    const imp_ext_seg *segs;
    size_t n;
} imp_ext_mem;

/* Where external tensors come from: files under `base_dir` (NULL: refused),
 * or, when `mem` is set, that in-memory data file. */
typedef struct imp_ext_src {
    const char *base_dir;
    const imp_ext_mem *mem;
} imp_ext_src;

/* 1 when `loc` is a relative path that stays inside the model's directory
 * (not empty, not absolute, no '..' component). */
int ox_ext_location_ok(const char *loc);

/* Reads the external data of tensor `tp` (`bytes` long, little-endian as
 * stored) from its file under src->base_dir into `dst`, in bounded chunks:
 * the location must stay inside the directory, and offset + length must lie
 * within the file. Errors name `what` (the tensor) and the path. */
xf_status ox_ext_read(const Onnx__TensorProto *tp, const char *what, const char *base_dir,
                       void *dst, size_t bytes, xf_error *err);
/* The bytes of tensor `tp` in the in-memory data file `mem` (the segment
 * with its offset and length), without copying. */
xf_status ox_ext_lookup(const Onnx__TensorProto *tp, const char *what, const imp_ext_mem *mem,
                         size_t bytes, const void **data, xf_error *err);

#endif /* XF_ONNX_EXTERNAL_INTERNAL_H */
