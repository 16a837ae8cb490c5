/*
 * onednn_kernel.c — the ox_kernel container (see onednn_internal.h): its
 * lifetime, the helpers builders use to obtain each input in the layout a
 * primitive wants (adding reorders, or doing them once for constants), to
 * declare outputs and scratch, and to append primitives; binding caller
 * buffers; running the steps; and the reference-kernel form of a kernel,
 * which is how ops without a oneDNN primitive run inside the executor.
 *
 * Every dnnl memory object a kernel creates is owned by it (the bindings
 * and the owned list) and destroyed in cm_onednn_kernel_reset / cm_onednn_kernel_free.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onednn_internal.h"

/* Grows *arr (element size sz) so that one more element fits. */
static int grow(void **arr, int *cap, int n, size_t sz)
{
    if (n < *cap) return 1;
    int nc = *cap ? *cap * 2 : 8;
    void *p = xf_realloc(*arr, sz * (size_t)nc);
    if (!p) return 0;
    *arr = p;
    *cap = nc;
    return 1;
}

xf_status cm_onednn_kernel_init(ox_kernel *k, const ox_state *st, xf_op op, const xf_params *p,
                         int n_in, const ox_io *in, int n_out, const xf_dtype *out_dt,
                         const xf_shape *out_sh, int measuring, xf_error *err)
{
    memset(k, 0, sizeof *k);
    k->st = st;
    k->op = op;
    k->params = *p;
    k->measuring = measuring;
    k->n_in = n_in;
    k->n_out = n_out;
    size_t ni = (size_t)(n_in ? n_in : 1), no = (size_t)(n_out ? n_out : 1);
    k->in = xf_calloc(ni, sizeof *k->in);
    k->given_md = xf_calloc(ni, sizeof *k->given_md);
    k->has_given = xf_calloc(ni, sizeof *k->has_given);
    k->in_md = xf_calloc(ni, sizeof *k->in_md);
    k->in_has_md = xf_calloc(ni, sizeof *k->in_has_md);
    k->in_mem = xf_calloc(ni, sizeof *k->in_mem);
    k->in_ptr = xf_calloc(ni, sizeof *k->in_ptr);
    k->ref_in_mem = xf_calloc(ni, sizeof *k->ref_in_mem);
    k->ref_in = xf_calloc(ni, sizeof *k->ref_in);
    k->out_dt = xf_calloc(no, sizeof *k->out_dt);
    k->out_sh = xf_calloc(no, sizeof *k->out_sh);
    k->out_md = xf_calloc(no, sizeof *k->out_md);
    k->out_ptr = xf_calloc(no, sizeof *k->out_ptr);
    k->ref_out = xf_calloc(no, sizeof *k->ref_out);
    if (!k->in || !k->given_md || !k->has_given || !k->in_md || !k->in_has_md || !k->in_mem ||
        !k->in_ptr || !k->ref_in_mem || !k->ref_in || !k->out_dt || !k->out_sh || !k->out_md ||
        !k->out_ptr || !k->ref_out) {
        k->n_in = k->n_out = 0;
        cm_onednn_kernel_free(k);
        return XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory for a %s kernel",
                       xf_op_get(op)->name);
    }
    for (int i = 0; i < n_in; i++) {
        k->in[i] = in[i];
        k->in[i].md = NULL;
        if (in[i].md) {
            k->given_md[i] = *in[i].md;
            k->has_given[i] = 1;
        }
    }
    for (int j = 0; j < n_out; j++) {
        k->out_dt[j] = out_dt[j];
        k->out_sh[j] = out_sh[j];
    }
    cm_onednn_kernel_reset(k);
    return XF_OK;
}

void cm_onednn_kernel_reset(ox_kernel *k)
{
    for (int s = 0; s < k->n_steps; s++) {
        dnnl_primitive_destroy(k->steps[s].prim);
        xf_free(k->steps[s].args);
    }
    k->n_steps = 0;
    for (int b = 0; b < k->n_bind; b++) dnnl_memory_destroy(k->bind[b].mem);
    k->n_bind = 0;
    /* Views on scratch come after the scratch they alias; destroy in reverse. */
    for (int o = k->n_owned - 1; o >= 0; o--) dnnl_memory_destroy(k->owned[o]);
    k->n_owned = 0;
    k->alias = 0;
    k->loop = NULL;
    for (int i = 0; i < k->n_in; i++) {
        k->in_mem[i] = NULL;
        k->ref_in_mem[i] = NULL;
        k->in_has_md[i] = k->has_given[i];
        if (k->has_given[i]) k->in_md[i] = k->given_md[i];
    }
    for (int j = 0; j < k->n_out; j++) cm_onednn_md_plain(&k->out_md[j], &k->out_sh[j]);
}

void cm_onednn_kernel_free(ox_kernel *k)
{
    if (k->in_mem) cm_onednn_kernel_reset(k);
    xf_free(k->steps);
    xf_free(k->owned);
    xf_free(k->bind);
    xf_free(k->in);
    xf_free(k->given_md);
    xf_free(k->has_given);
    xf_free(k->in_md);
    xf_free(k->in_has_md);
    xf_free(k->in_mem);
    xf_free(k->in_ptr);
    xf_free(k->ref_in_mem);
    xf_free(k->ref_in);
    xf_free(k->out_dt);
    xf_free(k->out_sh);
    xf_free(k->out_md);
    xf_free(k->out_ptr);
    xf_free(k->ref_out);
    memset(k, 0, sizeof *k);
}

const dnnl_memory_desc_t *cm_onednn_input_md(const ox_kernel *k, int i)
{
    return k->in_has_md[i] ? &k->in_md[i] : NULL;
}

static const char *opname(const ox_kernel *k)
{
    return xf_op_get(k->op)->name;
}

/* A memory of layout md whose handle will be caller buffer (output, index). */
static xf_status bound_memory(ox_kernel *k, const dnnl_memory_desc_t *md, int output, int index,
                              dnnl_memory_t *mem, xf_error *err)
{
    *mem = NULL;
    if (!grow((void **)&k->bind, &k->cap_bind, k->n_bind, sizeof *k->bind))
        return XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory building %s", opname(k));
    OX_TRY(dnnl_memory_create(mem, md, k->st->engine, DNNL_MEMORY_NONE), err,
           "onednn: creating a memory object");
    k->bind[k->n_bind++] = (ox_binding){*mem, output, index};
    return XF_OK;
}

/* Takes ownership of m (destroyed with the kernel). */
static xf_status own(ox_kernel *k, dnnl_memory_t m, xf_error *err)
{
    if (!grow((void **)&k->owned, &k->cap_owned, k->n_owned, sizeof *k->owned)) {
        dnnl_memory_destroy(m);
        return XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory building %s", opname(k));
    }
    k->owned[k->n_owned++] = m;
    return XF_OK;
}

xf_status cm_onednn_scratch(ox_kernel *k, const dnnl_memory_desc_t *md, dnnl_memory_t *mem,
                     xf_error *err)
{
    *mem = NULL;
    dnnl_memory_t m;
    OX_TRY(dnnl_memory_create(&m, md, k->st->engine, DNNL_MEMORY_ALLOCATE), err,
           "onednn: allocating scratch memory");
    xf_status s = own(k, m, err);
    if (s == XF_OK) *mem = m;
    return s;
}

/* Input i's memory in its interface layout (created on first use). */
static xf_status input_memory(ox_kernel *k, int i, dnnl_memory_t *mem, xf_error *err)
{
    if (!k->in_mem[i]) {
        xf_status s = bound_memory(k, &k->in_md[i], 0, i, &k->in_mem[i], err);
        if (s != XF_OK) return s;
    }
    *mem = k->in_mem[i];
    return XF_OK;
}

xf_status cm_onednn_add_step(ox_kernel *k, dnnl_primitive_desc_t pd, int n_args,
                      const dnnl_exec_arg_t *args, xf_error *err)
{
    dnnl_primitive_t prim = NULL;
    dnnl_status_t ds = dnnl_primitive_create(&prim, pd);
    dnnl_primitive_desc_destroy(pd);
    OX_TRY(ds, err, "onednn: creating a primitive");
    dnnl_exec_arg_t *a = xf_malloc(sizeof *a * (size_t)(n_args ? n_args : 1));
    if (!a || !grow((void **)&k->steps, &k->cap_steps, k->n_steps, sizeof *k->steps)) {
        xf_free(a);
        dnnl_primitive_destroy(prim);
        return XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory building %s", opname(k));
    }
    memcpy(a, args, sizeof *a * (size_t)n_args);
    k->steps[k->n_steps++] = (ox_step){prim, n_args, a};
    return XF_OK;
}

xf_status cm_onednn_add_src_dst_step(ox_kernel *k, dnnl_primitive_desc_t pd, xf_error *err)
{
    dnnl_memory_t src, dst;
    xf_status s = cm_onednn_input_layout(k, 0, cm_onednn_pd_md(pd, dnnl_query_src_md, 0), &src, err);
    if (s == XF_OK) s = cm_onednn_output(k, 0, cm_onednn_pd_md(pd, dnnl_query_dst_md, 0), NULL, &dst, err);
    if (s != XF_OK) {
        dnnl_primitive_desc_destroy(pd);
        return s;
    }
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    return cm_onednn_add_step(k, pd, 2, args, err);
}

static xf_status reorder_pd(const ox_state *st, dnnl_memory_t src, dnnl_memory_t dst,
                            dnnl_primitive_desc_t *pd, xf_error *err)
{
    const dnnl_memory_desc_t *smd, *dmd;
    dnnl_memory_get_memory_desc(src, &smd);
    dnnl_memory_get_memory_desc(dst, &dmd);
    OX_TRY(dnnl_reorder_primitive_desc_create(pd, smd, st->engine, dmd, st->engine, NULL), err,
           "onednn: reorder between layouts");
    return XF_OK;
}

xf_status cm_onednn_add_reorder(ox_kernel *k, dnnl_memory_t src, dnnl_memory_t dst, xf_error *err)
{
    dnnl_primitive_desc_t pd;
    xf_status s = reorder_pd(k->st, src, dst, &pd, err);
    if (s != XF_OK) return s;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
    return cm_onednn_add_step(k, pd, 2, args, err);
}

xf_status cm_onednn_reorder_now(const ox_state *st, dnnl_memory_t src, dnnl_memory_t dst,
                         xf_error *err)
{
    dnnl_primitive_desc_t pd;
    xf_status s = reorder_pd(st, src, dst, &pd, err);
    if (s != XF_OK) return s;
    dnnl_primitive_t prim;
    dnnl_status_t ds = dnnl_primitive_create(&prim, pd);
    dnnl_primitive_desc_destroy(pd);
    OX_TRY(ds, err, "onednn: creating a reorder");
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
    ds = dnnl_primitive_execute(prim, st->stream, 2, args);
    if (ds == dnnl_success) ds = dnnl_stream_wait(st->stream);
    dnnl_primitive_destroy(prim);
    OX_TRY(ds, err, "onednn: running a reorder");
    return XF_OK;
}

xf_status cm_onednn_input_layout(ox_kernel *k, int i, const dnnl_memory_desc_t *want,
                          dnnl_memory_t *mem, xf_error *err)
{
    *mem = NULL;
    if (!k->in_has_md[i]) {
        k->in_md[i] = *want;
        k->in_has_md[i] = 1;
    }
    if (dnnl_memory_desc_equal(&k->in_md[i], want)) return input_memory(k, i, mem, err);
    dnnl_memory_t dst;
    xf_status s = cm_onednn_scratch(k, want, &dst, err);
    if (s != XF_OK) return s;
    if (k->in[i].data) {
        /* A constant: re-lay it out once. The source memory wraps the
         * caller's bytes only for this reorder. */
        dnnl_memory_t src;
        OX_TRY(dnnl_memory_create(&src, &k->in_md[i], k->st->engine, (void *)k->in[i].data),
               err, "onednn: wrapping a constant");
        s = cm_onednn_reorder_now(k->st, src, dst, err);
        dnnl_memory_destroy(src);
    } else {
        dnnl_memory_t src;
        s = input_memory(k, i, &src, err);
        if (s == XF_OK) s = cm_onednn_add_reorder(k, src, dst, err);
    }
    if (s == XF_OK) *mem = dst;
    return s;
}

xf_status cm_onednn_input_view(ox_kernel *k, int i, const dnnl_memory_desc_t *view, dnnl_memory_t *mem,
                        xf_error *err)
{
    *mem = NULL;
    if (!k->in_has_md[i]) {
        cm_onednn_md_plain(&k->in_md[i], &k->in[i].shape);
        k->in_has_md[i] = 1;
    }
    if (cm_onednn_md_is_plain(&k->in_md[i])) return bound_memory(k, view, 0, i, mem, err);
    /* Another layout: reorder to plain scratch and view that. */
    dnnl_memory_desc_t plain;
    cm_onednn_md_plain(&plain, &k->in[i].shape);
    dnnl_memory_t flat, alias;
    xf_status s = cm_onednn_input_layout(k, i, &plain, &flat, err);
    if (s != XF_OK) return s;
    void *h = NULL;
    dnnl_memory_get_data_handle(flat, &h);
    OX_TRY(dnnl_memory_create(&alias, view, k->st->engine, h), err,
           "onednn: creating a view on scratch");
    s = own(k, alias, err);
    if (s == XF_OK) *mem = alias;
    return s;
}

xf_status cm_onednn_input_relayout(ox_kernel *k, int i, const dnnl_memory_desc_t *view,
                            const dnnl_memory_desc_t *want, dnnl_memory_t *mem, xf_error *err)
{
    *mem = NULL;
    if (!k->in_has_md[i]) {
        k->in_md[i] = *want;
        k->in_has_md[i] = 1;
        return input_memory(k, i, mem, err);
    }
    if (dnnl_memory_desc_equal(view, want)) return cm_onednn_input_view(k, i, view, mem, err);
    dnnl_memory_t dst, src;
    xf_status s = cm_onednn_scratch(k, want, &dst, err);
    if (s != XF_OK) return s;
    if (k->in[i].data && cm_onednn_md_is_plain(&k->in_md[i])) {
        OX_TRY(dnnl_memory_create(&src, view, k->st->engine, (void *)k->in[i].data), err,
               "onednn: wrapping a constant");
        s = cm_onednn_reorder_now(k->st, src, dst, err);
        dnnl_memory_destroy(src);
    } else {
        s = cm_onednn_input_view(k, i, view, &src, err);
        if (s == XF_OK) s = cm_onednn_add_reorder(k, src, dst, err);
    }
    if (s == XF_OK) *mem = dst;
    return s;
}

xf_status cm_onednn_make_pd(const ox_kernel *k, const void *op_desc, const_dnnl_primitive_attr_t attr,
                     dnnl_primitive_desc_t *pd, xf_error *err)
{
    *pd = NULL;
    char what[96];
    snprintf(what, sizeof what, "onednn: %s", opname(k));
    return cm_onednn_check(dnnl_primitive_desc_create(pd, op_desc, attr, k->st->engine, NULL), err,
                    what);
}

const dnnl_memory_desc_t *cm_onednn_pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what, int index)
{
    return dnnl_primitive_desc_query_md(pd, what, index);
}

xf_status cm_onednn_output(ox_kernel *k, int j, const dnnl_memory_desc_t *layout,
                    const dnnl_memory_desc_t *prim, dnnl_memory_t *mem, xf_error *err)
{
    k->out_md[j] = *layout;
    return bound_memory(k, prim ? prim : layout, 1, j, mem, err);
}

xf_status cm_onednn_kernel_build_reference(ox_kernel *k, xf_error *err)
{
    cm_onednn_kernel_reset(k);
    for (int i = 0; i < k->n_in; i++) {
        const ox_io *io = &k->in[i];
        k->ref_in[i] = (xf_tensor){io->dtype, io->shape, NULL};
        if (io->dtype != XF_F32) continue;
        dnnl_memory_desc_t plain;
        cm_onednn_md_plain(&plain, &io->shape);
        if (!k->in_has_md[i] || cm_onednn_md_is_plain(&k->in_md[i])) {
            if (!k->in_has_md[i]) {
                k->in_md[i] = plain;
                k->in_has_md[i] = 1;
            }
            continue;
        }
        xf_status s = cm_onednn_input_layout(k, i, &plain, &k->ref_in_mem[i], err);
        if (s != XF_OK) return s;
    }
    for (int j = 0; j < k->n_out; j++) k->ref_out[j] = (xf_tensor){k->out_dt[j], k->out_sh[j], NULL};
    if (!grow((void **)&k->steps, &k->cap_steps, k->n_steps, sizeof *k->steps))
        return XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory building %s", opname(k));
    k->steps[k->n_steps++] = (ox_step){NULL, 0, NULL};
    return XF_OK;
}

xf_status cm_onednn_kernel_bind(ox_kernel *k, void *const *in, void *const *out, xf_error *err)
{
    for (int i = 0; i < k->n_in; i++) k->in_ptr[i] = in[i];
    for (int j = 0; j < k->n_out; j++) k->out_ptr[j] = out[j];
    for (int b = 0; b < k->n_bind; b++) {
        const ox_binding *bd = &k->bind[b];
        void *h = bd->output ? out[bd->index] : in[bd->index];
        OX_TRY(dnnl_memory_set_data_handle_v2(bd->mem, h, k->st->stream), err,
               "onednn: binding a buffer");
    }
    for (int i = 0; i < k->n_in; i++) {
        void *h = k->in_ptr[i];
        if (k->ref_in_mem[i]) dnnl_memory_get_data_handle(k->ref_in_mem[i], &h);
        k->ref_in[i].data = h;
    }
    for (int j = 0; j < k->n_out; j++) k->ref_out[j].data = k->out_ptr[j];
    return XF_OK;
}

static xf_status run_reference(ox_kernel *k, xf_error *err)
{
    if (k->loop) {
        k->loop(k->ref_in[0].data, k->ref_out[0].data, (size_t)xf_shape_numel(&k->out_sh[0]));
        return XF_OK;
    }
    enum { SMALL = 8 };
    const xf_tensor *small[SMALL];
    const xf_tensor **ptrs = small;
    if (k->n_in > SMALL) {
        ptrs = xf_malloc(sizeof *ptrs * (size_t)k->n_in);
        if (!ptrs) return XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory running %s", opname(k));
    }
    for (int i = 0; i < k->n_in; i++)
        ptrs[i] = k->in[i].dtype == XF_DTYPE_INVALID ? NULL : &k->ref_in[i];
    xf_status s = xf_op_run(k->op, &k->params, k->n_in, ptrs, k->n_out, k->ref_out, err);
    if (ptrs != small) xf_free(ptrs);
    return s;
}

xf_status cm_onednn_kernel_run(ox_kernel *k, xf_error *err)
{
    for (int s = 0; s < k->n_steps; s++) {
        const ox_step *st = &k->steps[s];
        if (st->prim) {
            OX_TRY(dnnl_primitive_execute(st->prim, k->st->stream, st->n_args, st->args), err,
                   "onednn: running a primitive");
            continue;
        }
        OX_TRY(dnnl_stream_wait(k->st->stream), err, "onednn: waiting for the stream");
        xf_status r = run_reference(k, err);
        if (r != XF_OK) return r;
    }
    OX_TRY(dnnl_stream_wait(k->st->stream), err, "onednn: waiting for the stream");
    return XF_OK;
}

int cm_onednn_kernel_count(const ox_kernel *k)
{
    return k->n_steps;
}
