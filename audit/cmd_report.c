/*
 * cmd_report.c — `xferdb report DB -o DIR [--pictures N]`: a static HTML
 * audit page in DIR/index.html that works from file:// without a server.
 * Collects every rule (status, sizes, operators, infix text and a text form
 * listing each node), the counts by status, size and operator, and draws
 * the first N rules (by id; default XF_AUDIT_DEFAULT_PICTURES) as
 * DIR/img/rule-<id>.svg with graphviz when `dot` is on PATH. Without
 * graphviz the page shows the text forms instead and says so. The page
 * itself is written by report_html.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_impl.h"

/* dot processes at a time: the online CPUs, at most this many. */
#define MAX_DOT_JOBS 16

static void report_free(report *rep)
{
    for (int64_t i = 0; i < rep->n_rules; i++) {
        report_rule *r = &rep->rules[i];
        xf_free(r->ops);
        xf_free(r->src);
        xf_free(r->dst);
        xf_free(r->listing);
    }
    xf_free(rep->rules);
    for (int k = 0; k < 3; k++) xf_free(rep->by[k]);
}

/* Creates directory path unless it exists; *made says whether this did. */
static int make_dir(const char *path, int *made)
{
    *made = 0;
    if (mkdir(path, 0777) == 0) *made = 1;
    if (*made || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    }
    fprintf(stderr, "xferdb: cannot create directory %s: %s\n", path,
            errno == EEXIST ? "a file of that name exists" : strerror(errno));
    return 1;
}

/* "conv2d ewadd": operators of either side, in operator-table order. */
static char *ops_of(const xf_rule *r)
{
    int hs[XF_OP_COUNT], hd[XF_OP_COUNT];
    xf_graph_op_histogram(&r->src, hs);
    xf_graph_op_histogram(&r->dst, hd);
    size_t n = 1;
    for (int op = 0; op < XF_OP_COUNT; op++)
        if (hs[op] || hd[op]) n += strlen(xf_op_get((xf_op)op)->name) + 1;
    char *s = xf_malloc(n);
    if (!s) return NULL;
    s[0] = '\0';
    for (int op = 0; op < XF_OP_COUNT; op++)
        if (hs[op] || hd[op]) {
            if (s[0]) strcat(s, " ");
            strcat(s, xf_op_get((xf_op)op)->name);
        }
    return s;
}

/* Text form of one side: "s2 = conv2d[3x3,s1,same](x0, w0)" per node in
 * topological order, then the outputs. */
static void side_listing(FILE *f, const char *title, const xf_graph *g, char prefix)
{
    int *order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    xf_error err;
    if (!order || xf_graph_topo_order(g, order, &err) != XF_OK) {
        xf_free(order);
        return;
    }
    fprintf(f, "%s:\n", title);
    char name[64], label[300];
    for (int k = 0; k < g->n_nodes; k++) {
        const xf_node *nd = &g->nodes[order[k]];
        fputs("  ", f);
        for (int j = 0; j < nd->n_outputs; j++) {
            audit_value_name(g, order, prefix, nd->outputs[j], name, sizeof name);
            fprintf(f, "%s%s", j ? ", " : "", name);
        }
        audit_node_label(g, order[k], label, sizeof label);
        fprintf(f, " = %s(", label);
        for (int j = 0; j < nd->n_inputs; j++) {
            audit_value_name(g, order, prefix, nd->inputs[j], name, sizeof name);
            fprintf(f, "%s%s", j ? ", " : "", name);
        }
        fputs(")\n", f);
    }
    fputs("  outputs:", f);
    for (int o = 0; o < g->n_outputs; o++) {
        audit_value_name(g, order, prefix, g->outputs[o], name, sizeof name);
        fprintf(f, " %s", name);
    }
    fputc('\n', f);
    xf_free(order);
}

/* The text form of both sides (inputs, then one line per node) in a
 * string from xf_malloc; NULL when the scratch file fails. Written through
 * a temporary file, so that the side listings are plain stream writers. */
static char *listing_of(const xf_rule *r)
{
    FILE *f = tmpfile();
    if (!f) return NULL;
    fputs("inputs:", f);
    for (int i = 0; i < r->src.n_inputs; i++) {
        const xf_value *v = &r->src.values[r->src.inputs[i]];
        char s[96];
        fprintf(f, " %s %s", v->name ? v->name : "?", xf_shape_str(&v->shape, s, sizeof s));
    }
    fputc('\n', f);
    side_listing(f, "source", &r->src, 's');
    side_listing(f, "target", &r->dst, 't');
    long len = ferror(f) || fflush(f) != 0 ? -1 : ftell(f);
    char *buf = len < 0 ? NULL : xf_malloc((size_t)len + 1);
    if (buf) {
        rewind(f);
        if (fread(buf, 1, (size_t)len, f) == (size_t)len) {
            buf[len] = '\0';
        } else {
            xf_free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    return buf;
}

/* Writes <stage>/rule-<id>.dot (a scratch file for dot); 0 ok. */
static int write_dot_file(const char *path, const xf_rulesdb_rule_info *info, const xf_rule *r)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "xferdb: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    xf_audit_write_dot(f, info, r);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "xferdb: writing %s failed\n", path);
        return 1;
    }
    return 0;
}

/* What collect hands add_rule for every rule. */
typedef struct collect_ctx {
    report *rep;
    const char *stage;
    char ***dots;
    int *n_dots;
} collect_ctx;

static int add_rule(void *user, xf_rulesdb *db, const xf_rulesdb_rule_info *info)
{
    const collect_ctx *c = user;
    report *rep = c->rep;
    const char *stage = c->stage;
    char ***dots = c->dots;
    int *n_dots = c->n_dots;
    xf_error err;
    xf_rule r;
    if (xf_rulesdb_load_rule(db, info->id, &r, &err) != XF_OK) {
        audit_error(&err);
        return 1;
    }
    if (rep->n_rules == rep->cap) {
        int64_t nc = rep->cap ? 2 * rep->cap : 1024;
        report_rule *p = xf_realloc(rep->rules, (size_t)nc * sizeof *p);
        if (!p) {
            xf_rule_free(&r);
            fprintf(stderr, "xferdb: out of memory collecting rules\n");
            return 1;
        }
        rep->rules = p;
        rep->cap = nc;
    }
    report_rule *rr = &rep->rules[rep->n_rules++];
    memset(rr, 0, sizeof *rr);
    rr->id = info->id;
    rr->status = info->status;
    rr->size = info->size;
    rr->src_ops = info->src_ops;
    rr->dst_ops = info->dst_ops;
    rr->ops = ops_of(&r);
    rr->src = audit_format(&r.src, &err);
    rr->dst = rr->src ? audit_format(&r.dst, &err) : NULL;
    rr->listing = listing_of(&r);
    int rc = 0;
    if (!rr->ops || !rr->src || !rr->dst || !rr->listing) {
        fprintf(stderr, "xferdb: rule %" PRId64 ": out of memory describing it\n", info->id);
        rc = 1;
    } else if (rep->have_dot && rep->pictures < rep->max_pictures) {
        char path[4300];
        snprintf(path, sizeof path, "%s/rule-%" PRId64 ".dot", stage, info->id);
        char **p = xf_realloc(*dots, sizeof(char *) * ((size_t)*n_dots + 1));
        char *copy = xf_strdup(path);
        if (p) *dots = p;
        if (!p || !copy) {
            xf_free(copy);
            fprintf(stderr, "xferdb: out of memory collecting rules\n");
            rc = 1;
        } else {
            (*dots)[(*n_dots)++] = copy;
            rc = write_dot_file(path, info, &r);
            rr->picture = 1;
            rep->pictures++;
        }
    }
    xf_rule_free(&r);
    return rc;
}

static int collect(report *rep, xf_rulesdb *db, const char *stage, char ***dots, int *n_dots)
{
    xf_error err;
    static const xf_rulesdb_group groups[3] = {XF_RULESDB_BY_STATUS, XF_RULESDB_BY_SIZE,
                                               XF_RULESDB_BY_OP};
    for (int k = 0; k < 3; k++)
        if (xf_rulesdb_count_by(db, groups[k], &rep->by[k], &rep->n_by[k], &err) != XF_OK) {
            audit_error(&err);
            return 1;
        }
    xf_rulesdb_filter all;
    memset(&all, 0, sizeof all);
    all.any_status = 1;
    collect_ctx c = {rep, stage, dots, n_dots};
    return audit_each_rule(db, &all, add_rule, &c) ? 1 : 0;
}

/* "<stage>/rule-<id>.svg" of the .dot file at `dot`. */
static void svg_of(const char *dot, char *path, size_t n)
{
    snprintf(path, n, "%.*s.svg", (int)(strlen(dot) - 4), dot);
}

/* Renders the staged .dot files and renames x.dot.svg to x.svg; the .dot
 * files go. */
static int render(char **dots, int n)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = cpus < 1 ? 1 : cpus > MAX_DOT_JOBS ? MAX_DOT_JOBS : (int)cpus;
    int rc = audit_render_svgs(dots, n, jobs);
    char from[4400], to[4400];
    for (int i = 0; i < n; i++) {
        snprintf(from, sizeof from, "%s.svg", dots[i]);
        svg_of(dots[i], to, sizeof to);
        if (rc == 0 && rename(from, to) != 0) {
            fprintf(stderr, "xferdb: %s was not drawn\n", from);
            rc = 1;
        }
        remove(dots[i]);
    }
    return rc;
}

/* The pictures' staging directory DIR/.img.XXXXXX (path filled), with the
 * mode mkdir gives (mkdtemp's 0700 would become DIR/img's). */
static int make_stage(const char *dir, char *path, size_t n)
{
    snprintf(path, n, "%s/.img.XXXXXX", dir);
    mode_t mask = umask(0);
    umask(mask);
    if (mkdtemp(path) && chmod(path, 0777 & ~mask) == 0) return 0;
    int e = errno;
    rmdir(path); /* when chmod failed */
    fprintf(stderr, "xferdb: cannot create a directory in %s: %s\n", dir, strerror(e));
    path[0] = '\0';
    return 1;
}

/* Moves the drawn pictures from the stage into DIR/img: the whole stage
 * when DIR/img does not exist yet, else picture by picture. */
static int publish(char *stage, const char *img_dir, char **dots, int n)
{
    struct stat st;
    int missing = stat(img_dir, &st) != 0;
    if (missing && errno == ENOENT) {
        if (rename(stage, img_dir) != 0) {
            fprintf(stderr, "xferdb: cannot create %s: %s\n", img_dir, strerror(errno));
            return 1;
        }
        stage[0] = '\0'; /* it is DIR/img now */
        return 0;
    }
    if (missing || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "xferdb: cannot write pictures into %s: %s\n", img_dir,
                missing ? strerror(errno) : "not a directory");
        return 1;
    }
    char from[4400], to[4400];
    for (int i = 0; i < n; i++) {
        svg_of(dots[i], from, sizeof from);
        snprintf(to, sizeof to, "%s/%s", img_dir, strrchr(from, '/') + 1);
        if (rename(from, to) != 0) {
            fprintf(stderr, "xferdb: cannot move a picture into %s: %s\n", to, strerror(errno));
            return 1;
        }
    }
    return 0;
}

/* Removes whatever is left in the stage, then the stage. */
static void discard_stage(const char *stage, char **dots, int n)
{
    char path[4400];
    for (int i = 0; i < n; i++) {
        remove(dots[i]);
        snprintf(path, sizeof path, "%s.svg", dots[i]);
        remove(path);
        svg_of(dots[i], path, sizeof path);
        remove(path);
    }
    rmdir(stage);
}

/* The pictures are drawn in a staging directory and moved into DIR/img
 * only after the page is written, so a failed run leaves DIR as it found
 * it: what existed stays, what the run created goes (DIR too when the run
 * made it). */
int xf_audit_report(FILE *out, xf_rulesdb *db, const xf_audit_options *o)
{
    if (!o->out) {
        fprintf(stderr, "xferdb: report needs -o DIR (see xferdb --help)\n");
        return 2;
    }
    report rep;
    memset(&rep, 0, sizeof rep);
    rep.db_path = xf_rulesdb_path(db);
    rep.max_pictures = o->pictures;
    rep.have_dot = audit_have_dot();
    char img_dir[4200], page[4200], stage[4200] = "";
    snprintf(img_dir, sizeof img_dir, "%s/img", o->out);
    snprintf(page, sizeof page, "%s/index.html", o->out);
    char **dots = NULL;
    int n_dots = 0, made_dir = 0, wrote_page = 0;
    int rc = make_dir(o->out, &made_dir);
    if (rc == 0 && rep.have_dot && rep.max_pictures > 0)
        rc = make_stage(o->out, stage, sizeof stage);
    if (rc == 0) rc = collect(&rep, db, stage, &dots, &n_dots);
    if (rc == 0 && n_dots) rc = render(dots, n_dots);
    if (rc == 0) rc = audit_report_write_html(&rep, page);
    wrote_page = rc == 0;
    if (rc == 0 && stage[0]) rc = publish(stage, img_dir, dots, n_dots);
    if (stage[0]) discard_stage(stage, dots, n_dots);
    if (rc == 0) {
        fprintf(out, "%s: %" PRId64 " rules, %" PRId64 " pictures%s\n", page, rep.n_rules, rep.pictures,
               rep.have_dot ? "" : " (graphviz's dot not found: text forms only)");
    } else if (made_dir) {
        if (wrote_page) remove(page);
        rmdir(o->out);
    }
    for (int i = 0; i < n_dots; i++) xf_free(dots[i]);
    xf_free(dots);
    report_free(&rep);
    return rc;
}
