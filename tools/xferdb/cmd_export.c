/*
 * cmd_export.c — `xferdb export DB ID --format dot|png|json|onnx [-o PATH]`:
 * one rule as a graphviz graph (text, or a PNG drawn by `dot`), as the JSON
 * interchange document, or as two ONNX models, <stem>.src.onnx and
 * <stem>.dst.onnx, whose graph inputs are the rule's inputs. Text formats go
 * to stdout unless -o is given; png defaults to rule-<ID>.png and onnx to
 * the stem rule-<ID>. Files written are listed on stdout.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"
#include "xferdb.h"

typedef void (*writer_fn)(FILE *, const xf_rulesdb_rule_info *, const xf_rule *);

/* Writes with `fn` to `path` (through xf_outfile), or to stdout when path
 * is NULL. */
static int write_text(const char *path, writer_fn fn, const xf_rulesdb_rule_info *info,
                      const xf_rule *r)
{
    if (!path) {
        fn(stdout, info, r);
        return 0;
    }
    xf_error err;
    xf_outfile out;
    if (xf_outfile_open(&out, path, &err) == XF_OK) {
        fn(out.f, info, r);
        if (xf_outfile_commit(&out, &err) == XF_OK) {
            printf("%s\n", path);
            return 0;
        }
    }
    xferdb_error(&err);
    return 1;
}

/* The rule's graphviz text through `dot -Tpng` into `path`: the text
 * goes to dot in an unnamed temporary file, the picture through
 * xf_outfile, so nothing is left next to `path`. */
static int export_png(const char *path, const xf_rulesdb_rule_info *info, const xf_rule *r)
{
    FILE *in = tmpfile();
    if (!in) {
        fprintf(stderr, "xferdb: cannot create a temporary file: %s\n", strerror(errno));
        return 1;
    }
    xferdb_write_dot(in, info, r);
    if (ferror(in) || fflush(in) != 0 || fseek(in, 0, SEEK_SET) != 0) {
        fprintf(stderr, "xferdb: cannot write a temporary file: %s\n", strerror(errno));
        fclose(in);
        return 1;
    }
    xf_error err;
    xf_outfile out;
    int rc = 1;
    if (xf_outfile_open(&out, path, &err) != XF_OK) {
        xferdb_error(&err);
    } else if (xferdb_run_dot("png", in, out.f) != 0) {
        xf_outfile_abort(&out);
    } else if (xf_outfile_commit(&out, &err) != XF_OK) {
        xferdb_error(&err);
    } else {
        printf("%s\n", path);
        rc = 0;
    }
    fclose(in);
    return rc;
}

static int export_side(const xf_graph *side, const char *graph_name, const char *path)
{
    xf_error err;
    xf_graph g;
    if (xferdb_onnx_side(side, graph_name, &g, &err) != XF_OK) {
        xferdb_error(&err);
        return 1;
    }
    int rc = 0;
    if (xf_onnx_save(&g, path, &err) != XF_OK) {
        xferdb_error(&err);
        rc = 1;
    } else {
        printf("%s\n", path);
    }
    xf_graph_free(&g);
    return rc;
}

static int export_onnx(const char *out, const xf_rulesdb_rule_info *info, const xf_rule *r)
{
    char stem[4096], path[4200], name[64];
    if (out) {
        size_t n = strlen(out);
        if (n > 5 && strcmp(out + n - 5, ".onnx") == 0) n -= 5;
        snprintf(stem, sizeof stem, "%.*s", (int)n, out);
    } else {
        snprintf(stem, sizeof stem, "rule-%" PRId64, info->id);
    }
    snprintf(path, sizeof path, "%s.src.onnx", stem);
    snprintf(name, sizeof name, "rule%" PRId64 "_source", info->id);
    int rc = export_side(&r->src, name, path);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s.dst.onnx", stem);
    snprintf(name, sizeof name, "rule%" PRId64 "_target", info->id);
    return export_side(&r->dst, name, path);
}

int xferdb_export(xf_rulesdb *db, const xferdb_options *o)
{
    int64_t id = xferdb_parse_id(o->id);
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
    if (!strcmp(fmt, "png") && !xferdb_have_dot()) {
        xferdb_no_dot();
        return 1;
    }
    xf_rulesdb_rule_info info;
    xf_rule r;
    int rc = xferdb_load(db, id, &info, &r);
    if (rc == 0) {
        if (!strcmp(fmt, "json")) {
            rc = write_text(o->out, xferdb_write_json, &info, &r);
        } else if (!strcmp(fmt, "dot")) {
            rc = write_text(o->out, xferdb_write_dot, &info, &r);
        } else if (!strcmp(fmt, "png")) {
            char def[64];
            snprintf(def, sizeof def, "rule-%" PRId64 ".png", id);
            rc = export_png(o->out ? o->out : def, &info, &r);
        } else {
            rc = export_onnx(o->out, &info, &r);
        }
    }
    xf_rule_free(&r);
    xf_rulesdb_rule_info_free(&info);
    return rc;
}
