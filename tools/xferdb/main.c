/*
 * xferdb — inspect an rlflow rules database (written by xfergen, updated by
 * xferverify): counts, filtered rule lists, and one rule in readable form.
 *
 *   xferdb stats DB                     counts by status, size, operator; last runs
 *   xferdb list DB [filters]            one line per rule: id, status, sizes, src => dst
 *   xferdb show DB ID                   one rule in full
 *
 * The database is opened read-only. Exit status: 0 success, 1 the request
 * failed on a readable database (no such rule, a stored rule that does not
 * load), 2 bad usage or a file that is not a readable rules database.
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
            "  show DB ID              a rule in full: infix source and target, input shapes,\n"
            "                          output mapping, fingerprint, status, verdict\n"
            "\n"
            "filters (list):\n"
            "  --status S              candidate, proved, refuted, unknown or pruned\n"
            "  --ops A,B,...           rules that use every one of these operators\n"
            "  --max-size N            rules whose larger side has at most N operators\n"
            "  --limit N               print at most N rules\n"
            "  -h, --help              this help\n"
            "\n"
            "exit status: 0 ok, 1 the request failed (e.g. no such rule),\n"
            "             2 bad usage or an unreadable database\n");
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

/* Returns -1 to go on, else an exit status. */
static int parse_args(int argc, char **argv, xferdb_options *o)
{
    memset(o, 0, sizeof *o);
    o->filter.any_status = 1;
    const char *pos[3];
    int n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t v;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--status") || !strcmp(a, "--ops") || !strcmp(a, "--max-size") ||
                   !strcmp(a, "--limit")) {
            if (!next) return bad_usage("%s needs a value", a);
            i++;
            if (!strcmp(a, "--status")) {
                xf_error err;
                if (xf_rulesdb_status_parse(next, &o->filter.status, &err) != XF_OK) {
                    xferdb_error(&err);
                    return 2;
                }
                o->filter.any_status = 0;
            } else if (!strcmp(a, "--ops")) {
                int rc = parse_ops(o, next);
                if (rc) return rc;
            } else if (!parse_positive(a, next, &v)) {
                return 2;
            } else if (!strcmp(a, "--max-size")) {
                if (v > 1000000) return bad_usage("--max-size %s is too large", next);
                o->filter.max_size = (int)v;
            } else {
                o->filter.limit = v;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            return bad_usage("unknown option %s", a);
        } else {
            if (n_pos == 3) return bad_usage("unexpected argument %s", a);
            pos[n_pos++] = a;
        }
    }
    if (n_pos == 0) {
        usage(stderr);
        return 2;
    }
    o->cmd = pos[0];
    int want = !strcmp(o->cmd, "show") ? 3 : 2;
    if (strcmp(o->cmd, "stats") && strcmp(o->cmd, "list") && strcmp(o->cmd, "show"))
        return bad_usage("unknown command '%s'", o->cmd);
    if (n_pos < 2) return bad_usage("%s needs a database file", o->cmd);
    if (n_pos != want)
        return bad_usage(want == 3 ? "%s needs a database and a rule id" : "%s takes one database",
                         o->cmd);
    if (strcmp(o->cmd, "list") && (o->filter.n_ops || !o->filter.any_status ||
                                   o->filter.max_size || o->filter.limit))
        return bad_usage("filters apply to list only, not to %s", o->cmd);
    o->db = pos[1];
    o->id = want == 3 ? pos[2] : NULL;
    return -1;
}

int main(int argc, char **argv)
{
    xferdb_options o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
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
    else
        rc = xferdb_show(db, &o);
    xf_rulesdb_close(db);
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "xferdb: writing the output failed\n");
        rc = 1;
    }
    return rc;
}
