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
#include "audit_impl.h"

typedef void (*writer_fn)(FILE *, const xf_rulesdb_rule_info *, const xf_rule *);

/* Writes with `fn` to `path` (through xf_outfile), or to `out` when path
 * is NULL. */
static int write_text(FILE *out, const char *path, writer_fn fn, const xf_rulesdb_rule_info *info,
                      const xf_rule *r)
{
    if (!path) {
        fn(out, info, r);
        return 0;
    }
    xf_error err;
    xf_outfile of;
    if (xf_outfile_open(&of, path, &err) == XF_OK) {
        fn(of.f, info, r);
        if (xf_outfile_commit(&of, &err) == XF_OK) {
            fprintf(out, "%s\n", path);
            return 0;
        }
    }
    audit_error(&err);
    return 1;
}

/* The rule's graphviz text through `dot -Tpng` into `path`: the text
 * goes to dot in an unnamed temporary file, the picture through
 * xf_outfile, so nothing is left next to `path`. */
static int export_png(FILE *out, const char *path, const xf_rulesdb_rule_info *info, const xf_rule *r)
{
    FILE *in = tmpfile();
    if (!in) {
        fprintf(stderr, "xferdb: cannot create a temporary file: %s\n", strerror(errno));
        return 1;
    }
    xf_audit_write_dot(in, info, r);
    if (ferror(in) || fflush(in) != 0 || fseek(in, 0, SEEK_SET) != 0) {
        fprintf(stderr, "xferdb: cannot write a temporary file: %s\n", strerror(errno));
        fclose(in);
        return 1;
    }
    xf_error err;
    xf_outfile of;
    int rc = 1;
    if (xf_outfile_open(&of, path, &err) != XF_OK) {
        audit_error(&err);
    } else if (audit_run_dot("png", in, of.f) != 0) {
        xf_outfile_abort(&of);
    } else if (xf_outfile_commit(&of, &err) != XF_OK) {
        audit_error(&err);
    } else {
        fprintf(out, "%s\n", path);
        rc = 0;
    }
    fclose(in);
    return rc;
}

static int export_side(FILE *out, const xf_graph *side, const char *graph_name, const char *path)
{
    xf_error err;
    xf_graph g;
    if (xf_audit_onnx_side(side, graph_name, &g, &err) != XF_OK) {
        audit_error(&err);
        return 1;
    }
    int rc = 0;
    if (xf_onnx_save(&g, path, &err) != XF_OK) {
        audit_error(&err);
        rc = 1;
    } else {
        fprintf(out, "%s\n", path);
    }
    xf_graph_free(&g);
    return rc;
}

static int export_onnx(FILE *out, const char *to, const xf_rulesdb_rule_info *info,
                       const xf_rule *r)
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
    int rc = export_side(out, &r->src, name, path);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s.dst.onnx", stem);
    snprintf(name, sizeof name, "rule%" PRId64 "_target", info->id);
    return export_side(out, &r->dst, name, path);
}

int xf_audit_export(FILE *out, xf_rulesdb *db, const xf_audit_options *o)
{
    int64_t id = audit_parse_id(o->id);
    if (!id) return 2;
    const char *fmt = o->format;
    if (!fmt) {
        fprintf(stderr, "xferdb: export needs --format dot, png, json or onnx\n");
        return 2;
    }
    if (strcmp(fmt, "dot") && strcmp(fmt, "png") && strcmp(fmt, "json") && strcmp(fmt, "onnx")) {
        fprintf(stderr, "xferdb: unknown export format '%s' (dot, png, json or onnx)\n", fmt);
        return 2;
    }
    if (!strcmp(fmt, "png") && !audit_have_dot()) {
        audit_no_dot();
        return 1;
    }
    xf_rulesdb_rule_info info;
    xf_rule r;
    int rc = audit_load(db, id, &info, &r);
    if (rc == 0) {
        if (!strcmp(fmt, "json")) {
            rc = write_text(out, o->out, xf_audit_write_json, &info, &r);
        } else if (!strcmp(fmt, "dot")) {
            rc = write_text(out, o->out, xf_audit_write_dot, &info, &r);
        } else if (!strcmp(fmt, "png")) {
            char def[64];
            snprintf(def, sizeof def, "rule-%" PRId64 ".png", id);
            rc = export_png(out, o->out ? o->out : def, &info, &r);
        } else {
            rc = export_onnx(out, o->out, &info, &r);
        }
    }
    xf_rule_free(&r);
    xf_rulesdb_rule_info_free(&info);
    return rc;
}
