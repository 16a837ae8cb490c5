/*
 * db_open.c — opening and closing a rules database: SQLite connection
 * settings (WAL journal, foreign keys, busy timeout), recognition and
 * migration of the schema (schema.c), runs left `running` by a dead process
 * marked interrupted when a writer opens (run_owner.c), and closing with an
 * open batch rolled back so nothing of an uncommitted batch survives; and
 * removing a database file with SQLite's files beside it.
 *
 * Every reader (xferdb, the agent's --rules, the verifier's workers) opens
 * through the one read-only path here. A WAL database needs its -shm file
 * even to be read; in a read-only directory (a shared, write-protected rule
 * set) SQLite cannot create it and fails with "attempt to write a readonly
 * database". The read-only path then reopens the file as immutable
 * (file:PATH?immutable=1): no locks, no -shm, the main file only. That is
 * exact when there is no WAL content (the last writer checkpointed it on
 * close); a non-empty -wal would be ignored, so that case is refused.
 */
#include "db_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long a writer waits for another process's lock before failing. */
#define BUSY_TIMEOUT_MS 10000
/* A writer's page cache at most, in KiB (negative cache_size: KiB), taken as
 * pages are used. */
#define WRITE_CACHE_KIB "65536"

static xf_status configure(xf_rulesdb *db, xf_error *err)
{
    sqlite3_extended_result_codes(db->h, 1);
    sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS);
    xf_status st = db_schema_check_and_migrate(db, err);
    if (st != XF_OK) return st;
    if (db->readonly) return db_exec(db, "PRAGMA foreign_keys = ON", err);
    /* journal_mode answers with a row; sqlite3_exec discards it. WAL keeps
     * readers (xferdb) working while a generator writes. A writer's page
     * cache may grow to WRITE_CACHE_KIB (SQLite's default is 2 MB): xfergen
     * writes hundreds of thousands of rules in one transaction, and with
     * the default the graphs' hash index and the rules' indexes are written
     * out of the cache and read back again in its middle (a bulk copy of the
     * four-operator database: half the system time, a quarter of the CPU).
     * Each write is a savepoint (db_op_begin) inside the caller's
     * transaction, and SQLite copies every page a savepoint changes first
     * into a statement journal: in memory, not a temporary file written
     * with a system call per page (xfergen's write: a third of its time). */
    st = db_exec(db,
                 "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                 " PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;"
                 " PRAGMA cache_size = -" WRITE_CACHE_KIB,
                 err);
    if (st == XF_OK) st = db_runs_mark_dead(db, err);
    return st;
}

/* SQLite's answer to a first read: 0 ok, else the (extended) result code. */
static int probe(sqlite3 *h)
{
    return sqlite3_exec(h, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL);
}

/* "file:PATH?immutable=1" with PATH percent-encoded (xf_malloc'd), NULL
 * when out of memory. */
static char *immutable_uri(const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    char *u = xf_malloc(strlen(path) * 3 + 32);
    if (!u) return NULL;
    char *q = u + sprintf(u, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/-_.~", *p)) {
            *q++ = (char)*p;
        } else {
            *q++ = '%';
            *q++ = hex[*p >> 4];
            *q++ = hex[*p & 15];
        }
    }
    strcpy(q, "?immutable=1");
    return u;
}

/* Opens db->path for reading: plainly, or as immutable when SQLite cannot
 * set up the WAL's shared memory (see the top of the file). */
static xf_status open_readonly(xf_rulesdb *db, xf_error *err)
{
    if (sqlite3_open_v2(db->path, &db->h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return db_fail(db, err, "cannot open");
    sqlite3_extended_result_codes(db->h, 1);
    int rc = probe(db->h) & 0xff;
    if (rc != SQLITE_READONLY && rc != SQLITE_CANTOPEN) return XF_OK; /* configure reports */
    char wal[4096];
    struct stat sb;
    snprintf(wal, sizeof wal, "%s-wal", db->path);
    if (stat(wal, &sb) == 0 && sb.st_size > 0)
        return XF_FAIL(err, XF_ERR_IO,
                       "%s: cannot be read where it is: its directory is read-only and %s holds "
                       "changes not yet in the main file; open it once for writing (xferdb on a "
                       "writable copy of both files does)",
                       db->path, wal);
    char *uri = immutable_uri(db->path);
    if (!uri) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory opening", db->path);
    sqlite3_close_v2(db->h);
    db->h = NULL;
    rc = sqlite3_open_v2(uri, &db->h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    xf_free(uri);
    if (rc != SQLITE_OK) return db_fail(db, err, "cannot open (read-only, immutable)");
    return XF_OK;
}

xf_status xf_rulesdb_open(const char *path, int flags, xf_rulesdb **out, xf_error *err)
{
    *out = NULL;
    if (!path || !*path) return XF_FAIL(err, XF_ERR_INVALID, "rules database: empty path");
    int readonly = (flags & XF_RULESDB_READONLY) != 0;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT || readonly || !(flags & XF_RULESDB_CREATE))
            return XF_FAIL(err, XF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    } else if (!S_ISREG(sb.st_mode)) {
        return XF_FAIL(err, XF_ERR_IO, "%s: not a regular file", path);
    }
    xf_rulesdb *db = xf_calloc(1, sizeof *db);
    if (!db) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory opening", path);
    db->readonly = readonly;
    db->create = (flags & XF_RULESDB_CREATE) != 0;
    db->path = xf_malloc(strlen(path) + 1);
    if (!db->path) {
        xf_free(db);
        return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory opening", path);
    }
    strcpy(db->path, path);
    xf_status st;
    if (readonly)
        st = open_readonly(db, err);
    else if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
             SQLITE_OK)
        st = db_fail(db, err, "cannot open");
    else
        st = XF_OK;
    if (st == XF_OK) st = configure(db, err);
    if (st != XF_OK) {
        xf_rulesdb_close(db);
        return st;
    }
    *out = db;
    return XF_OK;
}

void xf_rulesdb_close(xf_rulesdb *db)
{
    if (!db) return;
    if (db->in_batch) sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    db_stmts_free(db);
    sqlite3_close_v2(db->h); /* deferred until unfinished iterators are freed */
    xf_free(db->path);
    xf_free(db);
}

const char *xf_rulesdb_path(const xf_rulesdb *db)
{
    return db->path;
}

int xf_rulesdb_schema_version(const xf_rulesdb *db)
{
    return db->version;
}

void xf_rulesdb_remove(const char *path)
{
    static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
    char file[4200];
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        snprintf(file, sizeof file, "%s%s", path, sides[i]);
        unlink(file);
    }
}
