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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "tools/cli/cli.h"

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

static int parse_status(void *base, const char *name, const char *v, char *msg, size_t n)
{
    xf_audit_options *o = base;
    xf_error err;
    if (!v) return xf_cli_needs(msg, n, name, "a status", v);
    if (xf_rulesdb_status_parse(v, &o->filter.status, &err) != XF_OK) {
        snprintf(msg, n, "%s", err.msg);
        return -1;
    }
    o->filter.any_status = 0;
    return 0;
}

static int parse_ops(void *base, const char *name, const char *v, char *msg, size_t n)
{
    xf_audit_options *o = base;
    if (!v || !*v) return xf_cli_needs(msg, n, name, "operator names", v);
    if (strlen(v) >= sizeof o->ops_buf) return xf_cli_needs(msg, n, name, "a shorter list", v);
    strcpy(o->ops_buf, v);
    int k = 0;
    for (char *tok = strtok(o->ops_buf, ","); tok; tok = strtok(NULL, ",")) {
        if (k == XF_AUDIT_MAX_OPS) return xf_cli_needs(msg, n, name, "at most 32 operators", v);
        o->ops[k++] = tok;
    }
    if (k == 0) return xf_cli_needs(msg, n, name, "operator names", v);
    o->filter.ops = o->ops;
    o->filter.n_ops = k;
    return 0;
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define OFF(f) offsetof(xf_audit_options, f)
/* The filters first (N_FILTERS of them): they apply to list, families and
 * check-export only; the rest are shown in the commands' lines above. */
#define N_FILTERS 4
static const xf_cli_opt opts[] = {
    {.name = "--status", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_status,
     .label = "--status S", .help = "candidate, proved, refuted, unknown, pruned or derived"},
    {.name = "--ops", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_ops,
     .label = "--ops A,B,...", .help = "rules that use every one of these operators"},
    {.name = "--max-size", .type = XF_CLI_INT, .off = OFF(filter.max_size), .lo = 1, .hi = 1000000,
     .what = "a positive integer (at most 1000000)", .label = "--max-size N",
     .help = "rules whose larger side has at most N operators"},
    {.name = "--limit", .type = XF_CLI_I64, .off = OFF(filter.limit), .lo = 1,
     .what = "a positive integer", .label = "--limit N", .help = "at most N rules"},
    {.name = "--format", .type = XF_CLI_STR, .off = OFF(format), .what = "dot, png, json or onnx"},
    {.name = "-o", .type = XF_CLI_STR, .off = OFF(out), .what = "a file name"},
    {.name = "--pictures", .type = XF_CLI_I64, .off = OFF(pictures), .lo = 1,
     .what = "a positive integer"},
    {.name = "--trials", .type = XF_CLI_I64, .off = OFF(trials), .lo = 1, .hi = 1000,
     .what = "a positive integer (at most 1000)"},
    {.name = "--seed", .type = XF_CLI_I64, .off = OFF(seed), .lo = 0,
     .what = "a non-negative integer"},
};
#define N_OPTS ((int)(sizeof opts / sizeof opts[0]))

static const char help_head[] =
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
    "                          (default " STR(XF_AUDIT_DEFAULT_PICTURES) ") drawn with graphviz when it is installed\n"
    "\n"
    "filters (list, families, check-export):\n";
static const char help_tail[] =
    "  -h, --help         this help (also: xferdb COMMAND --help)\n"
    "\n"
    "exit status: 0 ok, 1 the request failed (no such rule, a check that did not\n"
    "             pass, diff found differences), 2 bad usage or an unreadable database\n";

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "xferdb: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see xferdb --help)\n");
    return 2;
}

/* Returns -1 to go on, else an exit status. */
static int parse_args(int argc, char **argv, xf_audit_options *o, const char **cmd)
{
    memset(o, 0, sizeof *o);
    o->filter.any_status = 1;
    o->pictures = XF_AUDIT_DEFAULT_PICTURES;
    o->trials = 3;
    o->seed = 1;
    const char *pos[4] = {NULL};
    unsigned char seen[N_OPTS] = {0};
    xf_cli_spec spec = {"xferdb", help_head, help_tail, opts, N_OPTS, pos, 4, o, seen};
    for (int i = 1; i < argc; i++) /* `xferdb COMMAND --help`: that command's line */
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            const command *c = NULL;
            for (int j = 1; j < argc && !c; j++) c = find_command(argv[j]);
            if (c) printf("usage: %s\n", c->help);
            else xf_cli_usage(&spec, stdout);
            return 0;
        }
    int rc = xf_cli_parse(&spec, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    int n_pos = 0;
    while (n_pos < 4 && pos[n_pos]) n_pos++;
    if (n_pos == 0) {
        xf_cli_usage(&spec, stderr);
        return 2;
    }
    const command *c = find_command(pos[0]);
    *cmd = pos[0];
    if (!c) return bad_usage("unknown command '%s'", *cmd);
    if (n_pos < 2) return bad_usage("%s needs a database file", *cmd);
    if (n_pos != c->n_pos) {
        if (!strcmp(c->name, "show") || !strcmp(c->name, "export") || !strcmp(c->name, "explain"))
            return bad_usage("%s needs a database and a rule id", *cmd);
        if (!strcmp(c->name, "diff")) return bad_usage("%s needs two databases", *cmd);
        return bad_usage("%s takes one database", *cmd);
    }
    for (int i = 0; i < N_OPTS; i++) {
        if (!seen[i]) continue;
        if (i < N_FILTERS && !c->filters)
            return bad_usage("filters apply to list and check-export only, not to %s", *cmd);
        if (i >= N_FILTERS && !has_opt(c->opts, opts[i].name)) {
            fprintf(stderr, "xferdb: %s does not take %s (see xferdb %s --help)\n", *cmd,
                    opts[i].name, *cmd);
            return 2;
        }
    }
    if (!strcmp(c->name, "check-export") && !seen[0]) {
        o->filter.any_status = 0;
        o->filter.status = XF_RULE_PROVED;
    }
    o->db = pos[1];
    o->id = c->n_pos == 3 && strcmp(c->name, "diff") != 0 ? pos[2] : NULL;
    o->db2 = !strcmp(c->name, "diff") ? pos[2] : NULL;
    return -1;
}

/* Prints a message a view hands over without stopping. */
static void print_diag(void *user, const xf_error *msg)
{
    (void)user;
    fprintf(stderr, "xferdb: %s\n", msg->msg);
}

/* A view's exit status: a bad request (XF_ERR_INVALID) 2, another error 1,
 * rules the request failed on 1, else 0. diff: any error is trouble (2). */
static int exit_status(const char *cmd, xf_status st, const xf_error *err, int64_t failed)
{
    if (st != XF_OK) {
        fprintf(stderr, "xferdb: %s\n", err->msg);
        return st == XF_ERR_INVALID || !strcmp(cmd, "diff") ? 2 : 1;
    }
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    xf_audit_options o;
    const char *cmd = NULL;
    int rc = parse_args(argc, argv, &o, &cmd);
    if (rc >= 0) return rc;
    o.diag = print_diag;
    xf_error err;
    int64_t failed = 0;
    if (!strcmp(cmd, "diff")) {
        xf_status st = xf_audit_diff(stdout, &o, &failed, &err);
        rc = exit_status(cmd, st, &err, failed);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "xferdb: writing the output failed\n");
            rc = 2;
        }
        return rc;
    }
    xf_rulesdb *db = NULL;
    if (xf_rulesdb_open(o.db, XF_RULESDB_READONLY, &db, &err) != XF_OK) {
        fprintf(stderr, "xferdb: %s\n", err.msg);
        return 2;
    }
    xf_audit_view *view = xf_audit_find_view(cmd, 0);
    rc = 2;
    if (view) {
        xf_status st = view(stdout, db, &o, &failed, &err);
        rc = exit_status(cmd, st, &err, failed);
    }
    xf_rulesdb_close(db);
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "xferdb: writing the output failed\n");
        rc = 1;
    }
    return rc;
}
