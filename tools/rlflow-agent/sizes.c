/*
 * sizes.c — (rlflow-agent) what is written, checked at three sizes of each
 * symbolic input dim: the optimised graph is exported keeping the symbolic
 * dims (onnx's xf_onnx_dynamic) through the model writer (xf_onnx_writer:
 * its weights go to an external data file by --external-data or when the
 * model is over 2 GiB), read back from those very bytes at each of the
 * three points (external weights in place, not copied) and compared there
 * with the original read at the same sizes (xf_agent_check; the original
 * is read once per point, the input graph serving at the first); only then is
 * the writer committed (model and data file together). A model wrong at
 * any size (unless --no-check), or one whose parameters cannot follow the
 * symbols, is not written: the input model exported the same way is, and
 * if even that fails, the input file's bytes unchanged (not when
 * --external-data asks for a data file the input file does not have: then
 * nothing is written).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "onnx/onnx.h"

/* Reads w's model back at point p of d and checks it against `orig`, the
 * original read at the same sizes; XF_ERR_MISMATCH (message in err) when it
 * differs. */
static xf_status check_point(const cli_options *o, const xf_onnx_dynamic *d, int p,
                             const xf_graph *orig, xf_onnx_writer *w, xf_check_result *worst,
                             xf_error *err)
{
    xf_graph back;
    xf_graph_init(&back);
    xf_onnx_options io = xf_onnx_dynamic_options(d, p);
    char at[512];
    xf_onnx_dynamic_describe(d, p, at, sizeof at);
    xf_check_result chk;
    xf_status st = xf_onnx_writer_read_back(w, &io, &back, err);
    if (st) xf_error_prefix(err, "it does not read back");
    memset(&chk, 0, sizeof chk);
    chk.bad_output = -1;
    if (st == XF_OK && o->check) /* --no-check: read back only */
        st = xf_agent_check(orig, &back, o->seed, o->rtol, o->atol, &chk, err);
    if (st == XF_OK && chk.bad_output >= 0)
        st = XF_FAIL(err, XF_ERR_MISMATCH,
                     "output %d '%s' differs by %.3g (tolerance %.3g + %.3g*|ref|)",
                     chk.bad_output,
                     orig->values[orig->outputs[chk.bad_output]].name
                         ? orig->values[orig->outputs[chk.bad_output]].name
                         : "?",
                     chk.bad_abs, o->atol, o->rtol);
    if (st == XF_OK) {
        if (chk.max_abs > worst->max_abs) worst->max_abs = chk.max_abs;
        if (chk.max_rel > worst->max_rel) worst->max_rel = chk.max_rel;
    } else if (at[0]) {
        xf_error_prefix(err, "at %s", at);
    }
    xf_graph_free(&back);
    return st;
}

/* Exports g keeping d's dims into a writer for o->output and checks it at
 * every point against the original there (orig[p]); *out is the writer,
 * ready to commit, on success (g must stay alive until it is freed). */
static xf_status export_checked(const cli_options *o, const xf_onnx_dynamic *d,
                                const xf_graph *const *orig, const xf_graph *g,
                                xf_onnx_writer **out, xf_check_result *worst, xf_error *err)
{
    xf_onnx_save_options so = xf_onnx_default_save_options();
    so.external_data = o->external_data;
    so.dynamic = d;
    xf_onnx_writer *w = NULL;
    xf_status st = xf_onnx_writer_open(g, o->output, &so, &w, err);
    int points = xf_onnx_dynamic_points(d);
    memset(worst, 0, sizeof *worst);
    worst->bad_output = -1;
    for (int p = 0; p < points && st == XF_OK; p++) st = check_point(o, d, p, orig[p], w, worst, err);
    if (st != XF_OK) {
        xf_onnx_writer_free(w);
        w = NULL;
    }
    *out = w;
    return st;
}

/* Commits w (model and data file together) and records its data file. */
static xf_status commit(xf_onnx_writer *w, cli_written *out, xf_error *err)
{
    xf_status st = xf_onnx_writer_commit(w, err);
    const char *loc = NULL;
    if (st == XF_OK) xf_onnx_writer_sizes(w, NULL, &out->data_bytes, &loc);
    if (loc) snprintf(out->data_location, sizeof out->data_location, "%s", loc);
    xf_onnx_writer_free(w);
    return st;
}

/* cli_write_checked with the original read at every point (orig[0] is
 * the input as imported). */
static xf_status write_checked(const cli_options *o, const xf_onnx_dynamic *d,
                               const xf_graph *const *orig, const xf_graph *input,
                               const xf_graph *optimised, cli_written *out, xf_error *err)
{
    xf_onnx_writer *w = NULL;
    xf_error why;
    xf_error_clear(&why);
    xf_status st = export_checked(o, d, orig, optimised, &w, &out->worst, &why);
    if (st == XF_ERR_NOMEM) return XF_FAIL(err, st, "%s", why.msg);
    if (st == XF_OK) return commit(w, out, err);
    snprintf(out->why, sizeof out->why, "%s", why.msg);
    out->wrote = CLI_WROTE_INPUT;
    xf_error again;
    xf_error_clear(&again);
    st = export_checked(o, d, orig, input, &w, &out->worst, &again);
    if (st == XF_ERR_NOMEM) return XF_FAIL(err, st, "%s", again.msg);
    if (st == XF_OK) return commit(w, out, err);
    if (o->external_data) {
        if (strcmp(again.msg, why.msg) == 0)
            return XF_FAIL(err, st, "%s (nothing written)", why.msg);
        return XF_FAIL(err, st, "%s; the input as exported: %s (nothing written)", why.msg,
                       again.msg);
    }
    out->wrote = CLI_WROTE_INPUT_FILE;
    size_t n = strlen(out->why);
    if (strcmp(again.msg, why.msg) == 0)
        snprintf(out->why + n, sizeof out->why - n, "; so does the input as exported");
    else
        snprintf(out->why + n, sizeof out->why - n, "; the input as exported: %s", again.msg);
    memset(&out->worst, 0, sizeof out->worst);
    uint8_t *buf = NULL;
    size_t len = 0;
    if ((st = xf_onnx_read_file(o->model, &buf, &len, err)) != XF_OK) return st;
    st = xf_outfile_write_all(o->output, buf, len, err);
    xf_free(buf);
    return st;
}

xf_status cli_write_checked(const cli_options *o, const xf_onnx_dynamic *d,
                            const xf_graph *input, const xf_graph *optimised,
                            cli_written *out, xf_error *err)
{
    memset(out, 0, sizeof *out);
    /* The original at each point, read once for both models checked (not
     * at all with --no-check: the written bytes are only read back). */
    xf_graph read[XF_ONNX_POINTS];
    const xf_graph *orig[XF_ONNX_POINTS] = {input};
    int points = xf_onnx_dynamic_points(d), n_read = 0;
    xf_status st = XF_OK;
    for (int p = 1; p < points && o->check && st == XF_OK; p++) {
        xf_onnx_options io = xf_onnx_dynamic_options(d, p);
        xf_graph_init(&read[p]);
        st = xf_onnx_load(o->model, &io, &read[p], err);
        n_read = p;
        orig[p] = &read[p];
    }
    if (st == XF_OK) st = write_checked(o, d, orig, input, optimised, out, err);
    for (int p = 1; p <= n_read; p++) xf_graph_free(&read[p]);
    return st;
}
