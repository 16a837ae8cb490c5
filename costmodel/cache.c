/*
 * cache.c — the SQLite cost cache.
 *
 * Schema (PRAGMA user_version = 1, WAL journal):
 *   meta(key PRIMARY KEY, value)            key 'format' = 'rlflow-costcache'
 *   op_cost(identity, config, ms, flops, bytes, kernels, measured_at,
 *           PRIMARY KEY(identity, config))
 *   roofline(machine PRIMARY KEY, peak_gflops, bandwidth_gbps, measured_at)
 * `identity` is the backend identity (device, library versions, threads) and
 * `config` the canonical operator description (describe.c), so an entry
 * measured on another machine or library version is never returned.
 *
 * Opening refuses files that are not rlflow cost caches (another SQLite
 * database, a corrupt file, a newer schema) with a message naming the file,
 * instead of writing into them: the checks come before anything is
 * written (the journal mode too), so a refused file is left as it was; and
 * a path that is not a regular file (a device, a FIFO) or that this run
 * must not write over (xf_outfile_check: its model, its rules database) is
 * refused before SQLite opens it. An entry whose cost is not a finite
 * number >= 0 (text, NaN, inf, a negative time: a file edited or damaged)
 * is not returned, so the operator is measured again and the entry
 * replaced. Statements are prepared once.
 */
#include "cache_internal.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SCHEMA_VERSION 1
#define FORMAT_TAG "rlflow-costcache"

struct xf_cost_cache {
    sqlite3 *db;
    char *path; /* for messages */
    sqlite3_stmt *get, *put, *get_roof, *put_roof;
};

static xf_status db_fail(xf_cost_cache *c, xf_error *err, const char *what)
{
    int code = sqlite3_errcode(c->db);
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
        return XF_FAIL(err, XF_ERR_PARSE,
                       "cost cache %s is not a valid SQLite database (%s); delete it or pass "
                       "another --cache path",
                       c->path, sqlite3_errmsg(c->db));
    return XF_FAIL(err, XF_ERR_IO, "cost cache %s: %s: %s", c->path, what, sqlite3_errmsg(c->db));
}

static xf_status exec_sql(xf_cost_cache *c, const char *sql, xf_error *err)
{
    if (sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK) return db_fail(c, err, sql);
    return XF_OK;
}

/* One integer from a query (0 when it returns no row). */
static xf_status query_int(xf_cost_cache *c, const char *sql, int64_t *out, xf_error *err)
{
    sqlite3_stmt *s = NULL;
    *out = 0;
    if (sqlite3_prepare_v2(c->db, sql, -1, &s, NULL) != SQLITE_OK) return db_fail(c, err, sql);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_fail(c, err, sql);
    return XF_OK;
}

/* Accepts an empty database (creates the schema) or an rlflow cost cache of
 * a schema version this build knows. */
static xf_status check_or_create(xf_cost_cache *c, xf_error *err)
{
    int64_t version = 0, n_tables = 0, tagged = 0;
    xf_status st = query_int(c, "PRAGMA user_version", &version, err);
    if (!st) st = query_int(c, "SELECT count(*) FROM sqlite_master", &n_tables, err);
    if (st) return st;
    if (version == 0 && n_tables == 0) {
        return exec_sql(c,
                        "BEGIN;"
                        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                        "INSERT INTO meta VALUES('format','" FORMAT_TAG "');"
                        "CREATE TABLE op_cost(identity TEXT NOT NULL, config TEXT NOT NULL,"
                        " ms REAL NOT NULL, flops REAL NOT NULL, bytes REAL NOT NULL,"
                        " kernels INTEGER NOT NULL, measured_at TEXT NOT NULL,"
                        " PRIMARY KEY(identity, config)) WITHOUT ROWID;"
                        "CREATE TABLE roofline(machine TEXT PRIMARY KEY,"
                        " peak_gflops REAL NOT NULL, bandwidth_gbps REAL NOT NULL,"
                        " measured_at TEXT NOT NULL);"
                        "PRAGMA user_version = 1;"
                        "COMMIT;",
                        err);
    }
    st = query_int(c,
                   "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'",
                   &n_tables, err);
    if (st) return st;
    if (n_tables == 1)
        st = query_int(c, "SELECT count(*) FROM meta WHERE key='format' AND value='" FORMAT_TAG "'",
                       &tagged, err);
    if (st) return st;
    if (!tagged)
        return XF_FAIL(err, XF_ERR_PARSE,
                       "%s is an SQLite database but not an rlflow cost cache; pass another "
                       "--cache path",
                       c->path);
    if (version > SCHEMA_VERSION)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "cost cache %s has schema version %lld, newer than this build's %d; "
                       "upgrade rlflow or use another cache file",
                       c->path, (long long)version, SCHEMA_VERSION);
    if (version != SCHEMA_VERSION)
        return XF_FAIL(err, XF_ERR_PARSE, "cost cache %s has unknown schema version %lld",
                       c->path, (long long)version);
    return XF_OK;
}

static xf_status prepare(xf_cost_cache *c, const char *sql, sqlite3_stmt **s, xf_error *err)
{
    if (sqlite3_prepare_v2(c->db, sql, -1, s, NULL) != SQLITE_OK) return db_fail(c, err, sql);
    return XF_OK;
}

xf_status cm_cache_open(const char *path, xf_cost_cache **out, xf_error *err)
{
    *out = NULL;
    xf_cost_cache *c = xf_calloc(1, sizeof *c);
    if (!c) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory opening the cost cache");
    c->path = xf_strdup(path ? path : ":memory:");
    if (!c->path) {
        xf_free(c);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory opening the cost cache");
    }
    xf_status st = XF_OK;
    struct stat sb;
    if (path && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        st = XF_FAIL(err, XF_ERR_IO, "cost cache %s is not a regular file (%s); pass a file path",
                     path, S_ISCHR(sb.st_mode) ? "a character device"
                           : S_ISBLK(sb.st_mode) ? "a block device"
                           : S_ISFIFO(sb.st_mode) ? "a FIFO"
                           : S_ISDIR(sb.st_mode) ? "a directory"
                                                 : "not a plain file");
        goto out;
    }
    if (path && (st = xf_outfile_check(path, err)) != XF_OK) goto out;
    if (sqlite3_open_v2(c->path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        st = XF_FAIL(err, XF_ERR_IO, "cannot open cost cache %s: %s", c->path,
                     c->db ? sqlite3_errmsg(c->db) : "out of memory");
        goto out;
    }
    sqlite3_busy_timeout(c->db, 10000);
    /* recognised (or created) first: a file refused is left unchanged */
    st = check_or_create(c, err);
    /* WAL lets several processes read while one writes; in-memory ignores it. */
    if (!st) st = exec_sql(c, path ? "PRAGMA journal_mode=WAL" : "PRAGMA journal_mode=MEMORY", err);
    if (!st) st = exec_sql(c, "PRAGMA synchronous=NORMAL", err);
    if (!st)
        st = prepare(c,
                     "SELECT ms, flops, bytes, kernels FROM op_cost WHERE identity=?1 AND config=?2",
                     &c->get, err);
    if (!st)
        st = prepare(c,
                     "INSERT OR REPLACE INTO op_cost VALUES(?1, ?2, ?3, ?4, ?5, ?6,"
                     " strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
                     &c->put, err);
    if (!st)
        st = prepare(c, "SELECT peak_gflops, bandwidth_gbps FROM roofline WHERE machine=?1",
                     &c->get_roof, err);
    if (!st)
        st = prepare(c,
                     "INSERT OR REPLACE INTO roofline VALUES(?1, ?2, ?3,"
                     " strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
                     &c->put_roof, err);
out:
    if (st) {
        cm_cache_close(c);
        return st;
    }
    *out = c;
    return XF_OK;
}

void cm_cache_close(xf_cost_cache *c)
{
    if (!c) return;
    sqlite3_finalize(c->get);
    sqlite3_finalize(c->put);
    sqlite3_finalize(c->get_roof);
    sqlite3_finalize(c->put_roof);
    sqlite3_close(c->db);
    xf_free(c->path);
    xf_free(c);
}

/* A numeric column holding a finite number >= 0. */
static int valid_number(sqlite3_stmt *s, int col)
{
    int t = sqlite3_column_type(s, col);
    if (t != SQLITE_FLOAT && t != SQLITE_INTEGER) return 0;
    double v = sqlite3_column_double(s, col);
    return isfinite(v) && v >= 0;
}

/* The row of an entry (ms, flops, bytes, kernels) is one to trust. */
static int valid_row(sqlite3_stmt *s)
{
    return valid_number(s, 0) && valid_number(s, 1) && valid_number(s, 2) &&
           sqlite3_column_type(s, 3) == SQLITE_INTEGER && sqlite3_column_int64(s, 3) >= 0;
}

xf_status cm_cache_get(xf_cost_cache *c, const char *identity, const char *config,
                            xf_op_cost *out, int *found, xf_error *err)
{
    *found = 0;
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s = c->get;
    sqlite3_bind_text(s, 1, identity, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, config, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW && valid_row(s)) {
        out->ms = sqlite3_column_double(s, 0);
        out->flops = sqlite3_column_double(s, 1);
        out->bytes = sqlite3_column_double(s, 2);
        out->kernels = sqlite3_column_int(s, 3);
        out->from_cache = 1;
        *found = 1;
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_fail(c, err, "looking up a cost");
    return XF_OK;
}

xf_status cm_cache_put(xf_cost_cache *c, const char *identity, const char *config,
                            const xf_op_cost *cost, xf_error *err)
{
    sqlite3_stmt *s = c->put;
    sqlite3_bind_text(s, 1, identity, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, config, -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 3, cost->ms);
    sqlite3_bind_double(s, 4, cost->flops);
    sqlite3_bind_double(s, 5, cost->bytes);
    sqlite3_bind_int(s, 6, cost->kernels);
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_DONE) return db_fail(c, err, "storing a cost");
    return XF_OK;
}

xf_status cm_cache_get_roofline(xf_cost_cache *c, const char *machine, double *peak_gflops,
                                     double *bandwidth_gbps, int *found, xf_error *err)
{
    *found = 0;
    *peak_gflops = *bandwidth_gbps = 0;
    sqlite3_stmt *s = c->get_roof;
    sqlite3_bind_text(s, 1, machine, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *peak_gflops = sqlite3_column_double(s, 0);
        *bandwidth_gbps = sqlite3_column_double(s, 1);
        *found = valid_number(s, 0) && valid_number(s, 1) && isfinite(*peak_gflops) &&
                 isfinite(*bandwidth_gbps) && *peak_gflops > 0 && *bandwidth_gbps > 0;
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_fail(c, err, "looking up the roofline");
    return XF_OK;
}

xf_status cm_cache_put_roofline(xf_cost_cache *c, const char *machine, double peak_gflops,
                                     double bandwidth_gbps, xf_error *err)
{
    sqlite3_stmt *s = c->put_roof;
    sqlite3_bind_text(s, 1, machine, -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 2, peak_gflops);
    sqlite3_bind_double(s, 3, bandwidth_gbps);
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_DONE) return db_fail(c, err, "storing the roofline");
    return XF_OK;
}

xf_status cm_cache_begin(xf_cost_cache *c, xf_error *err)
{
    return exec_sql(c, "BEGIN", err);
}

xf_status cm_cache_commit(xf_cost_cache *c, xf_error *err)
{
    return exec_sql(c, "COMMIT", err);
}

void cm_cache_rollback(xf_cost_cache *c)
{
    if (!sqlite3_get_autocommit(c->db)) sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
}
