/*
 * bytes.c — xf_optimize_bytes: xf_optimize_file from bytes to bytes. The
 * checked writer reads the original model again at each size it checks
 * and writes files (the optimised model, its external data, or the input
 * file's bytes when it falls back), so the bytes are staged as files in a
 * private directory (mkdtemp under $TMPDIR, else /tmp): model.onnx in,
 * out.onnx (and its data file) out, read back into buffers; the directory
 * and everything in it are removed before the call returns, on failure too.
 */
#include "optimize_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct staging {
    char dir[4096], in[4200], out[4200], data[8400];
} staging;

static xf_status stage_open(staging *g, xf_error *err)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    if ((size_t)snprintf(g->dir, sizeof g->dir, "%s/rlflow-optimize.XXXXXX", tmp) >= sizeof g->dir)
        return XF_FAIL(err, XF_ERR_IO, "TMPDIR '%s' is too long a path", tmp);
    if (!mkdtemp(g->dir))
        return XF_FAIL(err, XF_ERR_IO, "cannot make a private directory under '%s' (TMPDIR): %s",
                       tmp, strerror(errno));
    snprintf(g->in, sizeof g->in, "%s/model.onnx", g->dir);
    snprintf(g->out, sizeof g->out, "%s/out.onnx", g->dir);
    return XF_OK;
}

static void stage_close(staging *g)
{
    unlink(g->in);
    unlink(g->out);
    if (g->data[0]) unlink(g->data);
    rmdir(g->dir);
}

xf_status xf_optimize_bytes(const void *buf, size_t len, const xf_optimize_options *o,
                            uint8_t **out, size_t *out_len, uint8_t **data, size_t *data_len,
                            xf_optimize_report *r, xf_error *err)
{
    *out = NULL;
    *out_len = 0;
    if (data) *data = NULL, *data_len = 0;
    if (o && o->external_data && strchr(o->external_data, '/')) {
        xf_optimize_report_free(r);
        r->input_error = 1;
        return XF_FAIL(err, XF_ERR_INVALID,
                       "external data '%s': from bytes to bytes it is a file name, not a path",
                       o->external_data);
    }
    staging g;
    memset(&g, 0, sizeof g);
    xf_status st = stage_open(&g, err);
    if (st) {
        xf_optimize_report_free(r);
        r->input_error = 1;
        return st;
    }
    st = xf_outfile_write_all(g.in, buf, len, err);
    if (st) {
        xf_optimize_report_free(r);
        r->input_error = 1;
        xf_error_prefix(err, "staging the model");
    }
    if (!st) st = xf_optimize_file(g.in, g.out, o, r, err);
    if (!st && r->written.data_location[0]) {
        snprintf(g.data, sizeof g.data, "%s/%s", g.dir, r->written.data_location);
        if (!data)
            st = XF_FAIL(err, XF_ERR_INVALID,
                         "the model written has external data (%s) and no buffer was given for it",
                         r->written.data_location);
    }
    if (!st) st = xf_onnx_read_file(g.out, out, out_len, err);
    if (!st && g.data[0] && (st = xf_onnx_read_file(g.data, data, data_len, err))) {
        xf_free(*out);
        *out = NULL;
        *out_len = 0;
    }
    stage_close(&g);
    return st;
}
