/*
 * write_checked.c — xf_onnx_write_checked (onnx.h): a model is written only
 * once it has been read back, from the very bytes that will be written, at
 * every point of its symbolic dims and found to compute there what the
 * original computes (the original read at the same sizes); else something
 * that does is written instead, and the caller is told what and why.
 *
 * The order: the graph given with every symbol the model admits kept
 * symbolic; when it fails and a fall-back is asked for, the input graph
 * exported the same way (an optimised model that bakes a size the input
 * does not must not cost the user a dynamic axis), and when that passes,
 * the input file's bytes in its place if they hold all of the model's
 * data and no external data file was asked for (the model as the user had
 * it: nothing an export changes, such as a shape subgraph folded to
 * constants that lets ONNX Runtime fuse differently, or a folded copy of a
 * tied weight); the graph given being the input itself (nothing better
 * found) goes to those bytes at once. When the input fails too
 * because of one symbol (its parameters cannot follow it, or the model
 * written fails at a size of it), that symbol is written fixed at the size
 * imported at, with a warning (ox_dyn_fix), and both are tried again;
 * when the input fails for another reason, the input file's bytes whatever
 * they reference. Without
 * a fall-back (a round trip) the graph alone is tried, symbols fixed the
 * same way.
 *
 * Points 1 and 2 move every kept symbol at once (to x2, x3 of its size, or
 * the other sizes dynamic.c found). A failure there is put down to one
 * symbol by checking the probes (that symbol alone moved): the first
 * symbol whose probe fails; the last kept symbol when only the joint point
 * fails. A joint point the original itself does not import at is replaced
 * by the probes.
 */
#include "dynamic_internal.h"
#include "export_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

xf_onnx_check_options xf_onnx_default_check_options(void)
{
    xf_onnx_check_options o;
    memset(&o, 0, sizeof o);
    o.numeric = 1;
    o.seed = 1;
    o.rtol = XF_TOL_MODEL.rtol;
    o.atol = XF_TOL_MODEL.atol;
    return o;
}

typedef struct checker {
    const xf_onnx_check_options *o;
    xf_onnx_dynamic *d;
    const xf_graph *input;
    int64_t *vals;                      /* sizes of a probe, one per symbol */
    xf_check_result at[XF_ONNX_POINTS]; /* of the model being checked */
    uint64_t hash_back;
} checker;

/* Import options with every symbol at point 0 but `sym` at its size of
 * point p (the sizes in c->vals, valid until the next call). */
static xf_onnx_options probe_sizes(const checker *c, int sym, int p)
{
    xf_onnx_options io = xf_onnx_dynamic_options(c->d, 0);
    for (int s = 0; s < c->d->n_sym; s++)
        c->vals[s] = xf_onnx_dynamic_size(c->d, s, s == sym ? p : 0);
    io.dim_values = c->vals;
    return io;
}

static void worst_of(xf_check_result *w, const xf_check_result *r)
{
    if (r->max_abs > w->max_abs) w->max_abs = r->max_abs;
    if (r->max_rel > w->max_rel) w->max_rel = r->max_rel;
}

/* w's model read back at sizes io and compared with the original there
 * (orig; NULL: the numerical check is off). The result goes into *res. */
static xf_status check_sizes(checker *c, xf_onnx_writer *w, const xf_onnx_options *io,
                             const xf_graph *orig, xf_check_result *res, int hash,
                             xf_error *err)
{
    xf_graph back;
    xf_status st = xf_onnx_writer_read_back(w, io, &back, err);
    if (st != XF_OK) xf_error_prefix(err, "it does not read back");
    if (st == XF_OK && hash) st = xf_graph_hash_checked(&back, XF_HASH_CONTENT, &c->hash_back, err);
    memset(res, 0, sizeof *res);
    res->bad_output = -1;
    if (!orig) res->max_abs = res->max_rel = -1;
    if (st == XF_OK && orig) st = xf_interp_check(orig, &back, c->o->seed, c->o->rtol, c->o->atol,
                                                  res, err);
    if (st == XF_OK && res->bad_output >= 0) {
        const char *name = orig->values[orig->outputs[res->bad_output]].name;
        st = XF_FAIL(err, XF_ERR_MISMATCH,
                     "output %d '%s' differs by %.3g (tolerance %.3g + %.3g*|ref|)",
                     res->bad_output, name ? name : "?", res->bad_abs, c->o->atol, c->o->rtol);
    }
    if (st != XF_OK && io->n_dim_overrides > 0) {
        char at[512];
        ox_dyn_describe_sizes(c->d, io->dim_values, at, sizeof at);
        xf_error_prefix(err, "at %s", at);
    }
    xf_graph_free(&back);
    return st;
}

/* The original read at sizes io into *g; 0 when it does not import there
 * (a joint point the model does not admit). */
static xf_status read_original(const checker *c, const xf_onnx_options *io, xf_graph *g,
                               int *admitted, xf_error *err)
{
    xf_error why;
    xf_error_clear(&why);
    *admitted = 1;
    xf_status st = xf_onnx_load(c->o->model, io, g, &why);
    if (st == XF_ERR_NOMEM || st == XF_ERR_IO) return XF_FAIL(err, st, "%s", why.msg);
    *admitted = st == XF_OK;
    return XF_OK;
}

/* w at sizes io against the original read there; *admitted 0 when the
 * original does not import at them (nothing checked). */
static xf_status check_read(checker *c, xf_onnx_writer *w, const xf_onnx_options *io,
                            xf_check_result *res, int *admitted, xf_error *err)
{
    xf_graph orig;
    xf_graph_init(&orig);
    xf_status st = read_original(c, io, &orig, admitted, err);
    if (st == XF_OK && *admitted)
        st = check_sizes(c, w, io, c->o->numeric ? &orig : NULL, res, 0, err);
    xf_graph_free(&orig);
    return st;
}

/* The probes of point p (each kept symbol alone at its size of p):
 * *sym is the first whose probe fails (-1: none). */
static xf_status check_probes(checker *c, xf_onnx_writer *w, int p, int *sym, xf_error *err)
{
    *sym = -1;
    for (int s = 0; s < c->d->n_sym; s++) {
        if (c->d->fixed[s]) continue;
        xf_onnx_options io = probe_sizes(c, s, p);
        xf_check_result r;
        int admitted;
        xf_status st = check_read(c, w, &io, &r, &admitted, err);
        if (st == XF_ERR_NOMEM || st == XF_ERR_IO) return st;
        if (st != XF_OK) {
            *sym = s;
            return st;
        }
        if (admitted) worst_of(&c->at[p], &r);
    }
    return XF_OK;
}

/* The last symbol kept (a joint point fails while every probe passes). */
static int last_kept(const xf_onnx_dynamic *d)
{
    for (int s = d->n_sym - 1; s >= 0; s--)
        if (!d->fixed[s]) return s;
    return -1;
}

/* Checks w at point p; on failure *sym is the symbol it is put down to. */
static xf_status check_point(checker *c, xf_onnx_writer *w, int p, int *sym, xf_error *err)
{
    *sym = -1;
    xf_onnx_options io = xf_onnx_dynamic_options(c->d, p);
    if (p == 0)
        return check_sizes(c, w, &io, c->o->numeric ? c->input : NULL, &c->at[0],
                           c->o->same_graph, err);
    int admitted;
    xf_status st = check_read(c, w, &io, &c->at[p], &admitted, err);
    if (st == XF_ERR_NOMEM || st == XF_ERR_IO) return st;
    if (!admitted) { /* the model does not take these sizes together: one at a time */
        memset(&c->at[p], 0, sizeof c->at[p]);
        c->at[p].bad_output = -1;
        return check_probes(c, w, p, sym, err);
    }
    if (st == XF_OK) return XF_OK;
    xf_error probe;
    xf_error_clear(&probe);
    xf_status pst = check_probes(c, w, p, sym, &probe);
    if (pst == XF_ERR_NOMEM || pst == XF_ERR_IO) return XF_FAIL(err, pst, "%s", probe.msg);
    if (*sym < 0) *sym = last_kept(c->d);
    return st;
}

/* Exports g keeping d's kept symbols into a writer and checks it at every
 * point; *w is the writer on success (ready to commit), *sym the symbol a
 * failure is put down to (-1: none). */
static xf_status try_graph(checker *c, const xf_graph *g, xf_onnx_writer **w, int *sym,
                           xf_error *err)
{
    xf_onnx_save_options so = xf_onnx_default_save_options();
    so.external_data = c->o->external_data;
    so.dynamic = c->d;
    memset(c->at, 0, sizeof c->at);
    xf_status st = ox_export_writer_open(g, c->o->output, &so, w, sym, err);
    int points = xf_onnx_dynamic_points(c->d);
    for (int p = 0; p < points && st == XF_OK; p++) st = check_point(c, *w, p, sym, err);
    uint64_t hash = 0;
    if (st == XF_OK && c->o->same_graph)
        st = xf_graph_hash_checked(g, XF_HASH_CONTENT, &hash, err);
    if (st == XF_OK && c->o->same_graph && c->hash_back != hash)
        st = XF_FAIL(err, XF_ERR_MISMATCH,
                     "it reads back as another graph (canonical hash %016llx, written from "
                     "%016llx)",
                     (unsigned long long)c->hash_back, (unsigned long long)hash);
    if (st != XF_OK) {
        xf_onnx_writer_free(*w);
        *w = NULL;
    }
    return st;
}

/* Commits w (model and data file together) and records what it wrote. */
static xf_status commit(checker *c, xf_onnx_writer *w, xf_onnx_checked *out, xf_error *err)
{
    xf_status st = xf_onnx_writer_commit(w, err);
    const char *loc = NULL;
    if (st == XF_OK) xf_onnx_writer_sizes(w, &out->model_bytes, &out->data_bytes, &loc);
    if (loc) snprintf(out->data_location, sizeof out->data_location, "%s", loc);
    xf_onnx_writer_free(w);
    out->n_points = xf_onnx_dynamic_points(c->d);
    out->hash_back = c->hash_back;
    memset(&out->worst, 0, sizeof out->worst);
    out->worst.bad_output = -1;
    for (int p = 0; p < out->n_points; p++) {
        out->at[p] = c->at[p];
        worst_of(&out->worst, &c->at[p]);
    }
    if (!c->o->numeric) out->worst.max_abs = out->worst.max_rel = -1;
    return st;
}

static int hard(xf_status st)
{
    return st == XF_ERR_NOMEM || st == XF_ERR_IO;
}

/* The input file's bytes in *buf (NULL when it cannot be read: *buf
 * stays NULL and, unless `must`, that is no failure) and whether they hold
 * all of the model's data (*whole; no external data asked for either).
 * Fails on out of memory, and with `must` when the file cannot be read. */
static xf_status read_input_file(const xf_onnx_check_options *o, int must, uint8_t **buf,
                                 size_t *len, int *whole, xf_error *err)
{
    *buf = NULL;
    *whole = 0;
    xf_error e;
    xf_error_clear(&e);
    xf_status st = xf_onnx_read_file(o->model, buf, len, &e);
    if (st == XF_ERR_NOMEM || (st && must)) return XF_FAIL(err, st, "%s", e.msg);
    if (st) return XF_OK;
    *whole = !o->external_data && !ox_pb_external_data(*buf, *len);
    return XF_OK;
}

/* Writes the input file's bytes to o->output. self_contained: only when
 * they hold all of the model's data (a copy elsewhere would lose an
 * external data file) and none was asked for; *copied says whether it
 * wrote (a file that cannot be read is not copied: the caller exports the
 * input instead; out of memory and a failed write fail). */
static xf_status copy_input_file(const xf_onnx_check_options *o, int self_contained,
                                 xf_onnx_checked *out, int *copied, xf_error *err)
{
    *copied = 0;
    if (self_contained && o->external_data) return XF_OK;
    uint8_t *buf;
    size_t len = 0;
    int whole;
    xf_status st = read_input_file(o, !self_contained, &buf, &len, &whole, err);
    if (!st && buf && (whole || !self_contained)) {
        st = xf_outfile_write_all(o->output, buf, len, err);
        if (st == XF_OK) {
            *copied = 1;
            out->wrote = XF_ONNX_WROTE_INPUT_FILE;
            out->n_points = 0;
            out->model_bytes = len;
        }
    }
    xf_free(buf);
    return st;
}

/* xf_onnx_write_checked with the checker set up. */
static xf_status write_model(checker *c, const xf_graph *graph, xf_onnx_checked *out,
                             xf_error *err)
{
    const xf_onnx_check_options *o = c->o;
    xf_onnx_dynamic *d = c->d;
    const xf_graph *input = c->input;
    int n_try = o->fall_back && graph != input ? 2 : 1;
    xf_error why, last;
    xf_error_clear(&why);
    xf_error_clear(&last);
    xf_status st = XF_OK;
    int copied = 0;
    if (o->fall_back && graph == input &&
        ((st = copy_input_file(o, 1, out, &copied, err)) != XF_OK || copied))
        return st;
    for (;;) {
        int sym = -1;
        for (int t = 0; t < n_try; t++) {
            xf_onnx_writer *w = NULL;
            xf_error e;
            xf_error_clear(&e);
            st = try_graph(c, t ? input : graph, &w, &sym, &e);
            if (hard(st)) return XF_FAIL(err, st, "%s", e.msg);
            if (st == XF_OK) {
                out->wrote = t ? XF_ONNX_WROTE_INPUT : XF_ONNX_WROTE_GRAPH;
                if (t) snprintf(out->why, sizeof out->why, "%s", why.msg);
                /* the input passes as exported: its file's bytes instead
                 * when they hold all of its data */
                if (t && ((st = copy_input_file(o, 1, out, &copied, err)) != XF_OK || copied)) {
                    xf_onnx_writer_free(w);
                    return st;
                }
                return commit(c, w, out, err);
            }
            if (t == 0) why = e;
            last = e;
        }
        if (sym < 0 || d->fixed[sym]) break;
        char reason[1200];
        snprintf(reason, sizeof reason, "the model written cannot follow it: %s", last.msg);
        if ((st = ox_dyn_fix(d, o->model, sym, reason, err)) != XF_OK) return st;
        out->n_fixed++;
    }
    if (!o->fall_back) return XF_FAIL(err, st, "%s", last.msg);
    /* neither model as exported passes: the input file as it is */
    int same = strcmp(last.msg, why.msg) == 0;
    if (o->external_data) {
        if (same) return XF_FAIL(err, st, "%s (nothing written)", why.msg);
        return XF_FAIL(err, st, "%s; the input as exported: %s (nothing written)", why.msg,
                       last.msg);
    }
    if (same || n_try == 1)
        snprintf(out->why, sizeof out->why, "%s; so does the input as exported", why.msg);
    else
        snprintf(out->why, sizeof out->why, "%s; the input as exported: %s", why.msg, last.msg);
    return copy_input_file(o, 0, out, &copied, err);
}

xf_status xf_onnx_input_copyable(const xf_onnx_check_options *o, uint64_t max_bytes, int *yes,
                                 xf_error *err)
{
    *yes = 0;
    struct stat sb;
    if (o->external_data || !o->model || stat(o->model, &sb) != 0 || !S_ISREG(sb.st_mode) ||
        (uint64_t)sb.st_size > max_bytes)
        return XF_OK;
    uint8_t *buf;
    size_t len = 0;
    xf_status st = read_input_file(o, 0, &buf, &len, yes, err);
    xf_free(buf);
    return st;
}

xf_status xf_onnx_write_checked(const xf_onnx_check_options *o, xf_onnx_dynamic *d,
                                const xf_graph *input, const xf_graph *graph,
                                xf_onnx_checked *out, xf_error *err)
{
    memset(out, 0, sizeof *out);
    checker c = {.o = o, .d = d, .input = input};
    c.vals = xf_malloc(sizeof(int64_t) * ((size_t)xf_onnx_dynamic_count(d) + 1));
    if (!c.vals) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    xf_status st = write_model(&c, graph, out, err);
    xf_free(c.vals);
    return st;
}
