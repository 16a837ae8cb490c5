/*
 * external_write.c — the exporter's side of ONNX external data, and the
 * model writer (xf_onnx_writer, xf_onnx_save_with).
 *
 * Externalising turns every raw_data initializer of at least min_bytes into
 * an external reference (data_location EXTERNAL; location, offset, length)
 * and records where its bytes come from: the graph's own buffers, never
 * copied. Tensors of 1 MiB and more start at offsets aligned to 64 KiB, so
 * a reader may memory-map them; smaller ones follow one another.
 *
 * Writing streams those bytes into the data file and the model, packed
 * piece by piece, into its file (no copy of either in memory), and commits
 * the two together (xf_outfile_commit_all): a failure
 * while writing either leaves both destinations as they were. A model read
 * back before writing takes its external tensors from the segments (see
 * external_internal.h), so the check holds no second copy of the weights; a model
 * that keeps symbolic dims (xf_onnx_save_options.dynamic) is read back at
 * whichever sizes the caller asks, from the same bytes that are written.
 *
 * Sharing (xf_onnx_save_options.shared) makes references instead of
 * segments for the initializers whose buffer a shared data file already
 * holds: many models (the candidates the target times) then point at one
 * copy of their common weights.
 */
#include "export_internal.h"
#include "import_internal.h"
#include "onnx_dtype_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Tensors this big are aligned in the data file... */
#define ALIGN_MIN_BYTES ((size_t)1 << 20)
/* ...to this (a multiple of the page size and of Windows' mapping
 * granularity). */
#define ALIGN_BYTES ((uint64_t)64 << 10)
/* Zeros written for padding at a time. */
#define PAD_CHUNK 4096

xf_onnx_save_options xf_onnx_default_save_options(void)
{
    xf_onnx_save_options o;
    memset(&o, 0, sizeof o);
    o.external_min_bytes = 1024;
    o.inline_limit = MAX_PROTO_BYTES;
    return o;
}

static Onnx__StringStringEntryProto *entry(xf_export *x, const char *key, const char *value)
{
    Onnx__StringStringEntryProto *e = ox_export_alloc(x, sizeof *e);
    char *k = xf_arena_strdup(&x->arena, key), *v = xf_arena_strdup(&x->arena, value);
    if (!e || !k || !v) {
        ox_export_fail_nomem(x);
        return NULL;
    }
    onnx__string_string_entry_proto__init(e);
    e->key = k;
    e->value = v;
    return e;
}

/* Makes initializer t an external reference: `len` bytes at `off` of the
 * file `loc`. */
static xf_status make_external(xf_export *x, Onnx__TensorProto *t, const char *loc, uint64_t off,
                               size_t len)
{
    char offset[24], length[24];
    snprintf(offset, sizeof offset, "%llu", (unsigned long long)off);
    snprintf(length, sizeof length, "%zu", len);
    Onnx__StringStringEntryProto **kv = ox_export_alloc(x, sizeof *kv * 3);
    if (!kv || !(kv[0] = entry(x, "location", loc)) || !(kv[1] = entry(x, "offset", offset)) ||
        !(kv[2] = entry(x, "length", length)))
        return ox_export_fail_nomem(x);
    t->has_raw_data = 0;
    t->raw_data.len = 0;
    t->raw_data.data = NULL;
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->n_external_data = 3;
    t->external_data = kv;
    return XF_OK;
}

xf_status ox_export_externalize(xf_export *x, xf_export_layout *layout)
{
    const char *loc = layout->location ? layout->location : layout->auto_location;
    if (!loc)
        return XF_FAIL(x->err, XF_ERR_UNSUPPORTED,
                       "the model is over %zu bytes and needs an external data file, but it is "
                       "not being written to a file",
                       layout->inline_limit);
    layout->segs = xf_malloc(sizeof *layout->segs * (x->inits.n + 1));
    if (!layout->segs) return ox_export_fail_nomem(x);
    uint64_t off = 0;
    for (size_t i = 0; i < x->inits.n; i++) {
        Onnx__TensorProto *t = x->inits.items[i];
        size_t len = t->raw_data.len;
        if (!t->has_raw_data || len < layout->min_bytes || len == 0) continue;
        if (len >= ALIGN_MIN_BYTES) off = (off + ALIGN_BYTES - 1) / ALIGN_BYTES * ALIGN_BYTES;
        const void *data = t->raw_data.data;
        if (make_external(x, t, loc, off, len) != XF_OK) return x->st;
        layout->segs[layout->n_segs++] = (imp_ext_seg){off, len, data};
        off += len;
    }
    layout->data_bytes = off;
    layout->used_location = loc;
    return XF_OK;
}

static int extent_cmp(const void *key, const void *e)
{
    uintptr_t a = (uintptr_t)key, b = (uintptr_t)((const xf_onnx_extent *)e)->data;
    return (a > b) - (a < b);
}

/* Whether input k of an operator `op` is a weight its runtime reads as it
 * is (xf_onnx_shared_ref.weight). */
static int weight_input(const char *op, size_t k)
{
    if (!strcmp(op, "MatMul")) return k == 1;
    if (!strcmp(op, "Gather")) return k == 0;
    if (!strcmp(op, "Gemm") || !strcmp(op, "Conv") || !strcmp(op, "ConvTranspose") ||
        !strcmp(op, "LayerNormalization"))
        return k == 1 || k == 2;
    return 0;
}

static uint64_t reader_key(const char *name)
{
    return xf_htab_key(xf_hash_bytes(0x5BD1E995ull, name, strlen(name)));
}

/* How the model's nodes read each name: bit 0 some node as a weight, bit 1
 * some node otherwise (names whose hashes collide share their bits, which
 * only ever withholds the weight mark). */
static xf_status mark_readers(xf_export *x, xf_htab *readers)
{
    for (size_t i = 0; i < x->nodes.n; i++) {
        const Onnx__NodeProto *n = x->nodes.items[i];
        for (size_t k = 0; k < n->n_input; k++) {
            if (!n->input[k][0]) continue;
            uint64_t *bits;
            if (xf_htab_put(readers, reader_key(n->input[k]), &bits, NULL, NULL) != XF_OK)
                return ox_export_fail_nomem(x);
            *bits |= weight_input(n->op_type, k) ? 1u : 2u;
        }
    }
    return XF_OK;
}

xf_status ox_export_share(xf_export *x, xf_export_layout *layout)
{
    const xf_onnx_shared_data *sh = layout->shared;
    layout->refs = xf_malloc(sizeof *layout->refs * (x->inits.n + 1));
    if (!layout->refs) return ox_export_fail_nomem(x);
    xf_htab readers;
    xf_htab_init(&readers);
    if (mark_readers(x, &readers) != XF_OK) {
        xf_htab_free(&readers);
        return x->st;
    }
    for (size_t i = 0; i < x->inits.n; i++) {
        Onnx__TensorProto *t = x->inits.items[i];
        if (!t->has_raw_data || !t->raw_data.len) continue;
        const xf_onnx_extent *e =
            bsearch(t->raw_data.data, sh->extents, sh->n, sizeof *sh->extents, extent_cmp);
        if (!e || e->length != t->raw_data.len) continue;
        xf_onnx_shared_ref *r = &layout->refs[layout->n_refs];
        r->name = t->name;
        r->data = e->data;
        r->dtype = xf_onnx_dtype_of_code(t->data_type);
        int64_t dims[XF_MAX_DIMS] = {0};
        for (size_t k = 0; k < t->n_dims && k < XF_MAX_DIMS; k++) dims[k] = t->dims[k];
        r->shape = xf_shape_make((int)t->n_dims, dims);
        const uint64_t *bits = xf_htab_get(&readers, reader_key(t->name));
        r->weight = bits && *bits == 1;
        if (make_external(x, t, sh->location, e->offset, (size_t)e->length) != XF_OK) break;
        layout->n_refs++;
    }
    xf_htab_free(&readers);
    return x->st;
}

struct xf_onnx_writer {
    xf_export x; /* the model's messages and its copied constants */
    xf_export_layout layout;
    char *path;
    char *auto_location; /* "<model file>.data" */
    char *data_path;     /* <model dir>/<location>, when there is external data */
};

void xf_onnx_writer_free(xf_onnx_writer *w)
{
    if (!w) return;
    ox_export_free(&w->x);
    xf_free(w->layout.segs);
    xf_free(w->layout.refs);
    xf_free(w->path);
    xf_free(w->auto_location);
    xf_free(w->data_path);
    xf_free(w);
}

/* The data file's path, next to the model; refused when the model goes to
 * a device or FIFO (there is no directory of its own to put it in), when
 * it would be the model file itself, when it is not a regular file or a
 * new path, or when it is a file this run must not write over (its input
 * model, its rules database: xf_outfile_check). */
static xf_status plan_data_path(xf_onnx_writer *w, xf_error *err)
{
    const char *loc = w->layout.used_location;
    struct stat sb;
    if (stat(w->path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return XF_FAIL(err, XF_ERR_INVALID,
                       "%s: the model needs an external data file ('%s'), which cannot go next "
                       "to a device, FIFO or directory; write the model to a regular file",
                       w->path, loc);
    char *dir = ox_dirname(w->path);
    size_t n = dir ? strlen(dir) + strlen(loc) + 2 : 0;
    w->data_path = dir ? xf_malloc(n) : NULL;
    if (!w->data_path) {
        xf_free(dir);
        return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", w->path);
    }
    snprintf(w->data_path, n, "%s/%s", dir, loc);
    xf_free(dir);
    const char *base = strrchr(w->path, '/');
    base = base ? base + 1 : w->path;
    struct stat db;
    if (strcmp(base, loc) == 0 ||
        (stat(w->data_path, &db) == 0 && stat(w->path, &sb) == 0 && db.st_dev == sb.st_dev &&
         db.st_ino == sb.st_ino))
        return XF_FAIL(err, XF_ERR_INVALID,
                       "%s: the external data file '%s' would be the model file itself; name "
                       "another file",
                       w->path, loc);
    /* a device would swallow the weights (the model then cannot be read),
     * a FIFO would block: a regular file or a new path only */
    if (stat(w->data_path, &db) == 0 && !S_ISREG(db.st_mode))
        return XF_FAIL(err, XF_ERR_INVALID,
                       "the external data file '%s' is a %s; the weights go to a regular file "
                       "or a new path",
                       w->data_path,
                       S_ISCHR(db.st_mode)    ? "character device"
                       : S_ISBLK(db.st_mode)  ? "block device"
                       : S_ISFIFO(db.st_mode) ? "FIFO"
                       : S_ISDIR(db.st_mode)  ? "directory"
                                              : "file that is not a plain file");
    return xf_outfile_check(w->data_path, err);
}

xf_status xf_onnx_writer_open(const xf_graph *g, const char *path,
                              const xf_onnx_save_options *o, xf_onnx_writer **out, xf_error *err)
{
    int fail_sym;
    return ox_export_writer_open(g, path, o, out, &fail_sym, err);
}

xf_status ox_export_writer_open(const xf_graph *g, const char *path, const xf_onnx_save_options *o,
                                xf_onnx_writer **out, int *fail_sym, xf_error *err)
{
    *out = NULL;
    *fail_sym = -1;
    xf_onnx_save_options def = xf_onnx_default_save_options();
    if (!o) o = &def;
    if (!path || !*path) return XF_FAIL(err, XF_ERR_INVALID, "output model: empty path");
    if (o->external_data && !ox_ext_location_ok(o->external_data))
        return XF_FAIL(err, XF_ERR_INVALID,
                       "%s: external data file '%s' is refused: give a path relative to the "
                       "model's directory, inside it (no absolute path, no '..')",
                       path, o->external_data);
    xf_onnx_writer *w = xf_calloc(1, sizeof *w);
    if (!w) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", path);
    ox_export_init(&w->x, g, err);
    w->x.dyn = o->dynamic;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base) + 6;
    w->path = xf_strdup(path);
    w->auto_location = xf_malloc(n);
    if (!w->path || !w->auto_location) {
        xf_onnx_writer_free(w);
        return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", path);
    }
    snprintf(w->auto_location, n, "%s.data", base);
    w->layout.location = o->external_data;
    w->layout.auto_location = w->auto_location;
    w->layout.min_bytes = o->external_min_bytes;
    w->layout.inline_limit = o->inline_limit;
    w->layout.shared = o->shared && o->shared->n ? o->shared : NULL;
    xf_status st = ox_export_pack(&w->x, &w->layout, NULL, NULL);
    *fail_sym = st == XF_ERR_UNSUPPORTED ? w->x.fail_sym : -1;
    if (st == XF_OK && w->layout.used_location) st = plan_data_path(w, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "%s", path);
        xf_onnx_writer_free(w);
        return st;
    }
    *out = w;
    return XF_OK;
}

void xf_onnx_writer_sizes(const xf_onnx_writer *w, size_t *model_bytes, uint64_t *data_bytes,
                          const char **location)
{
    if (model_bytes) *model_bytes = w->x.packed_size;
    if (data_bytes) *data_bytes = w->layout.data_bytes;
    if (location) *location = w->layout.used_location;
}

size_t xf_onnx_writer_extents(const xf_onnx_writer *w, const xf_onnx_extent **ext)
{
    *ext = w->layout.segs;
    return w->layout.n_segs;
}

size_t xf_onnx_writer_shared(const xf_onnx_writer *w, const xf_onnx_shared_ref **refs)
{
    *refs = w->layout.refs;
    return w->layout.n_refs;
}

/* The name a model read back from memory gives its big inline tensors,
 * borrowed from the graph (no file has it). */
#define READ_BACK_LOCATION "rlflow-read-back.data"

/* Makes the tensors ox_export_externalize moved to READ_BACK_LOCATION
 * inline again, their bytes from the segments in the same order. */
static void inline_again(xf_export *x, const xf_export_layout *tmp)
{
    size_t k = 0;
    for (size_t i = 0; i < x->inits.n && k < tmp->n_segs; i++) {
        Onnx__TensorProto *t = x->inits.items[i];
        if (!t->has_data_location || t->n_external_data != 3 ||
            strcmp(t->external_data[0]->value, READ_BACK_LOCATION) != 0)
            continue;
        t->has_data_location = 0;
        t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT;
        t->n_external_data = 0;
        t->external_data = NULL;
        t->has_raw_data = 1;
        t->raw_data.len = (size_t)tmp->segs[k].length;
        t->raw_data.data = (uint8_t *)(uintptr_t)tmp->segs[k].data;
        k++;
    }
}

xf_status xf_onnx_writer_read_back(xf_onnx_writer *w, const xf_onnx_options *opts,
                                   xf_graph *back, xf_error *err)
{
    xf_graph_init(back);
    /* A model written inline is read back with its big tensors as external
     * data in memory too, so that the import borrows the graph's buffers
     * rather than copying the weights (a BERT-base checked before it is
     * written: 2x its weights less). */
    xf_export_layout tmp;
    memset(&tmp, 0, sizeof tmp);
    const xf_export_layout *lay = &w->layout;
    if (!w->layout.used_location) {
        tmp.location = READ_BACK_LOCATION;
        tmp.min_bytes = w->layout.min_bytes;
        xf_status st = ox_export_externalize(&w->x, &tmp);
        if (st != XF_OK) {
            xf_free(tmp.segs);
            return st;
        }
        lay = &tmp;
    }
    size_t n = onnx__model_proto__get_packed_size(&w->x.model);
    uint8_t *buf = xf_malloc(n ? n : 1);
    xf_status st = buf ? XF_OK
                       : XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory for a %zu-byte model",
                                 w->path, n);
    if (st == XF_OK) {
        size_t len = onnx__model_proto__pack(&w->x.model, buf);
        imp_ext_mem mem = {lay->used_location, lay->segs, lay->n_segs};
        st = ox_load(buf, len, w->path, NULL, lay->used_location ? &mem : NULL, opts, back,
                      err);
    }
    xf_free(buf); /* the import copied what it keeps; commit packs again, into the file */
    if (lay == &tmp) inline_again(&w->x, &tmp);
    xf_free(tmp.segs);
    return st;
}

/* The segments with zero padding between them, as the data file. */
static xf_status write_data(const xf_onnx_writer *w, xf_outfile *f, xf_error *err)
{
    static const uint8_t zeros[PAD_CHUNK];
    uint64_t at = 0;
    for (size_t i = 0; i < w->layout.n_segs; i++) {
        const imp_ext_seg *s = &w->layout.segs[i];
        while (at < s->offset) {
            size_t n = s->offset - at < PAD_CHUNK ? (size_t)(s->offset - at) : PAD_CHUNK;
            if (fwrite(zeros, 1, n, f->f) != n) goto fail;
            at += n;
        }
        if (fwrite(s->data, 1, (size_t)s->length, f->f) != s->length) goto fail;
        at += s->length;
    }
    return XF_OK;
fail:
    return XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", w->data_path, strerror(errno));
}

/* The model packed straight into its file. */
static xf_status write_model(xf_onnx_writer *w, xf_outfile *f, xf_error *err)
{
    if (!ox_export_stream(&w->x, f->f))
        return XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", w->path, strerror(errno));
    return XF_OK;
}

xf_status xf_onnx_writer_commit(xf_onnx_writer *w, xf_error *err)
{
    xf_outfile f[2];
    int n = w->layout.used_location ? 2 : 1;
    xf_outfile *model = &f[n - 1];
    xf_status st = xf_outfile_open(&f[0], n == 2 ? w->data_path : w->path, err);
    if (st != XF_OK) return st;
    if (n == 2 && (st = xf_outfile_open(model, w->path, err)) != XF_OK) {
        xf_outfile_abort(&f[0]);
        return st;
    }
    if (n == 2) st = write_data(w, &f[0], err);
    if (st == XF_OK) st = write_model(w, model, err);
    if (st != XF_OK) {
        for (int i = 0; i < n; i++) xf_outfile_abort(&f[i]);
        return st;
    }
    return xf_outfile_commit_all(f, n, err);
}

xf_status xf_onnx_save_with(const xf_graph *g, const char *path, const xf_onnx_save_options *o,
                            xf_error *err)
{
    xf_onnx_writer *w;
    xf_status st = xf_onnx_writer_open(g, path, o, &w, err);
    if (st != XF_OK) return st;
    st = xf_onnx_writer_commit(w, err);
    xf_onnx_writer_free(w);
    return st;
}
