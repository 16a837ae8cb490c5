/*
 * rules_write.c — writing rules: graphs deduplicated by canonical hash,
 * rules deduplicated by (source, target) pair with the set of operators
 * they use (for filters and statistics), the bulk insert, status and
 * verdict updates, and the status names stored in the database.
 */
#include "db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[XF_RULE_STATUS_COUNT] = {
    "candidate", "proved", "refuted", "unknown", "pruned", "derived"};

const char *xf_rulesdb_status_name(xf_rule_status s)
{
    return (int)s >= 0 && s < XF_RULE_STATUS_COUNT ? status_names[s] : "invalid";
}

xf_status xf_rulesdb_status_parse(const char *name, xf_rule_status *out, xf_error *err)
{
    for (int i = 0; i < XF_RULE_STATUS_COUNT; i++)
        if (strcmp(name, status_names[i]) == 0) {
            *out = (xf_rule_status)i;
            return XF_OK;
        }
    *out = XF_RULE_CANDIDATE;
    return XF_FAIL(err, XF_ERR_INVALID,
                   "unknown rule status '%s' (expected candidate, proved, refuted, unknown, "
                   "pruned or derived)",
                   name);
}

/* Infix text of g in a xf_malloc'd string, growing the buffer as needed. */
static xf_status format_alloc(const xf_graph *g, char **out, xf_error *err)
{
    *out = NULL;
    for (size_t n = 256; n <= ((size_t)1 << 24); n *= 4) {
        char *buf = xf_malloc(n);
        if (!buf) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory formatting a graph");
        xf_error local;
        xf_status st = xf_graph_format(g, buf, n, &local);
        if (st == XF_OK) {
            *out = buf;
            return XF_OK;
        }
        xf_free(buf);
        if (st != XF_ERR_INVALID) {
            if (err) *err = local;
            return st;
        }
    }
    return XF_FAIL(err, XF_ERR_UNSUPPORTED, "graph text is longer than 16 MiB");
}

static void prepared_graph_free(xf_rulesdb_prepared_graph *pg)
{
    xf_free(pg->data);
    xf_free(pg->infix);
    memset(pg, 0, sizeof *pg);
}

/* g's row: its hash, serialization and text. */
static xf_status graph_prepare(const xf_graph *g, xf_rulesdb_prepared_graph *pg, xf_error *err)
{
    prepared_graph_free(pg);
    xf_status st = xf_graph_hash_checked(g, XF_HASH_CONTENT, &pg->hash, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "graph cannot be hashed");
        return st;
    }
    pg->n_ops = g->n_nodes;
    pg->n_inputs = g->n_inputs;
    pg->n_outputs = g->n_outputs;
    st = xf_rulesdb_graph_serialize(g, &pg->data, &pg->len, err);
    if (st == XF_OK) st = format_alloc(g, &pg->infix, err);
    if (st != XF_OK) prepared_graph_free(pg);
    return st;
}

/* Stores a prepared graph unless its hash is known. Runs inside an op. */
static xf_status graph_put(xf_rulesdb *db, const xf_rulesdb_prepared_graph *pg, int64_t *id,
                           int *inserted, xf_error *err)
{
    *id = 0;
    *inserted = 0;
    sqlite3_stmt *s = db_stmt(db, STMT_GRAPH_BY_HASH, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)pg->hash);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(s, 0);
        sqlite3_reset(s);
        return XF_OK;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return db_fail(db, err, "looking up a graph");
    s = db_stmt(db, STMT_GRAPH_INSERT, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, (sqlite3_int64)pg->hash);
    sqlite3_bind_int(s, 2, pg->n_ops);
    sqlite3_bind_int(s, 3, pg->n_inputs);
    sqlite3_bind_int(s, 4, pg->n_outputs);
    sqlite3_bind_int(s, 5, XF_RULESDB_GRAPH_FORMAT);
    sqlite3_bind_blob(s, 6, pg->data, (int)pg->len, SQLITE_STATIC);
    sqlite3_bind_text(s, 7, pg->infix, -1, SQLITE_STATIC);
    xf_status st = db_step_done(db, s, "storing a graph", err);
    sqlite3_clear_bindings(s);
    if (st != XF_OK) return st;
    *id = sqlite3_last_insert_rowid(db->h);
    *inserted = 1;
    db->batch_writes++;
    return XF_OK;
}

xf_status xf_rulesdb_add_graph(xf_rulesdb *db, const xf_graph *g, int64_t *id, int *inserted,
                               xf_error *err)
{
    int ins = 0;
    *id = 0;
    xf_rulesdb_prepared_graph pg;
    memset(&pg, 0, sizeof pg);
    xf_status st = graph_prepare(g, &pg, err);
    if (st == XF_OK) st = db_op_begin(db, err);
    if (st == XF_OK) st = db_op_end(db, graph_put(db, &pg, id, &ins, err), err);
    prepared_graph_free(&pg);
    if (st != XF_OK) ins = 0, *id = 0;
    if (inserted) *inserted = ins;
    return st;
}

/* "x0,w0,w1": the rule's input names (in<i> where unnamed). */
static xf_status input_names(const xf_graph *g, char **out, xf_error *err)
{
    size_t n = 1;
    for (int i = 0; i < g->n_inputs; i++) {
        const char *nm = g->values[g->inputs[i]].name;
        n += (nm ? strlen(nm) : 16) + 1;
        if (nm && (strchr(nm, ',') || !*nm))
            return XF_FAIL(err, XF_ERR_INVALID,
                           "rule input %d name '%s' must be non-empty and contain no comma", i, nm);
    }
    char *s = xf_malloc(n);
    if (!s) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory storing a rule");
    size_t len = 0;
    s[0] = '\0';
    for (int i = 0; i < g->n_inputs; i++) {
        const char *nm = g->values[g->inputs[i]].name;
        if (nm)
            len += (size_t)snprintf(s + len, n - len, "%s%s", i ? "," : "", nm);
        else
            len += (size_t)snprintf(s + len, n - len, "%sin%d", i ? "," : "", i);
    }
    *out = s;
    return XF_OK;
}

static xf_status store_ops(xf_rulesdb *db, int64_t rule, const xf_rulesdb_prepared *p,
                           xf_error *err)
{
    for (int op = 0; op < XF_OP_COUNT; op++) {
        if (!p->ops[op]) continue;
        sqlite3_stmt *s = db_stmt(db, STMT_RULE_OP_INSERT, err);
        if (!s) return err ? err->code : XF_ERR_IO;
        sqlite3_bind_int64(s, 1, rule);
        sqlite3_bind_text(s, 2, xf_op_get((xf_op)op)->name, -1, SQLITE_STATIC);
        xf_status st = db_step_done(db, s, "storing a rule's operators", err);
        if (st != XF_OK) return st;
    }
    return XF_OK;
}

void xf_rulesdb_prepared_init(xf_rulesdb_prepared *p)
{
    memset(p, 0, sizeof *p);
}

void xf_rulesdb_prepared_free(xf_rulesdb_prepared *p)
{
    prepared_graph_free(&p->src);
    prepared_graph_free(&p->dst);
    xf_free(p->input_names);
    xf_rulesdb_prepared_init(p);
}

xf_status xf_rulesdb_rule_prepare(const xf_rule *r, xf_rulesdb_prepared *p, xf_error *err)
{
    xf_rulesdb_prepared_free(p);
    xf_status st = xf_rule_validate(r, err);
    if (st == XF_OK) st = graph_prepare(&r->src, &p->src, err);
    if (st == XF_OK) st = graph_prepare(&r->dst, &p->dst, err);
    if (st == XF_OK) st = input_names(&r->src, &p->input_names, err);
    if (st != XF_OK) {
        xf_rulesdb_prepared_free(p);
        return st;
    }
    p->n_outputs = r->src.n_outputs;
    p->fingerprint = r->fingerprint;
    int hist[XF_OP_COUNT], h2[XF_OP_COUNT];
    xf_graph_op_histogram(&r->src, hist);
    xf_graph_op_histogram(&r->dst, h2);
    for (int op = 0; op < XF_OP_COUNT; op++) p->ops[op] = hist[op] + h2[op] > 0;
    return XF_OK;
}

/* Stores one prepared rule. Runs inside an op. */
static xf_status rule_put(xf_rulesdb *db, const xf_rulesdb_prepared *p,
                          const xf_rulesdb_rule_meta *meta, int64_t *id, int *inserted,
                          xf_error *err)
{
    *id = 0;
    *inserted = 0;
    if (meta && ((int)meta->status < 0 || meta->status >= XF_RULE_STATUS_COUNT))
        return XF_FAIL(err, XF_ERR_INVALID, "rule status %d is out of range", (int)meta->status);
    int64_t src = 0, dst = 0;
    int dummy;
    xf_status st = graph_put(db, &p->src, &src, &dummy, err);
    if (st == XF_OK) st = graph_put(db, &p->dst, &dst, &dummy, err);
    if (st != XF_OK) return st;
    sqlite3_stmt *s = db_stmt(db, STMT_RULE_BY_PAIR, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, src);
    sqlite3_bind_int64(s, 2, dst);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *id = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    if (rc == SQLITE_ROW) return XF_OK;
    if (rc != SQLITE_DONE) return db_fail(db, err, "looking up a rule");

    s = db_stmt(db, STMT_RULE_INSERT, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    int so = p->src.n_ops, dso = p->dst.n_ops;
    sqlite3_bind_int64(s, 1, src);
    sqlite3_bind_int64(s, 2, dst);
    sqlite3_bind_text(s, 3, p->input_names, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 4, p->n_outputs);
    sqlite3_bind_int(s, 5, so);
    sqlite3_bind_int(s, 6, dso);
    sqlite3_bind_int(s, 7, so > dso ? so : dso);
    sqlite3_bind_int64(s, 8, (sqlite3_int64)p->fingerprint);
    sqlite3_bind_text(s, 9, xf_rulesdb_status_name(meta ? meta->status : XF_RULE_CANDIDATE), -1,
                      SQLITE_STATIC);
    db_bind_text_or_null(s, 10, meta ? meta->why : NULL);
    if (meta && meta->subsumed_by) sqlite3_bind_int64(s, 11, meta->subsumed_by);
    if (meta && meta->run_id) sqlite3_bind_int64(s, 12, meta->run_id);
    st = db_step_done(db, s, "storing a rule", err);
    sqlite3_clear_bindings(s);
    if (st != XF_OK) return st;
    *id = sqlite3_last_insert_rowid(db->h);
    *inserted = 1;
    db->batch_writes++;
    return store_ops(db, *id, p, err);
}

xf_status xf_rulesdb_add_prepared(xf_rulesdb *db, const xf_rulesdb_prepared *p,
                                  const xf_rulesdb_rule_meta *meta, int64_t *id, int *inserted,
                                  xf_error *err)
{
    int ins = 0;
    int64_t got = 0;
    if (id) *id = 0;
    if (inserted) *inserted = 0;
    xf_status st = db_op_begin(db, err);
    if (st != XF_OK) return st;
    st = db_op_end(db, rule_put(db, p, meta, &got, &ins, err), err);
    if (st != XF_OK) return st;
    if (id) *id = got;
    if (inserted) *inserted = ins;
    return st;
}

xf_status xf_rulesdb_add_rule(xf_rulesdb *db, const xf_rule *r, const xf_rulesdb_rule_meta *meta,
                              int64_t *id, int *inserted, xf_error *err)
{
    if (id) *id = 0;
    if (inserted) *inserted = 0;
    xf_rulesdb_prepared p;
    xf_rulesdb_prepared_init(&p);
    xf_status st = xf_rulesdb_rule_prepare(r, &p, err);
    if (st == XF_OK) st = xf_rulesdb_add_prepared(db, &p, meta, id, inserted, err);
    xf_rulesdb_prepared_free(&p);
    return st;
}

xf_status xf_rulesdb_add_rules(xf_rulesdb *db, const xf_rule *rules, int n,
                               const xf_rulesdb_rule_meta *meta, int64_t *ids, int *n_inserted,
                               xf_error *err)
{
    int count = 0;
    if (n_inserted) *n_inserted = 0;
    xf_rulesdb_prepared p;
    xf_rulesdb_prepared_init(&p);
    xf_status st = db_op_begin(db, err);
    if (st != XF_OK) return st;
    for (int i = 0; i < n && st == XF_OK; i++) {
        int64_t id = 0;
        int ins = 0;
        st = xf_rulesdb_rule_prepare(&rules[i], &p, err);
        if (st == XF_OK) st = rule_put(db, &p, meta, &id, &ins, err);
        if (st != XF_OK) xf_error_prefix(err, "rule %d of %d", i, n);
        if (ids) ids[i] = id;
        count += ins;
    }
    xf_rulesdb_prepared_free(&p);
    st = db_op_end(db, st, err);
    if (st == XF_OK && n_inserted) *n_inserted = count;
    return st;
}

/* Runs one prepared update of a rule row; XF_ERR_INVALID if no such rule. */
static xf_status update_rule(xf_rulesdb *db, sqlite3_stmt *s, int64_t id, xf_error *err)
{
    xf_status st = db_op_begin(db, err);
    if (st != XF_OK) {
        sqlite3_clear_bindings(s);
        return st;
    }
    st = db_step_done(db, s, "updating a rule", err);
    sqlite3_clear_bindings(s);
    if (st == XF_OK && sqlite3_changes(db->h) == 0)
        st = XF_FAIL(err, XF_ERR_INVALID, "%s: no rule with id %lld", db->path, (long long)id);
    if (st == XF_OK) db->batch_writes++;
    return db_op_end(db, st, err);
}

xf_status xf_rulesdb_set_status(xf_rulesdb *db, int64_t id, xf_rule_status status,
                                const char *why, int64_t subsumed_by, xf_error *err)
{
    if ((int)status < 0 || status >= XF_RULE_STATUS_COUNT)
        return XF_FAIL(err, XF_ERR_INVALID, "rule status %d is out of range", (int)status);
    sqlite3_stmt *s = db_stmt(db, STMT_RULE_SET_STATUS, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, xf_rulesdb_status_name(status), -1, SQLITE_STATIC);
    db_bind_text_or_null(s, 3, why);
    if (subsumed_by) sqlite3_bind_int64(s, 4, subsumed_by);
    return update_rule(db, s, id, err);
}

xf_status xf_rulesdb_set_verdict(xf_rulesdb *db, int64_t id, const xf_rulesdb_verdict *v,
                                 xf_error *err)
{
    if ((int)v->status < 0 || v->status >= XF_RULE_STATUS_COUNT)
        return XF_FAIL(err, XF_ERR_INVALID, "rule status %d is out of range", (int)v->status);
    sqlite3_stmt *s = db_stmt(db, STMT_RULE_SET_VERDICT, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, xf_rulesdb_status_name(v->status), -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 3, v->time_ms);
    db_bind_text_or_null(s, 4, v->axioms);
    db_bind_text_or_null(s, 5, v->detail);
    if (v->counterexample && v->counterexample_len)
        sqlite3_bind_blob64(s, 6, v->counterexample, v->counterexample_len, SQLITE_STATIC);
    if (v->status == XF_RULE_PROVED || v->status == XF_RULE_DERIVED)
        db_bind_text_or_null(s, 7, v->domain);
    return update_rule(db, s, id, err);
}
