/*
 * xferdb — inspect and audit an rlflow rules database (written by xfergen,
 * updated by xferverify): counts, filtered rule lists, one rule in readable
 * form, exports (graphviz, PNG, JSON, ONNX), an end-to-end check of the
 * exported ONNX models, a diff of two databases, and a static HTML report.
 *
 *   xferdb stats DB                     counts by status, size, operator; last runs
 *   xferdb list DB [filters]            one line per rule: id, status, sizes, src => dst
 *   xferdb families DB [filters]        layout-operator rules by family and status
 *   xferdb show DB ID                   one rule in full
 *   xferdb explain DB ID                a derived rule's chain, replayed step by step
 *   xferdb export DB ID --format F      dot, png, json or onnx (cmd_export.c)
 *   xferdb check-export DB [filters]    ONNX pairs run in the interpreter
 *   xferdb diff A.db B.db               rules in one and not the other
 *   xferdb report DB -o DIR             static HTML page with pictures
 *
 * Databases are opened read-only. Exit status: 0 success, 1 the request
 * failed on a readable database (no such rule, a stored rule that does not
 * load, a check that did not pass, diff found differences), 2 bad usage or
 * a file that is not a readable rules database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xferdb.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xferdb COMMAND DB [options]\n"
            "\n"
            "commands:\n"
            "  stats DB                rule counts by status, size and operator; recent runs\n"
            "  list DB [filters]       one line per rule: id, status, sizes, source => target\n"
            "  families DB [filters]   rules with reshape/flatten/squeeze/unsqueeze/slice/gather\n"
            "                          counted by family (a layout operator moved across an\n"
            "                          element-wise op, matmul, layernorm, softmax, mean or\n"
            "                          transpose; inverse pairs cancelled; head reshapes next\n"
            "                          to split/concat) and status, first rule of each\n"
            "  show DB ID              a rule in full: infix source and target, input shapes,\n"
            "                          output mapping, fingerprint, status, verdict with the\n"
            "                          axioms used or the counterexample\n"
            "  explain DB ID           a derived rule's chain of rewrites replayed step by step,\n"
            "                          each with the rule used and the graph it makes\n"
            "  export DB ID --format dot|png|json|onnx [-o PATH]\n"
            "                          dot: graphviz text (stdout or PATH); png: picture drawn\n"
            "                          by graphviz's dot (PATH, default rule-ID.png); json: the\n"
            "                          interchange format of docs/xferdb.md (stdout or PATH);\n"
            "                          onnx: STEM.src.onnx and STEM.dst.onnx (PATH is the stem,\n"
            "                          default rule-ID) whose graph inputs are the rule inputs\n"
            "  check-export DB [filters] [--trials N] [--seed S]\n"
            "                          export the ONNX pair of every matching rule (default:\n"
            "                          --status proved), read it back, run both models in the\n"
            "                          interpreter on N random input sets (default 3) and count\n"
            "                          the rules whose outputs agree (1e-4 relative)\n"
            "  diff A.db B.db          rules present in one database and not the other, modulo\n"
            "                          renaming of inputs; exit 0 same rules, 1 different\n"
            "  report DB -o DIR [--pictures N]\n"
            "                          static HTML page DIR/index.html: counts, a searchable and\n"
            "                          filterable rule table, pictures of the first N rules\n"
            "                          (default %d) drawn with graphviz when it is installed\n"
            "\n"
            "filters (list, families, check-export):\n"
            "  --status S              candidate, proved, refuted, unknown, pruned or derived\n"
            "  --ops A,B,...           rules that use every one of these operators\n"
            "  --max-size N            rules whose larger side has at most N operators\n"
            "  --limit N               at most N rules\n"
            "  -h, --help              this help (also: xferdb COMMAND --help)\n"
            "\n"
            "exit status: 0 ok, 1 the request failed (no such rule, a check that did not\n"
            "             pass, diff found differences), 2 bad usage or an unreadable database\n",
            XFERDB_DEFAULT_PICTURES);
}

/* What each command takes; `xferdb COMMAND --help` prints its line. */
typedef struct command {
    const char *name;
    int n_pos;       /* positional arguments including the command */
    int filters;     /* accepts --status/--ops/--max-size/--limit */
    const char *opts; /* other options it accepts, space-separated */
    const char *help;
} command;

static const command commands[] = {
    {"stats", 2, 0, "", "xferdb stats DB: rule counts by status, size and operator; recent runs"},
    {"list", 2, 1, "", "xferdb list DB [--status S] [--ops A,B] [--max-size N] [--limit N]"},
    {"families", 2, 1, "",
     "xferdb families DB [--status S] [--ops A,B] [--max-size N] [--limit N]: layout-operator rules by family "
     "and status"},
    {"show", 3, 0, "", "xferdb show DB ID: one rule in full, with its verdict"},
    {"explain", 3, 0, "",
     "xferdb explain DB ID: a derived rule's chain of rewrites by smaller proved rules, replayed\n"
     "step by step with the graph each step makes; exit 1 when it does not replay"},
    {"export", 3, 0, "--format -o",
     "xferdb export DB ID --format dot|png|json|onnx [-o PATH]: one rule as graphviz text, a\n"
     "PNG picture, the JSON interchange document (docs/xferdb.md) or two ONNX models\n"
     "PATH.src.onnx and PATH.dst.onnx"},
    {"check-export", 2, 1, "--trials --seed",
     "xferdb check-export DB [--status S] [--ops A,B] [--max-size N] [--limit N] [--trials N]\n"
     "[--seed S]: export the ONNX pair of every matching rule (default: proved ones), run both\n"
     "in the interpreter on N random input sets and report how many agree"},
    {"diff", 3, 0, "", "xferdb diff A.db B.db: rules in one database and not the other, modulo\n"
                       "renaming of inputs; exit status 0 same rules, 1 different, 2 trouble"},
    {"report", 2, 0, "-o --pictures",
     "xferdb report DB -o DIR [--pictures N]: static HTML report DIR/index.html with counts,\n"
     "search, filters and pictures of the first N rules (graphviz)"},
};
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

static const command *find_command(const char *name)
{
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

/* 1 when `opt` is in the space-separated list. */
static int has_opt(const char *list, const char *opt)
{
    size_t n = strlen(opt);
    for (const char *p = list; (p = strstr(p, opt)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    return 0;
}

void xferdb_error(const xf_error *err)
{
    fprintf(stderr, "xferdb: %s\n", err->msg);
}

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "xferdb: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see xferdb --help)\n");
    return 2;
}

static int parse_positive(const char *opt, const char *s, int64_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 1) {
        fprintf(stderr, "xferdb: %s needs a positive integer, got '%s'\n", opt, s);
        return 0;
    }
    *out = v;
    return 1;
}

static int parse_ops(xferdb_options *o, const char *list)
{
    if (strlen(list) >= sizeof o->ops_buf) return bad_usage("--ops list is too long: %s", list);
    strcpy(o->ops_buf, list);
    int n = 0;
    for (char *tok = strtok(o->ops_buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == XFERDB_MAX_OPS) return bad_usage("--ops lists too many operators: %s", list);
        o->ops[n++] = tok;
    }
    if (n == 0) return bad_usage("--ops needs operator names, got '%s'", list);
    o->filter.ops = o->ops;
    o->filter.n_ops = n;
    return 0;
}

static int is_filter(const char *a)
{
    return !strcmp(a, "--status") || !strcmp(a, "--ops") || !strcmp(a, "--max-size") ||
           !strcmp(a, "--limit");
}

static int takes_value(const char *a)
{
    return is_filter(a) || !strcmp(a, "--format") || !strcmp(a, "-o") ||
           !strcmp(a, "--pictures") || !strcmp(a, "--trials") || !strcmp(a, "--seed");
}

/* One option with its value; -1 to go on, else an exit status. */
static int parse_option(xferdb_options *o, const char *a, const char *v, int *status_given)
{
    int64_t n;
    if (!strcmp(a, "--status")) {
        xf_error err;
        if (xf_rulesdb_status_parse(v, &o->filter.status, &err) != XF_OK) {
            xferdb_error(&err);
            return 2;
        }
        o->filter.any_status = 0;
        *status_given = 1;
    } else if (!strcmp(a, "--ops")) {
        int rc = parse_ops(o, v);
        if (rc) return rc;
    } else if (!strcmp(a, "--format")) {
        o->format = v;
    } else if (!strcmp(a, "-o")) {
        if (!*v) return bad_usage("-o needs a file name, got '%s'", v);
        o->out = v;
    } else if (!strcmp(a, "--seed")) {
        char *end;
        long long s = strtoll(v, &end, 10);
        if (*v == '\0' || *end != '\0' || s < 0)
            return bad_usage("--seed needs a non-negative integer, got '%s'", v);
        o->seed = s;
    } else if (!parse_positive(a, v, &n)) {
        return 2;
    } else if (!strcmp(a, "--max-size")) {
        if (n > 1000000) return bad_usage("--max-size %s is too large", v);
        o->filter.max_size = (int)n;
    } else if (!strcmp(a, "--limit")) {
        o->filter.limit = n;
    } else if (!strcmp(a, "--pictures")) {
        o->pictures = n;
    } else {
        if (n > 1000) return bad_usage("--trials %s is too many (at most 1000)", v);
        o->trials = n;
    }
    return -1;
}

/* Returns -1 to go on, else an exit status. */
static int parse_args(int argc, char **argv, xferdb_options *o)
{
    memset(o, 0, sizeof *o);
    o->filter.any_status = 1;
    o->pictures = XFERDB_DEFAULT_PICTURES;
    o->trials = 3;
    o->seed = 1;
    const char *pos[4];
    const char *opts_seen[16];
    int n_pos = 0, n_seen = 0, help = 0, status_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help = 1;
        } else if (takes_value(a)) {
            if (i + 1 >= argc) return bad_usage("%s needs a value", a);
            int rc = parse_option(o, a, argv[++i], &status_given);
            if (rc >= 0) return rc;
            if (n_seen < 16) opts_seen[n_seen++] = a;
        } else if (a[0] == '-' && a[1] != '\0') {
            return bad_usage("unknown option %s", a);
        } else {
            if (n_pos == 4) return bad_usage("unexpected argument %s", a);
            pos[n_pos++] = a;
        }
    }
    const command *c = n_pos ? find_command(pos[0]) : NULL;
    if (help) {
        if (c)
            printf("usage: %s\n", c->help);
        else
            usage(stdout);
        return 0;
    }
    if (n_pos == 0) {
        usage(stderr);
        return 2;
    }
    o->cmd = pos[0];
    if (!c) return bad_usage("unknown command '%s'", o->cmd);
    if (n_pos < 2) return bad_usage("%s needs a database file", o->cmd);
    if (n_pos != c->n_pos) {
        if (!strcmp(c->name, "show") || !strcmp(c->name, "export") || !strcmp(c->name, "explain"))
            return bad_usage("%s needs a database and a rule id", o->cmd);
        if (!strcmp(c->name, "diff")) return bad_usage("%s needs two databases", o->cmd);
        return bad_usage("%s takes one database", o->cmd);
    }
    for (int i = 0; i < n_seen; i++) {
        if (is_filter(opts_seen[i]) && !c->filters)
            return bad_usage("filters apply to list and check-export only, not to %s", o->cmd);
        if (!is_filter(opts_seen[i]) && !has_opt(c->opts, opts_seen[i])) {
            fprintf(stderr, "xferdb: %s does not take %s (see xferdb %s --help)\n", o->cmd,
                    opts_seen[i], o->cmd);
            return 2;
        }
    }
    if (!strcmp(c->name, "check-export") && !status_given) {
        o->filter.any_status = 0;
        o->filter.status = XF_RULE_PROVED;
    }
    o->db = pos[1];
    o->id = c->n_pos == 3 && strcmp(c->name, "diff") != 0 ? pos[2] : NULL;
    o->db2 = !strcmp(c->name, "diff") ? pos[2] : NULL;
    return -1;
}

int main(int argc, char **argv)
{
    xferdb_options o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    if (!strcmp(o.cmd, "diff")) {
        rc = xferdb_diff(&o);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "xferdb: writing the output failed\n");
            rc = 2;
        }
        return rc;
    }
    xf_error err;
    xf_rulesdb *db = NULL;
    if (xf_rulesdb_open(o.db, XF_RULESDB_READONLY, &db, &err) != XF_OK) {
        xferdb_error(&err);
        return 2;
    }
    if (!strcmp(o.cmd, "stats"))
        rc = xferdb_stats(db, &o);
    else if (!strcmp(o.cmd, "list"))
        rc = xferdb_list(db, &o);
    else if (!strcmp(o.cmd, "families"))
        rc = xferdb_families(db, &o);
    else if (!strcmp(o.cmd, "show"))
        rc = xferdb_show(db, &o);
    else if (!strcmp(o.cmd, "explain"))
        rc = xferdb_explain(db, &o);
    else if (!strcmp(o.cmd, "export"))
        rc = xferdb_export(db, &o);
    else if (!strcmp(o.cmd, "check-export"))
        rc = xferdb_check_export(db, &o);
    else
        rc = xferdb_report(db, &o);
    xf_rulesdb_close(db);
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "xferdb: writing the output failed\n");
        rc = 1;
    }
    return rc;
}
