/*
 * rulesdb.h — the rules database: where xfergen writes the substitution rules
 * it finds, xferverify records verdicts, and xferdb and the agent read them.
 *
 * One SQLite file (schema in docs/rulesdb.md) holds three things:
 *  - graphs: each rule side once, keyed by the canonical structural hash
 *    (xf_graph_hash), stored in a compact, versioned serialization plus its
 *    infix text for auditors;
 *  - rules: a (source graph, target graph) pair, deduplicated, with sizes,
 *    fingerprint, status (candidate/proved/refuted/unknown/pruned/derived),
 *    why it was pruned or which rule subsumes it, the verifier's verdict,
 *    and for a derived rule its derivation (the chain of rewrites by other
 *    rules that joins its sides);
 *  - runs: provenance of each generator run (tool version, options, input
 *    set, vocabulary, seed, times, per-stage timings and counts, state) and
 *    a checkpoint blob so an interrupted run can be resumed.
 *
 * Writes go through prepared statements. A batch (xf_rulesdb_begin ..
 * xf_rulesdb_commit) is one transaction: a process killed in the middle of a
 * batch leaves the database as it was at the last commit. Writers that need
 * to resume should save their checkpoint inside the same batch as the rules
 * it covers.
 *
 * Opening a file that is not an SQLite database, an SQLite database that is
 * not an rlflow rules database (PRAGMA application_id), or one whose schema
 * version (PRAGMA user_version) is not one this build knows fails with a
 * message naming the file. Only XF_RULESDB_CREATE turns an empty file into
 * a rules database. Read-only opens work in a read-only directory too
 * (db_open.c).
 *
 * A handle is not thread-safe; use one per thread.
 */
#ifndef XF_RULESDB_H
#define XF_RULESDB_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Schema version this build writes (PRAGMA user_version). */
#define XF_RULESDB_SCHEMA_VERSION 4
/* PRAGMA application_id of rlflow rules databases: "RLFW". */
#define XF_RULESDB_APPLICATION_ID 0x524C4657
/* Version of the graph serialization (first bytes of every graph blob). */
#define XF_RULESDB_GRAPH_FORMAT 1

typedef struct xf_rulesdb xf_rulesdb;

/* ------------------------------------------------------------------ status */

typedef enum xf_rule_status {
    XF_RULE_CANDIDATE = 0, /* fingerprints agree; not yet verified */
    XF_RULE_PROVED = 1,    /* the verifier proved it */
    XF_RULE_REFUTED = 2,   /* the verifier found a counterexample */
    XF_RULE_UNKNOWN = 3,   /* the verifier gave up (timeout, unsupported) */
    XF_RULE_PRUNED = 4,    /* redundant: see why / subsumed_by */
    XF_RULE_DERIVED = 5,   /* follows from smaller proved rules by rewriting: its
                              derivation is stored (schema 3, derive/) */
    XF_RULE_STATUS_COUNT
} xf_rule_status;

/* "candidate", "proved", "refuted", "unknown", "pruned", "derived" (the
 * DB's text). */
const char *xf_rulesdb_status_name(xf_rule_status s);
/* Parses one of the names above; the message lists the valid names. */
xf_status xf_rulesdb_status_parse(const char *name, xf_rule_status *out, xf_error *err);

/* ----------------------------------------------------------- open / close */

enum {
    XF_RULESDB_CREATE = 1,  /* create the file (and schema) if missing or empty; without
                               it an empty file is refused (only xfergen creates) */
    XF_RULESDB_READONLY = 2 /* open read-only; the file must exist */
};

/* Opens (and with XF_RULESDB_CREATE creates) a rules database. Older schema
 * versions are migrated in place (not in read-only mode). Opened for
 * writing, runs left running by a process that is gone are marked
 * interrupted. *out is NULL on failure. */
xf_status xf_rulesdb_open(const char *path, int flags, xf_rulesdb **out, xf_error *err);
/* Closes the handle; an open batch is rolled back (nothing of it is kept).
 * NULL is a no-op. */
void xf_rulesdb_close(xf_rulesdb *db);
/* Deletes the database file at path and SQLite's files beside it (-wal,
 * -shm, -journal); a file that is not there is no error. Close it first. */
void xf_rulesdb_remove(const char *path);
const char *xf_rulesdb_path(const xf_rulesdb *db);
/* The file's schema version: XF_RULESDB_SCHEMA_VERSION, or an older one
 * when opened read-only (older files are read as they are, not migrated). */
int xf_rulesdb_schema_version(const xf_rulesdb *db);

/* ----------------------------------------------------------------- batches */

/* Starts a batch (one transaction). Nested begin is XF_ERR_INVALID. */
xf_status xf_rulesdb_begin(xf_rulesdb *db, xf_error *err);
/* Commits the batch. */
xf_status xf_rulesdb_commit(xf_rulesdb *db, xf_error *err);
/* Discards the batch. */
xf_status xf_rulesdb_rollback(xf_rulesdb *db, xf_error *err);
int xf_rulesdb_in_batch(const xf_rulesdb *db);
/* Rows written (graphs + rules inserted, statuses set) since the batch
 * began; callers commit every N writes with this. 0 outside a batch. */
int64_t xf_rulesdb_batch_writes(const xf_rulesdb *db);

/* ------------------------------------------------------------------ graphs */

/* Compact canonical serialization of a rule side (see docs/rulesdb.md):
 * graph inputs with dtype and shape, nodes in a canonical topological order
 * with op name, non-default parameters and input references, outputs. Names
 * are not stored. Graphs holding constant initializers or opaque nodes are
 * XF_ERR_UNSUPPORTED. *buf is xf_malloc'd (caller xf_frees). */
xf_status xf_rulesdb_graph_serialize(const xf_graph *g, uint8_t **buf, size_t *len,
                                     xf_error *err);
/* Rebuilds a graph with the xf_graph builders and validates it. Inputs are
 * named from input_names, a NULL-terminated array (NULL: none); inputs past
 * its end are named "in<i>". `out` is initialised here; on failure it is
 * left empty. */
xf_status xf_rulesdb_graph_deserialize(const uint8_t *buf, size_t len,
                                       const char *const *input_names, xf_graph *out,
                                       xf_error *err);
/* Hands a serialized graph to a sink (ir.h) without building it: its
 * numbering is the serialization's own, which is the sink's. The format
 * and its references are checked here; shape inference and whatever else
 * the consumer needs are the sink's. Inputs are named from input_names
 * (NULL past its end). */
xf_status xf_rulesdb_graph_decode(const uint8_t *buf, size_t len, const char *const *input_names,
                                  const xf_graph_sink *sink, xf_error *err);

/* Stores `g` unless a graph with the same canonical hash is there; *id is
 * the graph's row id either way, *inserted (may be NULL) 1 when new. */
xf_status xf_rulesdb_add_graph(xf_rulesdb *db, const xf_graph *g, int64_t *id, int *inserted,
                               xf_error *err);

/* ------------------------------------------------------------------- rules */

/* Optional attributes of a rule being added (NULL: candidate, no run). */
typedef struct xf_rulesdb_rule_meta {
    xf_rule_status status;
    int64_t run_id;      /* the run that found it, 0: none */
    const char *why;     /* why pruned, NULL: none */
    int64_t subsumed_by; /* rule id that makes it redundant, 0: none */
} xf_rulesdb_rule_meta;

/* Adds rule `r` (validated first): both graphs are stored (deduplicated),
 * then the rule, unless the same (source, target) pair is already there.
 * *id (may be NULL) is the rule's id either way; *inserted (may be NULL) 1
 * when new. The input names of r->src are kept with the rule so it loads
 * back readable.
 * Outside a batch the call is its own transaction. */
xf_status xf_rulesdb_add_rule(xf_rulesdb *db, const xf_rule *r, const xf_rulesdb_rule_meta *meta,
                              int64_t *id, int *inserted, xf_error *err);
/* One rule's rows computed apart from the database, so that other threads
 * can compute them while one thread writes (xfergen's write): both graphs'
 * canonical hashes, serializations and infix texts, the input names and
 * the operators the rule uses. */
typedef struct xf_rulesdb_prepared_graph {
    uint64_t hash;
    int n_ops, n_inputs, n_outputs;
    uint8_t *data; /* xf_rulesdb_graph_serialize */
    size_t len;
    char *infix;   /* xf_graph_format */
} xf_rulesdb_prepared_graph;

typedef struct xf_rulesdb_prepared {
    xf_rulesdb_prepared_graph src, dst;
    char *input_names; /* "x0,w0,w1" */
    int n_outputs;
    uint64_t fingerprint;
    unsigned char ops[XF_OP_COUNT]; /* 1: a side uses the operator */
} xf_rulesdb_prepared;

void xf_rulesdb_prepared_init(xf_rulesdb_prepared *p);
/* Frees p's buffers and initialises it again. */
void xf_rulesdb_prepared_free(xf_rulesdb_prepared *p);
/* Validates r and computes its rows into p (initialised; its old buffers
 * are freed first). Touches no database: any thread may call it. */
xf_status xf_rulesdb_rule_prepare(const xf_rule *r, xf_rulesdb_prepared *p, xf_error *err);
/* Stores a prepared rule exactly as xf_rulesdb_add_rule stores the rule
 * (which is xf_rulesdb_rule_prepare, then this). */
xf_status xf_rulesdb_add_prepared(xf_rulesdb *db, const xf_rulesdb_prepared *p,
                                  const xf_rulesdb_rule_meta *meta, int64_t *id, int *inserted,
                                  xf_error *err);
/* Bulk insert: n rules in one transaction (or inside the caller's batch).
 * ids (may be NULL) receives n ids. On failure nothing of this call is kept
 * when it owned the transaction; inside a caller's batch the caller decides
 * (rollback). Returns how many were new in *n_inserted (may be NULL). */
xf_status xf_rulesdb_add_rules(xf_rulesdb *db, const xf_rule *rules, int n,
                               const xf_rulesdb_rule_meta *meta, int64_t *ids, int *n_inserted,
                               xf_error *err);

/* Sets a rule's status; `why` (NULL: cleared) says why it was pruned or
 * gives a short note; subsumed_by 0: none. XF_ERR_INVALID for an unknown id. */
xf_status xf_rulesdb_set_status(xf_rulesdb *db, int64_t id, xf_rule_status status,
                                const char *why, int64_t subsumed_by, xf_error *err);

/* The verifier's verdict on a rule (status proved/refuted/unknown). */
typedef struct xf_rulesdb_verdict {
    xf_rule_status status;
    double time_ms;              /* verification wall time */
    const char *axioms;          /* names of the axioms used, comma-separated; NULL: none */
    const char *detail;          /* free text (solver reason, method); NULL: none */
    const void *counterexample;  /* opaque blob (refuted), NULL: none */
    size_t counterexample_len;
    const char *domain;          /* proved (or derived): where it holds, the text of
                                    xf_domain_format with the rule's input names; NULL:
                                    not recorded (ignored for other statuses) */
} xf_rulesdb_verdict;

xf_status xf_rulesdb_set_verdict(xf_rulesdb *db, int64_t id, const xf_rulesdb_verdict *v,
                                 xf_error *err);

/* ------------------------------------------------------------ derivations */

/* One step of a derivation: rule by_rule (proved or derived, never the
 * derived rule itself) applied at `location`, from its source to its target
 * side (backward: from target to source). Steps from the source apply, in
 * order, to the graph the previous ones made from the rule's source; steps
 * from the target (from_target, stored after the others) likewise to the
 * rule's target, and both ends meet in one graph. The location is derive/'s
 * text for the matched nodes. */
typedef struct xf_rulesdb_step {
    int64_t by_rule;
    int backward;
    int from_target;
    char location[64];
} xf_rulesdb_step;

/* Marks rule `id` derived (status, time_ms, detail, domain as with a verdict: the
 * domain where its chain holds, derive/) and
 * stores its chain of n >= 1 steps, replacing any earlier one, as one
 * operation. XF_ERR_UNSUPPORTED on a file older than schema version 3
 * (read-only), XF_ERR_INVALID for an unknown id or a step that uses no rule
 * or the rule itself. Callers check the chain first (derive/ replays it). */
xf_status xf_rulesdb_set_derived(xf_rulesdb *db, int64_t id, const xf_rulesdb_step *steps, int n,
                                 double time_ms, const char *detail, const char *domain,
                                 xf_error *err);
/* The chain stored for rule `id`, in order: *steps xf_malloc'd (caller
 * xf_frees), *n 0 when there is none (also on a file older than version 3). */
xf_status xf_rulesdb_get_derivation(xf_rulesdb *db, int64_t id, xf_rulesdb_step **steps, int *n,
                                    xf_error *err);

/* Loads rule `id` as an xf_rule (graphs rebuilt and validated, inputs named
 * as when stored, fingerprint set) with its validity domain: the one
 * recorded; for a proved rule without one (verified before schema 4), what
 * its operators demand (xf_domain_of_rule); otherwise none (known 0: a
 * derived rule without a domain holds nowhere). `out` is initialised here.
 * A recorded domain that does not parse fails the load (XF_ERR_PARSE). */
xf_status xf_rulesdb_load_rule(xf_rulesdb *db, int64_t id, xf_rule *out, xf_error *err);

/* ----------------------------------------------------------------- queries */

/* Selects rules. Zero-initialise, then set what matters; note that a zero
 * filter selects candidates only: set any_status = 1 for every status. */
typedef struct xf_rulesdb_filter {
    int any_status;           /* 1: every status; 0: only `status` */
    xf_rule_status status;
    const char *const *ops;   /* rule (either side) uses every one of these ops */
    int n_ops;
    int max_size;             /* max(src ops, dst ops) <= max_size; 0: no bound */
    int size;                 /* max(src ops, dst ops) == size; 0: any */
    int64_t limit;            /* at most this many rows; 0: all */
} xf_rulesdb_filter;

/* Everything stored about one rule except the graphs themselves. Strings
 * and the blob are owned by the struct: xf_rulesdb_rule_info_free. */
typedef struct xf_rulesdb_rule_info {
    int64_t id;
    int64_t src_graph, dst_graph; /* graph row ids */
    int src_ops, dst_ops;         /* operator counts */
    int size;                     /* max(src_ops, dst_ops) */
    int n_outputs;                /* mapped outputs: src output i -> dst output i */
    uint64_t fingerprint;
    xf_rule_status status;
    int64_t run_id;               /* 0: none */
    char *input_names;            /* comma-separated, in input order */
    char *src_text, *dst_text;    /* infix (xf_graph_format) as stored */
    char *why;                    /* NULL: none */
    int64_t subsumed_by;          /* 0: none */
    int has_verdict;
    double time_ms;
    char *axioms, *detail;        /* NULL: none */
    uint8_t *counterexample;      /* NULL: none */
    size_t counterexample_len;
    int broken;                   /* a graph row it refers to is missing (src_text or
                                     dst_text NULL): it cannot be loaded */
    char *domain;                 /* where it holds (xf_domain text); NULL: not recorded */
} xf_rulesdb_rule_info;

void xf_rulesdb_rule_info_init(xf_rulesdb_rule_info *info);
void xf_rulesdb_rule_info_free(xf_rulesdb_rule_info *info);

/* Fills `info` (previous contents freed; init it once before first use).
 * XF_ERR_INVALID naming the id when there is no such rule. */
xf_status xf_rulesdb_get_rule(xf_rulesdb *db, int64_t id, xf_rulesdb_rule_info *info,
                              xf_error *err);

/* Iterates rules matching a filter in id order. */
typedef struct xf_rulesdb_iter xf_rulesdb_iter;
xf_status xf_rulesdb_iter_begin(xf_rulesdb *db, const xf_rulesdb_filter *f, xf_rulesdb_iter **it,
                                xf_error *err);
/* *has = 1 and `info` filled (previous contents freed), or *has = 0 at the
 * end. */
xf_status xf_rulesdb_iter_next(xf_rulesdb_iter *it, xf_rulesdb_rule_info *info, int *has,
                               xf_error *err);
void xf_rulesdb_iter_free(xf_rulesdb_iter *it);

/* Number of rules matching `f` (f->limit ignored; NULL: all rules). */
xf_status xf_rulesdb_count_rules(xf_rulesdb *db, const xf_rulesdb_filter *f, int64_t *n,
                                 xf_error *err);

typedef enum xf_rulesdb_group {
    XF_RULESDB_BY_STATUS = 0, /* key: status name, every status listed (0 too) */
    XF_RULESDB_BY_SIZE = 1,   /* key: size as decimal text, ascending */
    XF_RULESDB_BY_OP = 2      /* key: op name; rules using that op on either side */
} xf_rulesdb_group;

typedef struct xf_rulesdb_count {
    char key[48];
    int64_t n;
} xf_rulesdb_count;

/* *rows (xf_malloc'd, caller xf_frees) gets *n_rows groups. */
xf_status xf_rulesdb_count_by(xf_rulesdb *db, xf_rulesdb_group by, xf_rulesdb_count **rows,
                              int *n_rows, xf_error *err);
/* Number of broken rules: rules referring to a graph row that is missing
 * (iteration lists them with info->broken set; loading them fails). */
xf_status xf_rulesdb_count_broken(xf_rulesdb *db, int64_t *n, xf_error *err);
/* Number of stored graphs. */
xf_status xf_rulesdb_count_graphs(xf_rulesdb *db, int64_t *n, xf_error *err);

/* -------------------------------------------------------------------- runs */

typedef enum xf_run_state {
    XF_RUN_RUNNING = 0,     /* started; a killed process leaves this until a writer's
                               open finds its process gone and marks it interrupted */
    XF_RUN_INTERRUPTED = 1, /* stopped early (signal, limit); resumable */
    XF_RUN_DONE = 2
} xf_run_state;

const char *xf_rulesdb_run_state_name(xf_run_state s); /* "running", "interrupted", "done" */

/* What a run was asked to do (strings may be NULL). */
typedef struct xf_rulesdb_run_desc {
    const char *tool;         /* "xfergen", "xferverify" */
    const char *tool_version; /* e.g. "0.1.0" */
    const char *options;      /* the command line or a canonical option string */
    const char *input_set;    /* description of the symbolic input tensors */
    const char *vocab;        /* operator vocabulary name or list */
    uint64_t seed;
} xf_rulesdb_run_desc;

/* Records a new run in state running with the current UTC start time and
 * this process (pid, host, process start time) as the one running it. */
xf_status xf_rulesdb_run_start(xf_rulesdb *db, const xf_rulesdb_run_desc *d, int64_t *run_id,
                               xf_error *err);
/* Adds or replaces the figures of one stage ("enumerate", "prune-rename",
 * ...): wall seconds and a count (graphs, candidates, rules left). Stages
 * keep the order they were first recorded in. */
xf_status xf_rulesdb_run_stage(xf_rulesdb *db, int64_t run_id, const char *stage, double seconds,
                               int64_t count, xf_error *err);
/* Replaces the run's checkpoint (opaque to the database). Save it inside
 * the batch whose rules it covers. */
xf_status xf_rulesdb_run_checkpoint(xf_rulesdb *db, int64_t run_id, const void *blob, size_t len,
                                    xf_error *err);
/* Sets the state; interrupted/done also record the end time, running (a
 * resumed run) clears it and records this process as the one running it. */
xf_status xf_rulesdb_run_set_state(xf_rulesdb *db, int64_t run_id, xf_run_state state,
                                   xf_error *err);
/* The most recent run of `tool` that did not finish (state running or
 * interrupted) and, when options is not NULL, was started with the same
 * options; *run_id 0 when there is none. */
xf_status xf_rulesdb_run_find_resumable(xf_rulesdb *db, const char *tool, const char *options,
                                        int64_t *run_id, xf_error *err);

typedef struct xf_rulesdb_stage {
    char *name;
    double seconds;
    int64_t count;
} xf_rulesdb_stage;

/* A run as stored; owned strings and arrays: xf_rulesdb_run_info_free. */
typedef struct xf_rulesdb_run_info {
    int64_t id;
    char *tool, *tool_version, *options, *input_set, *vocab;
    uint64_t seed;
    char *started, *ended; /* ISO-8601 UTC; ended NULL while running */
    xf_run_state state;
    int n_stages;
    xf_rulesdb_stage *stages;
    uint8_t *checkpoint; /* NULL: none */
    size_t checkpoint_len;
    int64_t pid;         /* the process running it; 0: not recorded (schema 1) */
    char *host;          /* its host name; NULL: not recorded */
    int gone;            /* state running, but that process is gone (killed): a
                            writer's next open marks it interrupted */
} xf_rulesdb_run_info;

void xf_rulesdb_run_info_init(xf_rulesdb_run_info *info);
void xf_rulesdb_run_info_free(xf_rulesdb_run_info *info);
/* Fills `info` (previous contents freed); XF_ERR_INVALID for an unknown id. */
xf_status xf_rulesdb_run_get(xf_rulesdb *db, int64_t run_id, xf_rulesdb_run_info *info,
                             xf_error *err);
/* Ids of the most recent runs, newest first: at most `max` into ids. */
xf_status xf_rulesdb_run_recent(xf_rulesdb *db, int64_t *ids, int max, int *n, xf_error *err);

#endif /* XF_RULESDB_H */
