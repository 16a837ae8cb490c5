/*
 * cmd_stats.c — `xferdb stats DB`: how many graphs and rules the database
 * holds, rules by status, by size (operators on the larger side) and by
 * operator (rules using it on either side), and the most recent runs with
 * their options, state and per-stage timings and counts. A run stored as
 * running whose process is gone shows as interrupted (killed); the file is
 * opened read-only, so the next writer's open records that. Broken rules
 * (their graph rows missing) are counted, and make the exit status 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "audit_impl.h"

#define RECENT_RUNS 5

static int print_group(FILE *out, xf_rulesdb *db, xf_rulesdb_group by, const char *title)
{
    xf_error err;
    xf_rulesdb_count *rows = NULL;
    int n = 0;
    if (xf_rulesdb_count_by(db, by, &rows, &n, &err) != XF_OK) {
        audit_error(&err);
        return 1;
    }
    fprintf(out, "%s:\n", title);
    if (n == 0) fprintf(out, "  (none)\n");
    for (int i = 0; i < n; i++) fprintf(out, "  %-16s %10" PRId64 "\n", rows[i].key, rows[i].n);
    xf_free(rows);
    return 0;
}

static void print_opt(FILE *out, const char *label, const char *v)
{
    if (v && *v) fprintf(out, "      %-10s %s\n", label, v);
}

static void print_run(FILE *out, const xf_rulesdb_run_info *r)
{
    fprintf(out, "  run %" PRId64 ": %s %s, %s, started %s", r->id, r->tool,
           r->tool_version ? r->tool_version : "",
           r->gone ? "interrupted (killed: its process is gone)"
                   : xf_rulesdb_run_state_name(r->state),
           r->started ? r->started : "?");
    if (r->ended) fprintf(out, ", ended %s", r->ended);
    fprintf(out, "\n");
    print_opt(out, "options", r->options);
    print_opt(out, "inputs", r->input_set);
    print_opt(out, "vocab", r->vocab);
    fprintf(out, "      %-10s %" PRIu64 "\n", "seed", r->seed);
    if (r->checkpoint) fprintf(out, "      %-10s %zu bytes\n", "checkpoint", r->checkpoint_len);
    for (int i = 0; i < r->n_stages; i++)
        fprintf(out, "      %-20s %10.3f s %12" PRId64 "\n", r->stages[i].name, r->stages[i].seconds,
               r->stages[i].count);
}

static int print_runs(FILE *out, xf_rulesdb *db)
{
    xf_error err;
    int64_t ids[RECENT_RUNS];
    int n = 0;
    if (xf_rulesdb_run_recent(db, ids, RECENT_RUNS, &n, &err) != XF_OK) {
        audit_error(&err);
        return 1;
    }
    fprintf(out, "last runs:\n");
    if (n == 0) fprintf(out, "  (none)\n");
    xf_rulesdb_run_info info;
    xf_rulesdb_run_info_init(&info);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (xf_rulesdb_run_get(db, ids[i], &info, &err) != XF_OK) {
            audit_error(&err);
            rc = 1;
        } else {
            print_run(out, &info);
        }
    }
    xf_rulesdb_run_info_free(&info);
    return rc;
}

int xf_audit_stats(FILE *out, xf_rulesdb *db, const xf_audit_options *o)
{
    (void)o;
    xf_error err;
    int64_t n_rules = 0, n_graphs = 0, n_broken = 0;
    if (xf_rulesdb_count_rules(db, NULL, &n_rules, &err) != XF_OK ||
        xf_rulesdb_count_graphs(db, &n_graphs, &err) != XF_OK ||
        xf_rulesdb_count_broken(db, &n_broken, &err) != XF_OK) {
        audit_error(&err);
        return 1;
    }
    fprintf(out, "%s: %" PRId64 " rules over %" PRId64 " graphs (schema version %d)\n",
           xf_rulesdb_path(db), n_rules, n_graphs, xf_rulesdb_schema_version(db));
    if (n_broken) {
        fprintf(out, "broken: %" PRId64 " rules refer to graph rows that are missing\n", n_broken);
        fprintf(stderr,
                "xferdb: %s: %" PRId64 " broken rules (missing graph rows; xferdb list names "
                "them)\n",
                xf_rulesdb_path(db), n_broken);
    }
    int rc = print_group(out, db, XF_RULESDB_BY_STATUS, "by status");
    if (rc == 0) rc = print_group(out, db, XF_RULESDB_BY_SIZE, "by size (operators, larger side)");
    if (rc == 0) rc = print_group(out, db, XF_RULESDB_BY_OP, "by operator (rules using it)");
    if (rc == 0) rc = print_runs(out, db);
    return rc ? rc : n_broken ? 1 : 0;
}
