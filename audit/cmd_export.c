/*
 * cmd_export.c — `xferdb export DB ID --format dot|png|json|onnx [-o PATH]`:
 * one rule as a graphviz graph (text, or a PNG drawn by `dot`), as the JSON
 * interchange document, or as two ONNX models, <stem>.src.onnx and
 * <stem>.dst.onnx, whose graph inputs are the rule's inputs. Text formats go
 * to `out` unless -o is given; png defaults to rule-<ID>.png and onnx to
 * the stem rule-<ID>. Files written are listed on `out`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"
#include "audit_internal.h"

typedef void (*writer_fn)(FILE *, const xf_rulesdb_rule_info *, const xf_rule *);

/* Writes with `fn` to `path` (through xf_outfile), or to `out` when path
 * is NULL. */
static xf_status write_text(FILE *out, const char *path, writer_fn fn,
                            const xf_rulesdb_rule_info *info, const xf_rule *r, xf_error *err)
{
    if (!path) {
        fn(out, info, r);
        return XF_OK;
    }
    xf_outfile of;
    xf_status st = xf_outfile_open(&of, path, err);
    if (st != XF_OK) return st;
    fn(of.f, info, r);
    st = xf_outfile_commit(&of, err);
    if (st == XF_OK) fprintf(out, "%s\n", path);
    return st;
}

/* The rule's graphviz text through `dot -Tpng` into `path`: the text
 * goes to dot in an unnamed temporary file, the picture through
 * xf_outfile, so nothing is left next to `path`. */
static xf_status export_png(FILE *out, const char *path, const xf_rulesdb_rule_info *info,
                            const xf_rule *r, xf_error *err)
{
    FILE *in = tmpfile();
    if (!in) return XF_FAIL(err, XF_ERR_IO, "cannot create a temporary file: %s", strerror(errno));
    xf_audit_write_dot(in, info, r);
    if (ferror(in) || fflush(in) != 0 || fseek(in, 0, SEEK_SET) != 0) {
        int e = errno;
        fclose(in);
        return XF_FAIL(err, XF_ERR_IO, "cannot write a temporary file: %s", strerror(e));
    }
    xf_outfile of;
    xf_status st = xf_outfile_open(&of, path, err);
    if (st == XF_OK && (st = audit_run_dot("png", in, of.f, err)) != XF_OK)
        xf_outfile_abort(&of);
    else if (st == XF_OK && (st = xf_outfile_commit(&of, err)) == XF_OK)
        fprintf(out, "%s\n", path);
    fclose(in);
    return st;
}

static xf_status export_side(FILE *out, const xf_graph *side, const char *graph_name,
                             const char *path, xf_error *err)
{
    xf_graph g;
    xf_status st = xf_audit_onnx_side(side, graph_name, &g, err);
    if (st != XF_OK) return st;
    st = xf_onnx_save(&g, path, err);
    if (st == XF_OK) fprintf(out, "%s\n", path);
    xf_graph_free(&g);
    return st;
}

static xf_status export_onnx(FILE *out, const char *to, const xf_rulesdb_rule_info *info,
                             const xf_rule *r, xf_error *err)
{
    char stem[4096], path[4200], name[64];
    if (to) {
        size_t n = strlen(to);
        if (n > 5 && strcmp(to + n - 5, ".onnx") == 0) n -= 5;
        snprintf(stem, sizeof stem, "%.*s", (int)n, to);
    } else {
        snprintf(stem, sizeof stem, "rule-%" PRId64, info->id);
    }
    snprintf(path, sizeof path, "%s.src.onnx", stem);
    snprintf(name, sizeof name, "rule%" PRId64 "_source", info->id);
    xf_status st = export_side(out, &r->src, name, path, err);
    if (st != XF_OK) return st;
    snprintf(path, sizeof path, "%s.dst.onnx", stem);
    snprintf(name, sizeof name, "rule%" PRId64 "_target", info->id);
    return export_side(out, &r->dst, name, path, err);
}

/* A rule that does not exist or does not load is a failed request
 * (*failed = 1, the message through o->diag); a file that cannot be
 * written is an error. */
xf_status xf_audit_export(FILE *out, xf_rulesdb *db, const xf_audit_options *o, int64_t *failed,
                          xf_error *err)
{
    *failed = 0;
    int64_t id;
    xf_status st = audit_parse_id(o->id, &id, err);
    if (st != XF_OK) return st;
    const char *fmt = o->format;
    if (!fmt) return XF_FAIL(err, XF_ERR_INVALID, "export needs --format dot, png, json or onnx");
    if (strcmp(fmt, "dot") && strcmp(fmt, "png") && strcmp(fmt, "json") && strcmp(fmt, "onnx"))
        return XF_FAIL(err, XF_ERR_INVALID, "unknown export format '%s' (dot, png, json or onnx)",
                       fmt);
    if (!strcmp(fmt, "png") && !audit_have_dot()) return audit_no_dot(err);
    xf_rulesdb_rule_info info;
    xf_rule r;
    xf_error lerr;
    if (audit_load(db, id, &info, &r, &lerr) != XF_OK) {
        audit_diag(o, &lerr);
        *failed = 1;
    } else if (!strcmp(fmt, "json")) {
        st = write_text(out, o->out, xf_audit_write_json, &info, &r, err);
    } else if (!strcmp(fmt, "dot")) {
        st = write_text(out, o->out, xf_audit_write_dot, &info, &r, err);
    } else if (!strcmp(fmt, "png")) {
        char def[64];
        snprintf(def, sizeof def, "rule-%" PRId64 ".png", id);
        st = export_png(out, o->out ? o->out : def, &info, &r, err);
    } else {
        st = export_onnx(out, o->out, &info, &r, err);
    }
    xf_rule_free(&r);
    xf_rulesdb_rule_info_free(&info);
    return st;
}
