/*
 * share.c — one copy of the weights for every ONNX Runtime session of the
 * target.
 *
 * The arbiter times a model's candidates against the model itself; each
 * candidate borrows most of its weights from the model (rlflow's graphs
 * share constant buffers, xf_graph_clone_shared). Handed to ONNX Runtime as
 * serialised models, every session would hold its own copy of the weights
 * and its own prepacked forms of them (MLAS packs a MatMul's constant B
 * once per session): over 1.3x the weights per session, and the arbiter
 * kept a dozen sessions alive (a BERT-base was killed at 24 GB). Here:
 *
 *  - xf_target_share_weights writes the model's constants of 1 KiB and more
 *    once into weights.data in a scratch directory and keeps, sorted by
 *    buffer, where each lies;
 *  - a graph whose constants include such buffers is written as a small
 *    model file in that directory referencing weights.data for them (its
 *    own new constants go to a data file of its own, so that ONNX Runtime
 *    maps rather than parses them), and its session gets each shared
 *    buffer as an initializer over rlflow's memory (AddInitializer: no
 *    copy) and is created with one prepacked-weights container for the
 *    whole target, in which the prepacked form of a shared initializer is
 *    made by the first session and used by all the others; the model files
 *    are removed as soon as the session exists.
 *
 * Measured on a BERT-base-sized model (438 MB of weights, 1 thread): three
 * sessions of it took 2.24 GB from the serialised model, 0.83 GB this way
 * (0.44 GB of it rlflow's own copy); a session is created in 0.2-0.4 s.
 *
 * The same scratch directory takes a model over protobuf's 2 GiB limit that
 * shares nothing: it is written there with external data and opened from
 * the file, so the target times models of any size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/onnx.h"
#include "target/model_internal.h"

#define SHARE_MIN_BYTES 1024 /* smaller constants stay in each model */
#define DATA_FILE "weights.data"

struct xf_target_share {
    char dir[4096];          /* scratch directory, "" until made */
    xf_onnx_extent *ext;     /* the shared buffers, sorted by address */
    size_t n;
    xf_onnx_shared_data shared;
    uint64_t bytes;          /* bytes in weights.data */
    OrtPrepacked *container; /* prepacked forms of the shared initializers */
    unsigned next;           /* numbers the model files */
};

/* The scratch directory, made on first use under $TMPDIR (else /tmp). */
static xf_status scratch_dir(xf_target_share *s, xf_error *err)
{
    return s->dir[0] ? XF_OK : target_scratch_make(s->dir, sizeof s->dir, err);
}

static void path_in(const xf_target_share *s, const char *file, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", s->dir, file);
}

static void remove_dir(xf_target_share *s)
{
    target_scratch_remove(s->dir);
    s->dir[0] = '\0';
}

static void drop_registry(xf_target *t)
{
    xf_target_share *s = t->share;
    if (s->container) t->ort.api.ReleasePrepackedWeightsContainer(s->container);
    s->container = NULL;
    xf_free(s->ext);
    s->ext = NULL;
    s->n = 0;
    s->bytes = 0;
    char p[4200];
    if (s->dir[0]) {
        path_in(s, DATA_FILE, p, sizeof p);
        remove(p);
    }
}

void target_share_free(xf_target *t)
{
    if (!t->share) return;
    drop_registry(t);
    remove_dir(t->share);
    xf_free(t->share);
    t->share = NULL;
}

static int ext_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const xf_onnx_extent *)a)->data;
    uintptr_t y = (uintptr_t)((const xf_onnx_extent *)b)->data;
    return (x > y) - (x < y);
}

static xf_status ensure_share(xf_target *t, xf_error *err)
{
    if (t->share) return XF_OK;
    t->share = xf_calloc(1, sizeof *t->share);
    return t->share ? XF_OK : XF_FAIL(err, XF_ERR_NOMEM, "target: out of memory");
}

xf_status xf_target_share_weights(xf_target *t, const xf_graph *g, xf_error *err)
{
    xf_status st = ensure_share(t, err);
    if (st != XF_OK) return st;
    xf_target_share *s = t->share;
    drop_registry(t);
    if ((st = scratch_dir(s, err)) != XF_OK) return st;
    char model[4200];
    path_in(s, "input.onnx", model, sizeof model);
    xf_onnx_save_options so = xf_onnx_default_save_options();
    so.external_data = DATA_FILE;
    so.external_min_bytes = SHARE_MIN_BYTES;
    xf_onnx_writer *w = NULL;
    st = xf_onnx_writer_open(g, model, &so, &w, err);
    if (st == XF_OK) st = xf_onnx_writer_commit(w, err);
    if (st == XF_OK) {
        const xf_onnx_extent *e;
        size_t n = xf_onnx_writer_extents(w, &e);
        s->ext = xf_malloc(sizeof *s->ext * (n + 1));
        if (!s->ext) st = XF_FAIL(err, XF_ERR_NOMEM, "target: out of memory");
        else if (n) memcpy(s->ext, e, sizeof *e * n);
        s->n = s->ext ? n : 0;
        xf_onnx_writer_sizes(w, NULL, &s->bytes, NULL);
    }
    xf_onnx_writer_free(w);
    remove(model);
    if (st == XF_OK) {
        qsort(s->ext, s->n, sizeof *s->ext, ext_cmp);
        s->shared.location = DATA_FILE;
        s->shared.n = s->n;
        s->shared.extents = s->ext;
        const xf_ort_api *a = &t->ort.api;
        st = target_ort_check(a, a->CreatePrepackedWeightsContainer(&s->container), err,
                          "creating the prepacked-weights container");
    }
    if (st != XF_OK) {
        xf_error_prefix(err, "target: sharing the weights (%s of them) with its sessions in %s",
                        "the model's", s->dir);
        drop_registry(t);
    }
    return st;
}

void xf_target_unshare(xf_target *t)
{
    if (t->share) drop_registry(t);
}

uint64_t xf_target_shared_bytes(const xf_target *t)
{
    return t->share ? t->share->bytes : 0;
}

/* Whether some constant of g is a shared buffer. */
static int uses_shared(const xf_target_share *s, const xf_graph *g)
{
    if (!s || !s->n) return 0;
    for (int v = 0; v < g->n_values; v++) {
        const xf_value *val = &g->values[v];
        xf_onnx_extent key = {0, 0, val->data};
        if (val->kind == XF_VALUE_CONST && val->data &&
            bsearch(&key, s->ext, s->n, sizeof *s->ext, ext_cmp))
            return 1;
    }
    return 0;
}

int target_share_wanted(const xf_target *t, const xf_graph *g)
{
    return uses_shared(t->share, g) || xf_graph_param_bytes(g) > XF_TARGET_INLINE_MAX;
}

/* The shared initializers of the model just written that its nodes read
 * only as weights, as OrtValues over rlflow's buffers, added to the
 * session options (m keeps the values). The others are left to onnxruntime
 * to read from the shared data file: an initializer added by name
 * overrides whatever the graph optimisers made of it under that name, and
 * the transpose optimiser transposes an Add's or a Concat's constant
 * operand in place (modelzoo ViT and vit_tiny: the position embedding
 * [1, 197, 192] added as it was beside the [1, 192, 197] the optimised
 * graph expects, and the input failed to run). */
static xf_status add_initializers(xf_target_model *m, const xf_onnx_writer *w,
                                  OrtSessionOptions *so, xf_error *err)
{
    xf_target *t = m->t;
    const xf_ort_api *a = &t->ort.api;
    const xf_onnx_shared_ref *r;
    size_t n = xf_onnx_writer_shared(w, &r);
    m->shared_vals = xf_calloc(n + 1, sizeof *m->shared_vals);
    if (!m->shared_vals) return XF_FAIL(err, XF_ERR_NOMEM, "target: out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!r[i].weight) continue;
        size_t bytes = (size_t)xf_shape_numel(&r[i].shape) * xf_dtype_size(r[i].dtype);
        xf_status st = target_ort_check(
            a,
            a->CreateTensorWithDataAsOrtValue(t->mem, (void *)(uintptr_t)r[i].data, bytes,
                                              r[i].shape.dims, (size_t)r[i].shape.rank,
                                              xf_onnx_dtype_code(r[i].dtype),
                                              &m->shared_vals[m->n_shared]),
            err, "wrapping a shared weight");
        if (st != XF_OK) return st;
        OrtValue *v = m->shared_vals[m->n_shared++];
        st = target_ort_check(a, a->AddInitializer(so, r[i].name, v), err,
                          "sharing a weight");
        if (st != XF_OK) return st;
    }
    return XF_OK;
}

xf_status target_share_session(xf_target_model *m, const xf_graph *g, OrtSessionOptions *so,
                                  xf_error *err)
{
    xf_target *t = m->t;
    const xf_ort_api *a = &t->ort.api;
    xf_status st = ensure_share(t, err);
    if (st == XF_OK) st = scratch_dir(t->share, err);
    if (st != XF_OK) return st;
    xf_target_share *s = t->share;
    char name[64], data[64], model[4200], own[4200];
    unsigned k = s->next++;
    snprintf(name, sizeof name, "m%u.onnx", k);
    snprintf(data, sizeof data, "m%u.data", k);
    path_in(s, name, model, sizeof model);
    path_in(s, data, own, sizeof own);
    xf_onnx_save_options o = xf_onnx_default_save_options();
    o.external_data = data;
    o.external_min_bytes = SHARE_MIN_BYTES;
    o.shared = s->n ? &s->shared : NULL;
    o.dynamic = t->dims;
    xf_onnx_writer *w = NULL;
    st = xf_onnx_writer_open(g, model, &o, &w, err);
    t->export_failed = st != XF_OK && st != XF_ERR_NOMEM;
    if (st == XF_OK) st = xf_onnx_writer_commit(w, err);
    if (st == XF_OK) st = add_initializers(m, w, so, err);
    /* the caller's copy of what the files now hold may go before the
     * session reads and prepacks it (xf_target_race_add_then) */
    if (st == XF_OK && m->written) m->written(m->written_ctx);
    if (st == XF_OK)
        st = target_ort_check(a,
                          s->container
                              ? a->CreateSessionWithPrepackedWeightsContainer(t->env, model, so,
                                                                              s->container,
                                                                              &m->session)
                              : a->CreateSession(t->env, model, so, &m->session),
                          err, "loading the model");
    xf_onnx_writer_free(w);
    /* onnxruntime has read or mapped what it keeps */
    remove(model);
    remove(own);
    return st;
}
