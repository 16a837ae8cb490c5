/*
 * sizes.c — (rlflow-agent) what is written, checked at three sizes of each
 * symbolic input dim: the optimised graph is exported keeping the symbolic
 * dims (onnx's xf_onnx_dynamic), read back at each of the three points and
 * compared there with the original read at the same sizes (xf_agent_check).
 * A model wrong at any size (unless --no-check), or one whose parameters
 * cannot follow the symbols, is not written: the input model exported the same way is, and
 * if even that fails, the input file's bytes unchanged.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "onnx/onnx.h"

/* Exports g keeping d's dims and checks it at every point against the
 * original; XF_ERR_MISMATCH (message in err) when it differs somewhere. */
static xf_status export_checked(const cli_options *o, const xf_onnx_dynamic *d, const xf_graph *g,
                                uint8_t **buf, size_t *len, xf_check_result *worst, xf_error *err)
{
    xf_status st = xf_onnx_save_buffer_dynamic(g, d, buf, len, err);
    int points = xf_onnx_dynamic_points(d);
    memset(worst, 0, sizeof *worst);
    worst->bad_output = -1;
    for (int p = 0; p < points && st == XF_OK; p++) {
        xf_graph orig, back;
        xf_graph_init(&orig);
        xf_graph_init(&back);
        xf_onnx_options io = xf_onnx_dynamic_options(d, p);
        char at[512];
        xf_onnx_dynamic_describe(d, p, at, sizeof at);
        xf_check_result chk;
        st = xf_onnx_load(o->model, &io, &orig, err);
        if (st == XF_OK) {
            st = xf_onnx_load_buffer(*buf, *len, o->output, NULL, &io, &back, err);
            if (st) xf_error_prefix(err, "it does not read back");
        }
        memset(&chk, 0, sizeof chk);
        chk.bad_output = -1;
        if (st == XF_OK && o->check) /* --no-check: read back only */
            st = xf_agent_check(&orig, &back, o->seed, o->rtol, o->atol, &chk, err);
        if (st == XF_OK && chk.bad_output >= 0)
            st = XF_FAIL(err, XF_ERR_MISMATCH,
                         "output %d '%s' differs by %.3g (tolerance %.3g + %.3g*|ref|)",
                         chk.bad_output, orig.values[orig.outputs[chk.bad_output]].name
                                             ? orig.values[orig.outputs[chk.bad_output]].name
                                             : "?",
                         chk.bad_abs, o->atol, o->rtol);
        if (st == XF_OK) {
            if (chk.max_abs > worst->max_abs) worst->max_abs = chk.max_abs;
            if (chk.max_rel > worst->max_rel) worst->max_rel = chk.max_rel;
        } else if (at[0]) {
            xf_error_prefix(err, "at %s", at);
        }
        xf_graph_free(&orig);
        xf_graph_free(&back);
    }
    if (st != XF_OK) {
        xf_free(*buf);
        *buf = NULL;
        *len = 0;
    }
    return st;
}

xf_status cli_write_checked(const cli_options *o, const xf_onnx_dynamic *d,
                            const xf_graph *input, const xf_graph *optimised,
                            cli_written *out, xf_error *err)
{
    memset(out, 0, sizeof *out);
    uint8_t *buf = NULL;
    size_t len = 0;
    xf_error why;
    xf_error_clear(&why);
    xf_status st = export_checked(o, d, optimised, &buf, &len, &out->worst, &why);
    if (st == XF_ERR_NOMEM) return XF_FAIL(err, st, "%s", why.msg);
    if (st != XF_OK) {
        snprintf(out->why, sizeof out->why, "%s", why.msg);
        out->wrote = CLI_WROTE_INPUT;
        xf_error again;
        xf_error_clear(&again);
        st = export_checked(o, d, input, &buf, &len, &out->worst, &again);
        if (st == XF_ERR_NOMEM) return XF_FAIL(err, st, "%s", again.msg);
        if (st != XF_OK) {
            out->wrote = CLI_WROTE_INPUT_FILE;
            size_t n = strlen(out->why);
            if (strcmp(again.msg, why.msg) == 0)
                snprintf(out->why + n, sizeof out->why - n, "; so does the input as exported");
            else
                snprintf(out->why + n, sizeof out->why - n, "; the input as exported: %s",
                         again.msg);
            memset(&out->worst, 0, sizeof out->worst);
            if ((st = xf_onnx_read_file(o->model, &buf, &len, err)) != XF_OK) return st;
        }
    }
    st = xf_outfile_write_all(o->output, buf, len, err);
    xf_free(buf);
    return st;
}
