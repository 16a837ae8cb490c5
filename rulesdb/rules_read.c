/*
 * rules_read.c — reading rules back: a graph or a whole rule rebuilt as IR
 * (deserialized, validated), the stored description of a rule, filtered
 * iteration in id order, and the counts behind `xferdb stats`.
 */
#include "db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ rules as IR */

/* Loads graph `id` (inputs named as in xf_rulesdb_graph_deserialize). */
static xf_status load_graph(xf_rulesdb *db, int64_t id, const char *const *input_names,
                            xf_graph *out, xf_error *err)
{
    xf_graph_init(out);
    sqlite3_stmt *s = db_stmt(db, STMT_GRAPH_LOAD, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    xf_status st;
    if (rc == SQLITE_ROW) {
        const uint8_t *blob = sqlite3_column_blob(s, 1);
        size_t len = (size_t)sqlite3_column_bytes(s, 1);
        st = xf_rulesdb_graph_deserialize(blob, len, input_names, out, err);
        if (st != XF_OK) xf_error_prefix(err, "%s: graph %lld", db->path, (long long)id);
    } else if (rc == SQLITE_DONE) {
        st = XF_FAIL(err, XF_ERR_INVALID, "%s: no graph with id %lld", db->path, (long long)id);
    } else {
        st = db_fail(db, err, "loading a graph");
    }
    sqlite3_reset(s);
    return st;
}

/* Splits "a,b,c" in place into a NULL-terminated array (xf_malloc'd). */
static const char **split_names(char *s, int *oom)
{
    size_t n = 2;
    for (const char *p = s; *p; p++) n += *p == ',';
    const char **v = xf_malloc(sizeof(char *) * n);
    if (!v) {
        *oom = 1;
        return NULL;
    }
    size_t k = 0;
    if (*s) {
        v[k++] = s;
        for (char *p = s; *p; p++)
            if (*p == ',') {
                *p = '\0';
                v[k++] = p + 1;
            }
    }
    v[k] = NULL;
    return v;
}

/* The domain of a rule being loaded: the one recorded (text), or for a
 * proved rule without one what its operators demand. */
static xf_status load_domain(xf_rule *r, xf_rule_status status, const char *text,
                             const char *const *names, xf_error *err)
{
    int n = 0;
    while (names && names[n]) n++;
    if (text) return xf_domain_parse(text, names, n, &r->domain, err);
    if (status == XF_RULE_PROVED) return xf_domain_of_rule(r, &r->domain, err);
    return XF_OK; /* not recorded: known 0 */
}

xf_status xf_rulesdb_load_rule(xf_rulesdb *db, int64_t id, xf_rule *out, xf_error *err)
{
    xf_rule_init(out);
    sqlite3_stmt *s = db_stmt(db, db->version >= 4 ? STMT_RULE_LOAD : STMT_RULE_LOAD_V3, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(s);
        if (rc == SQLITE_DONE)
            return XF_FAIL(err, XF_ERR_INVALID, "%s: no rule with id %lld", db->path, (long long)id);
        return db_fail(db, err, "loading a rule");
    }
    int64_t src = sqlite3_column_int64(s, 0), dst = sqlite3_column_int64(s, 1);
    uint64_t fp = (uint64_t)sqlite3_column_int64(s, 3);
    int oom = 0;
    char *names = db_column_strdup(s, 2, &oom);
    char *status_text = db_column_strdup(s, 4, &oom);
    char *domain = db_column_strdup(s, 5, &oom);
    sqlite3_reset(s);
    const char **v = names ? split_names(names, &oom) : NULL;
    xf_status st = XF_OK;
    xf_rule_status status = XF_RULE_CANDIDATE;
    if (oom) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading rule %lld", (long long)id);
    if (st == XF_OK) st = xf_rulesdb_status_parse(status_text ? status_text : "", &status, err);
    if (st == XF_OK) st = load_graph(db, src, v, &out->src, err);
    if (st == XF_OK) st = load_graph(db, dst, v, &out->dst, err);
    if (st == XF_OK) {
        out->fingerprint = fp;
        st = xf_rule_validate(out, err);
    }
    if (st == XF_OK) st = load_domain(out, status, domain, v, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "rule %lld", (long long)id);
        xf_rule_free(out);
    }
    xf_free(v);
    xf_free(names);
    xf_free(status_text);
    xf_free(domain);
    return st;
}

/* ------------------------------------------------------- rule descriptions */

void xf_rulesdb_rule_info_init(xf_rulesdb_rule_info *info)
{
    memset(info, 0, sizeof *info);
}

void xf_rulesdb_rule_info_free(xf_rulesdb_rule_info *info)
{
    xf_free(info->input_names);
    xf_free(info->src_text);
    xf_free(info->dst_text);
    xf_free(info->why);
    xf_free(info->axioms);
    xf_free(info->detail);
    xf_free(info->counterexample);
    xf_free(info->domain);
    xf_rulesdb_rule_info_init(info);
}

/* Columns read by fill_info, in order. LEFT JOINs: a rule whose graph rows
 * are missing is still listed (broken), not silently left out. */
#define INFO_COLUMNS(domain)                                                             \
    "SELECT r.id, r.src_graph, r.dst_graph, r.src_ops, r.dst_ops, r.size, r.n_outputs,"   \
    " r.fingerprint, r.status, r.run_id, r.input_names, gs.infix, gd.infix, r.why,"       \
    " r.subsumed_by, r.verified_at IS NOT NULL, r.verify_ms, r.axioms, r.verdict_detail," \
    " r.counterexample, gs.id IS NULL OR gd.id IS NULL, " domain                          \
    " FROM rules r LEFT JOIN graphs gs ON gs.id = r.src_graph"                            \
    " LEFT JOIN graphs gd ON gd.id = r.dst_graph"
static const char info_columns_v4[] = INFO_COLUMNS("r.domain");
static const char info_columns_v3[] = INFO_COLUMNS("NULL"); /* older files: no domain */

static const char *info_columns(const xf_rulesdb *db)
{
    return db->version >= 4 ? info_columns_v4 : info_columns_v3;
}

static xf_status fill_info(xf_rulesdb *db, sqlite3_stmt *s, xf_rulesdb_rule_info *info,
                           xf_error *err)
{
    xf_rulesdb_rule_info_free(info);
    int oom = 0;
    info->id = sqlite3_column_int64(s, 0);
    info->src_graph = sqlite3_column_int64(s, 1);
    info->dst_graph = sqlite3_column_int64(s, 2);
    info->src_ops = sqlite3_column_int(s, 3);
    info->dst_ops = sqlite3_column_int(s, 4);
    info->size = sqlite3_column_int(s, 5);
    info->n_outputs = sqlite3_column_int(s, 6);
    info->fingerprint = (uint64_t)sqlite3_column_int64(s, 7);
    const char *status = (const char *)sqlite3_column_text(s, 8);
    xf_status st = xf_rulesdb_status_parse(status ? status : "", &info->status, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "%s: rule %lld", db->path, (long long)info->id);
        return st;
    }
    info->run_id = sqlite3_column_int64(s, 9);
    info->input_names = db_column_strdup(s, 10, &oom);
    info->src_text = db_column_strdup(s, 11, &oom);
    info->dst_text = db_column_strdup(s, 12, &oom);
    info->why = db_column_strdup(s, 13, &oom);
    info->subsumed_by = sqlite3_column_int64(s, 14);
    info->has_verdict = sqlite3_column_int(s, 15);
    info->time_ms = sqlite3_column_double(s, 16);
    info->axioms = db_column_strdup(s, 17, &oom);
    info->detail = db_column_strdup(s, 18, &oom);
    info->counterexample = db_column_blobdup(s, 19, &info->counterexample_len, &oom);
    info->broken = sqlite3_column_int(s, 20);
    info->domain = db_column_strdup(s, 21, &oom);
    if (oom) {
        xf_rulesdb_rule_info_free(info);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading a rule");
    }
    return XF_OK;
}

xf_status xf_rulesdb_get_rule(xf_rulesdb *db, int64_t id, xf_rulesdb_rule_info *info,
                              xf_error *err)
{
    char sql[sizeof info_columns_v4 + 32];
    snprintf(sql, sizeof sql, "%s WHERE r.id = ?1", info_columns(db));
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK)
        return db_fail(db, err, "preparing a rule query");
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    xf_status st;
    if (rc == SQLITE_ROW)
        st = fill_info(db, s, info, err);
    else if (rc == SQLITE_DONE)
        st = XF_FAIL(err, XF_ERR_INVALID, "%s: no rule with id %lld", db->path, (long long)id);
    else
        st = db_fail(db, err, "reading a rule");
    sqlite3_finalize(s);
    return st;
}

/* ----------------------------------------------------------------- filters */

/* Appends the WHERE clause of f to sql (room for it is reserved by the
 * caller: 160 bytes per op); binds come from bind_filter in the same order. */
static xf_status where_clause(xf_rulesdb *db, const xf_rulesdb_filter *f, char *sql, size_t n,
                              xf_error *err)
{
    size_t len = strlen(sql);
    len += (size_t)snprintf(sql + len, n - len, " WHERE 1");
    if (!f) return XF_OK;
    if (!f->any_status) {
        if ((int)f->status < 0 || f->status >= XF_RULE_STATUS_COUNT)
            return XF_FAIL(err, XF_ERR_INVALID, "rule status %d is out of range", (int)f->status);
        len += (size_t)snprintf(sql + len, n - len, " AND r.status = ?");
    }
    if (f->max_size > 0) len += (size_t)snprintf(sql + len, n - len, " AND r.size <= ?");
    if (f->size > 0) len += (size_t)snprintf(sql + len, n - len, " AND r.size = ?");
    for (int i = 0; i < f->n_ops; i++) {
        xf_op op = xf_op_from_name(f->ops[i]);
        if (op == XF_OP_COUNT || op == XF_OP_OPAQUE)
            return XF_FAIL(err, XF_ERR_INVALID, "%s: unknown operator '%s' in the filter",
                           db->path, f->ops[i]);
        len += (size_t)snprintf(sql + len, n - len,
                                " AND EXISTS (SELECT 1 FROM rule_ops o WHERE o.rule_id = r.id"
                                " AND o.op = ?)");
    }
    return XF_OK;
}

/* Binds f's values; the next free column, or -1 when a bind failed (the op
 * names are copied: the filter may go before the iterator steps). */
static int bind_filter(sqlite3_stmt *s, const xf_rulesdb_filter *f)
{
    int col = 1;
    if (!f) return col;
    if (!f->any_status)
        sqlite3_bind_text(s, col++, xf_rulesdb_status_name(f->status), -1, SQLITE_STATIC);
    if (f->max_size > 0) sqlite3_bind_int(s, col++, f->max_size);
    if (f->size > 0) sqlite3_bind_int(s, col++, f->size);
    for (int i = 0; i < f->n_ops; i++)
        if (sqlite3_bind_text(s, col++, f->ops[i], -1, SQLITE_TRANSIENT) != SQLITE_OK) return -1;
    return col;
}

/* Prepares `head` + the filter's WHERE clause + `tail`, bound. */
static xf_status prepare_filtered(xf_rulesdb *db, const char *head, const xf_rulesdb_filter *f,
                                  const char *tail, sqlite3_stmt **out, int *next_col,
                                  xf_error *err)
{
    *out = NULL;
    size_t n = strlen(head) + strlen(tail) + 96 + (f ? (size_t)f->n_ops * 160 : 0);
    char *sql = xf_malloc(n);
    if (!sql) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory building a query");
    snprintf(sql, n, "%s", head);
    xf_status st = where_clause(db, f, sql, n, err);
    if (st == XF_OK) {
        size_t len = strlen(sql);
        snprintf(sql + len, n - len, "%s", tail);
        if (sqlite3_prepare_v2(db->h, sql, -1, out, NULL) != SQLITE_OK)
            st = db_fail(db, err, "preparing a rule query");
    }
    xf_free(sql);
    if (st == XF_OK && (*next_col = bind_filter(*out, f)) < 0) {
        st = db_fail(db, err, "binding a rule query");
        sqlite3_finalize(*out);
        *out = NULL;
    }
    return st;
}

/* ------------------------------------------------------------- iteration */

struct xf_rulesdb_iter {
    xf_rulesdb *db;
    sqlite3_stmt *s;
};

xf_status xf_rulesdb_iter_begin(xf_rulesdb *db, const xf_rulesdb_filter *f, xf_rulesdb_iter **it,
                                xf_error *err)
{
    *it = NULL;
    xf_rulesdb_iter *i = xf_calloc(1, sizeof *i);
    if (!i) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory starting a rule query");
    i->db = db;
    int col = 0;
    int limited = f && f->limit > 0;
    xf_status st = prepare_filtered(db, info_columns(db), f,
                                    limited ? " ORDER BY r.id LIMIT ?" : " ORDER BY r.id", &i->s,
                                    &col, err);
    if (st != XF_OK) {
        xf_free(i);
        return st;
    }
    if (limited) sqlite3_bind_int64(i->s, col, f->limit);
    *it = i;
    return XF_OK;
}

xf_status xf_rulesdb_iter_next(xf_rulesdb_iter *it, xf_rulesdb_rule_info *info, int *has,
                               xf_error *err)
{
    *has = 0;
    int rc = sqlite3_step(it->s);
    if (rc == SQLITE_DONE) return XF_OK;
    if (rc != SQLITE_ROW) return db_fail(it->db, err, "reading rules");
    xf_status st = fill_info(it->db, it->s, info, err);
    if (st == XF_OK) *has = 1;
    return st;
}

void xf_rulesdb_iter_free(xf_rulesdb_iter *it)
{
    if (!it) return;
    sqlite3_finalize(it->s);
    xf_free(it);
}

/* ------------------------------------------------------------------ counts */

static xf_status count_query(xf_rulesdb *db, sqlite3_stmt *s, int64_t *n, xf_error *err)
{
    xf_status st = XF_OK;
    if (sqlite3_step(s) == SQLITE_ROW)
        *n = sqlite3_column_int64(s, 0);
    else
        st = db_fail(db, err, "counting");
    sqlite3_finalize(s);
    return st;
}

xf_status xf_rulesdb_count_rules(xf_rulesdb *db, const xf_rulesdb_filter *f, int64_t *n,
                                 xf_error *err)
{
    *n = 0;
    sqlite3_stmt *s = NULL;
    int col = 0;
    xf_status st = prepare_filtered(db, "SELECT count(*) FROM rules r", f, "", &s, &col, err);
    if (st != XF_OK) return st;
    return count_query(db, s, n, err);
}

xf_status xf_rulesdb_count_broken(xf_rulesdb *db, int64_t *n, xf_error *err)
{
    *n = 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db->h,
                           "SELECT count(*) FROM rules r"
                           " WHERE NOT EXISTS (SELECT 1 FROM graphs g WHERE g.id = r.src_graph)"
                           " OR NOT EXISTS (SELECT 1 FROM graphs g WHERE g.id = r.dst_graph)",
                           -1, &s, NULL) != SQLITE_OK)
        return db_fail(db, err, "preparing a count");
    return count_query(db, s, n, err);
}

xf_status xf_rulesdb_count_graphs(xf_rulesdb *db, int64_t *n, xf_error *err)
{
    *n = 0;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db->h, "SELECT count(*) FROM graphs", -1, &s, NULL) != SQLITE_OK)
        return db_fail(db, err, "preparing a count");
    return count_query(db, s, n, err);
}

static const char *const group_sql[] = {
    [XF_RULESDB_BY_STATUS] = "SELECT status, count(*) FROM rules GROUP BY status",
    [XF_RULESDB_BY_SIZE] = "SELECT size, count(*) FROM rules GROUP BY size ORDER BY size",
    [XF_RULESDB_BY_OP] =
        "SELECT op, count(*) AS n FROM rule_ops GROUP BY op ORDER BY n DESC, op",
};

xf_status xf_rulesdb_count_by(xf_rulesdb *db, xf_rulesdb_group by, xf_rulesdb_count **rows,
                              int *n_rows, xf_error *err)
{
    *rows = NULL;
    *n_rows = 0;
    if ((int)by < 0 || by > XF_RULESDB_BY_OP)
        return XF_FAIL(err, XF_ERR_INVALID, "unknown grouping %d", (int)by);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db->h, group_sql[by], -1, &s, NULL) != SQLITE_OK)
        return db_fail(db, err, "preparing a count");
    xf_rulesdb_count *v = NULL;
    int n = 0, cap = 0;
    xf_status st = XF_OK;
    if (by == XF_RULESDB_BY_STATUS) { /* every status, in enum order, zeros included */
        cap = XF_RULE_STATUS_COUNT;
        v = xf_calloc((size_t)cap, sizeof *v);
        if (!v) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory counting rules");
        for (int i = 0; v && i < cap; i++)
            snprintf(v[i].key, sizeof v[i].key, "%s", xf_rulesdb_status_name((xf_rule_status)i));
        n = cap;
    }
    int rc = SQLITE_DONE;
    while (st == XF_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(s, 0);
        int64_t count = sqlite3_column_int64(s, 1);
        if (by == XF_RULESDB_BY_STATUS) {
            xf_rule_status stt;
            if (xf_rulesdb_status_parse(key ? key : "", &stt, NULL) == XF_OK) v[stt].n = count;
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            xf_rulesdb_count *nv = xf_realloc(v, sizeof *v * (size_t)cap);
            if (!nv) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory counting rules");
                break;
            }
            v = nv;
        }
        snprintf(v[n].key, sizeof v[n].key, "%s", key ? key : "");
        v[n].n = count;
        n++;
    }
    if (st == XF_OK && rc != SQLITE_DONE) st = db_fail(db, err, "counting rules");
    sqlite3_finalize(s);
    if (st != XF_OK) {
        xf_free(v);
        return st;
    }
    *rows = v;
    *n_rows = n;
    return XF_OK;
}
