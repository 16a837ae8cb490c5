/*
 * enumerate.h — bounded enumeration of operator graphs and candidate
 * substitutions (the first stage of xfergen).
 *
 * Given a vocabulary (operators with parameter variants) and a set of
 * symbolic float32 input tensors, xf_enum_run builds every DAG of up to
 * max_ops operators over those inputs exactly once (canonical augmentation:
 * a graph is only built from its canonical parent, by appending its canonical
 * sink), evaluates each in exact arithmetic over Z_p (p = 2^61 - 1) and groups
 * graphs by fingerprint. Only irreducible graphs are extended (RepGen): a
 * graph that contains a closed subgraph which is not its fingerprint class's
 * representative can only yield rules that follow from a smaller rule.
 * Every graph whose fingerprint equals an earlier class representative's is
 * a collision; a collision that survives a second Z_p evaluation (new inputs,
 * new keys) and a float32 check with the reference interpreter becomes a
 * candidate xf_rule (src = the new graph, dst = the representative), handed
 * to a callback in a deterministic order that does not depend on the number
 * of threads. docs/enumerate.md describes the vocabulary format, what
 * fingerprints can and cannot see, and the checkpoint file.
 *
 * xf_enum_generate is xfergen's whole run on top of that: enumeration with
 * checkpoints in a rules database (rulesdb/), pruning (prune/) and the
 * write of every candidate, resumable after an interruption.
 */
#ifndef XF_ENUMERATE_H
#define XF_ENUMERATE_H

#include <signal.h>
#include <stdint.h>

#include "ir/ir.h"
#include "prune/prune.h"

/* --------------------------------------------------------------- limits */

#define XF_ENUM_MAX_OPS 6     /* operators per graph */
#define XF_ENUM_MAX_INPUTS 16 /* symbolic inputs in a configuration */
#define XF_ENUM_MAX_OUTPUTS 4 /* config.max_outputs at most */
#define XF_ENUM_MAX_VOCAB 256 /* operator variants in a vocabulary */
#define XF_ENUM_NAME_LEN 64

/* ------------------------------------------------------- field arithmetic */

/* The prime field of fingerprints: p = 2^61 - 1. Elements are uint64 in [0, p). */
#define XF_ENUM_P ((uint64_t)0x1FFFFFFFFFFFFFFFull)

uint64_t xf_enum_fp_add(uint64_t a, uint64_t b);
uint64_t xf_enum_fp_sub(uint64_t a, uint64_t b);
uint64_t xf_enum_fp_mul(uint64_t a, uint64_t b);
uint64_t xf_enum_fp_pow(uint64_t a, uint64_t e);
/* Multiplicative inverse (a != 0; 0 maps to 0). */
uint64_t xf_enum_fp_inv(uint64_t a);
/* Any 64-bit integer reduced into [0, p). */
uint64_t xf_enum_fp_reduce(uint64_t a);
/* Keyed pseudo-random function Z_p -> Z_p (the stand-in for a non-linear
 * element-wise operator: same key and argument, same result). */
uint64_t xf_enum_fp_prf(uint64_t key, uint64_t x);

/* ---------------------------------------------------------- configuration */

/* How a variant's parameters adapt to its input shapes. */
typedef enum xf_enum_pmode {
    XF_ENUM_FIXED = 0,       /* params used as given */
    XF_ENUM_SPLIT_HALF = 1,  /* split: params.n_split (2 or 3) equal parts along params.axis */
    XF_ENUM_SWAP_LAST2 = 2,  /* transpose: swap the last two dims, any rank */
    XF_ENUM_DEPTHWISE = 3,   /* conv: group = input channels */
    /* reshapes by what they do to the axes (xf_view_kind), sized from the input */
    XF_ENUM_VIEW_FLATTEN = 4,   /* the first two axes merged: [a, b, R] -> [a*b, R] */
    XF_ENUM_VIEW_UNFLATTEN = 5, /* [P, R] -> [lead, P/lead, R] (params.group = lead) */
    XF_ENUM_VIEW_SPLIT = 6,     /* [.., H] -> [.., heads, H/heads] (params.group = heads) */
    XF_ENUM_VIEW_MERGE = 7      /* [.., h, d] -> [.., h*d] */
} xf_enum_pmode;

/* One operator with one parameter setting. Axes in `params` may be absolute
 * or negative; graphs handed out store them negative (relative to the last
 * dim), as rules do. */
typedef struct xf_enum_opvar {
    xf_op op;
    xf_params params;
    xf_enum_pmode mode;
    int rank;      /* when > 0: every input must have this rank (matmul rank=2 vs 3) */
    int in_ranks[2]; /* rank=3,2 or rank=2|3,1: bit r set when input i may have rank r (0: any) */
    int broadcast; /* element-wise binary ops: 1 allows numpy broadcasting, 0 needs equal shapes */
    char name[XF_ENUM_NAME_LEN]; /* unique label, the vocabulary line, e.g. "conv2d[kernel=3x3,act=relu]" */
} xf_enum_opvar;

/* A symbolic float32 input tensor (rank 0 for a scalar). */
typedef struct xf_enum_input {
    char name[XF_ENUM_NAME_LEN];
    xf_shape shape;
} xf_enum_input;

/* What is enumerated. Everything here changes the result, and is part of
 * xf_enum_config_hash (checkpoints only resume under the same hash). */
typedef struct xf_enum_config {
    int n_ops;
    xf_enum_opvar *ops; /* owned; n_ops entries */
    int n_inputs;
    xf_enum_input inputs[XF_ENUM_MAX_INPUTS];
    int max_ops;        /* operators per graph, 1..XF_ENUM_MAX_OPS (default 3) */
    int max_outputs;    /* outputs of a rule side, >= 1 (default 2) */
    int max_dim;        /* largest dim of any intermediate tensor (default 8) */
    int64_t max_numel;  /* largest intermediate tensor (default 1024 elements) */
    uint64_t seed;      /* inputs and PRF keys of both evaluations (default 1) */
} xf_enum_config;

/* Empty vocabulary and inputs, defaults above. */
void xf_enum_config_init(xf_enum_config *c);
void xf_enum_config_free(xf_enum_config *c);

/* Replaces vocabulary and inputs with a preset: "default" (TASO's operators
 * plus batched matmul, softmax, gelu, layernorm, mean, and the views),
 * "noviews" (the default without the views), "taso" (TASO's operators and
 * inputs only) or "unbatched" (GPT's heads in the layout ONNX Runtime folds
 * into FusedMatMul: squeeze, unsqueeze, the head reshape and four
 * transposes over u0:1x4x4). XF_ERR_INVALID names the known presets. */
xf_status xf_enum_config_preset(xf_enum_config *c, const char *name, xf_error *err);
/* 1 when name is one of xf_enum_config_preset's presets. */
int xf_enum_is_preset(const char *name);

/* Replaces the vocabulary with the one described by `text`: one variant per
 * line, "op key=value ...", '#' comments (see docs/enumerate.md). `origin`
 * (a file name) prefixes error messages, which give the line. */
xf_status xf_enum_vocab_parse(xf_enum_config *c, const char *text, const char *origin,
                              xf_error *err);
/* The largest vocabulary file read: a vocabulary lists a few dozen
 * operator variants, so anything bigger is the wrong file. */
#define XF_ENUM_VOCAB_MAX_BYTES ((size_t)1 << 20)
/* A preset's name (its vocabulary only), else a file to parse
 * (at most XF_ENUM_VOCAB_MAX_BYTES, XF_ERR_INVALID beyond: reading stops
 * there, so a device or a pipe that never ends is refused too). */
xf_status xf_enum_vocab_load(xf_enum_config *c, const char *preset_or_path, xf_error *err);
/* The vocabulary in the text format xf_enum_vocab_parse reads. */
xf_status xf_enum_vocab_format(const xf_enum_config *c, char *buf, size_t n, xf_error *err);

/* Replaces the inputs: "x0:4x4x4x4,w0:4x4x3x3,s0:scalar" (dims 1..max_dim,
 * names unique identifiers). */
xf_status xf_enum_inputs_parse(xf_enum_config *c, const char *spec, xf_error *err);
/* The inputs in the spec format above. */
xf_status xf_enum_inputs_format(const xf_enum_config *c, char *buf, size_t n, xf_error *err);

/* Checks the whole configuration (every variant has a fingerprint kernel,
 * limits in range, input names unique). */
xf_status xf_enum_config_validate(const xf_enum_config *c, xf_error *err);
/* Hash of everything that changes the result. */
uint64_t xf_enum_config_hash(const xf_enum_config *c);

/* ------------------------------------------------------------- results */

/* A confirmed candidate. rule.src is the newly enumerated graph, rule.dst its
 * fingerprint class's representative (built earlier, possibly with 0
 * operators: outputs that are inputs); both read the same inputs in config
 * order and their outputs are aligned (output i of src equals output i of
 * dst: the multiset match is resolved by sorting outputs by fingerprint).
 * The callback may take the rule (copy the struct, then xf_rule_init the
 * original); otherwise it is freed after the callback returns. */
typedef struct xf_enum_candidate {
    uint64_t seq;        /* 0, 1, 2, ... in emission order */
    xf_rule rule;        /* rule.fingerprint = the class fingerprint */
    int src_ops, dst_ops;
    double float_max_abs; /* float32 check: largest |src - dst| over outputs */
    /* With xf_enum_options.take_records: the rule as the thread or MPI
     * worker that confirmed it serialized it (a record of xfergen's
     * candidate list, which is all xfergen keeps of it) and `rule` left
     * empty; serializing in the serial hand-out had idled the other cores
     * (under MPI, rebuilding the rule on rank 0 only to serialize it again
     * took a third of its time). NULL otherwise. */
    const uint8_t *record;
    size_t record_len;
} xf_enum_candidate;

/* Counters; all cover the whole run including resumed parts. */
typedef struct xf_enum_stats {
    uint64_t graphs;       /* graphs built and fingerprinted (irreducible ones) */
    uint64_t graphs_level[XF_ENUM_MAX_OPS + 1];
    double seconds_level[XF_ENUM_MAX_OPS + 1]; /* wall time building each level (all calls) */
    uint64_t reducible;    /* built but containing a non-representative closed subgraph */
    uint64_t classes;      /* distinct fingerprints (representatives) */
    uint64_t collisions;   /* graphs whose fingerprint matched an earlier class */
    uint64_t candidates;   /* collisions confirmed and handed out */
    uint64_t rejected_second; /* collisions refuted by the second Z_p evaluation */
    uint64_t rejected_float;  /* collisions refuted by the float32 check */
    uint64_t too_many_outputs; /* collisions not paired: more than max_outputs outputs */
    uint64_t stored;       /* graphs kept for extension */
    int levels_done;       /* complete levels (0..max_ops) */
    int stopped;           /* 1: the stop flag ended the run early */
    double seconds;        /* wall time of this call */
    uint64_t store_bytes;  /* peak bytes of graph records and class table */
    uint64_t spill_bytes;  /* the last level's fingerprint records written to disk */
    /* New nodes of kept graphs (a reducible child is dropped before its
     * node is evaluated: hits + misses = graphs) whose output hash was
     * known (no kernel run), and those evaluated. */
    uint64_t memo_hits;
    uint64_t memo_misses;
    /* Under MPI (xf_enum_options.mpi), this call only: */
    int ranks;             /* MPI ranks (0: not under MPI) */
    double rank0_wait_seconds; /* rank 0's wall time waiting for the worker ranks */
    uint64_t pieces;       /* pieces of work handed out */
    /* CPU seconds (all threads) of each phase: building and fingerprinting
     * graphs (parallel; at the last level the class lookups too), class
     * lookups and the last level's spill and its reading back (sequential
     * but the reading back), confirming collisions (parallel), handing
     * candidates to on_candidate (sequential, the callback's time
     * included) */
    double cpu_build, cpu_merge, cpu_confirm, cpu_emit;
} xf_enum_stats;

typedef struct xf_enum_progress {
    int level;             /* operators per graph being built */
    uint64_t parents_done, parents_total; /* of this level */
    uint64_t graphs;       /* as in xf_enum_stats */
    uint64_t classes;
    uint64_t candidates;
    double graphs_per_s;
    double eta_s;          /* of this level; < 0 when unknown */
    int buckets_merged;    /* > 0: the last level's fingerprints being read back from
                              disk, this many of 64 buckets done; classes and
                              candidates of the last level are counted then */
    uint64_t confirmed, to_confirm; /* then its collisions: confirmed of to_confirm */
    double elapsed_s;
    /* After the enumeration (xf_enum_generate only; NULL before): the step,
     * "pruning: " and xf_prune_progress.step, or "writing"; `done` of
     * `total` rules at `per_s` per second, eta_s of the step. A new step is
     * reported at once (done 0), then about every second. */
    const char *step;
    uint64_t done, total;
    double per_s;
} xf_enum_progress;

/* ------------------------------------------------------------------ run */

typedef struct xf_enum_options {
    int threads;            /* worker threads (default 1); result does not depend on it */
    volatile sig_atomic_t *stop; /* when non-zero at a batch boundary: save, stop */
    /* File written on stop and after each level but the last (which ends the
     * run: the caller has every candidate then); the last level's spill
     * files sit next to it ("<checkpoint>.spill.NN"). Both stay after the
     * run; xf_enum_checkpoint_remove deletes them. NULL: none (spill in
     * temporary files). */
    const char *checkpoint;
    int resume;             /* 1: continue from `checkpoint` if it exists */
    /* 1: this is rank 0 of an MPI run: the other ranks (xf_enum_mpi_serve)
     * build the children and confirm the collisions, this one does the rest;
     * the result is the same. XF_ERR_UNSUPPORTED in a build without MPI. */
    int mpi;
    int take_records;       /* 1: candidates come as records (xfergen) */
    double progress_every_s; /* progress callback interval (default 1 s) */
    void *user;
    /* Each candidate, in deterministic order. Non-OK aborts the run with that status. */
    xf_status (*on_candidate)(void *user, xf_enum_candidate *c, xf_error *err);
    xf_status (*on_progress)(void *user, const xf_enum_progress *p, xf_error *err);
    /* Called just before a checkpoint is written: make every candidate
     * received so far durable (commit), so a resumed run neither loses nor
     * repeats one. */
    xf_status (*on_sync)(void *user, xf_error *err);
} xf_enum_options;

void xf_enum_options_init(xf_enum_options *o);

/* Enumerates. On XF_OK, stats->stopped tells whether it ran to the end. */
xf_status xf_enum_run(const xf_enum_config *cfg, const xf_enum_options *opt, xf_enum_stats *stats,
                      xf_error *err);

/* Deletes checkpoint `path` and its spill files (those that exist);
 * XF_ERR_IO naming a file that exists but cannot be removed. */
xf_status xf_enum_checkpoint_remove(const char *path, xf_error *err);

/* ------------------------------------------------------- xfergen's run */

/* One xfergen run: enumerate, prune, and write the kept candidates to a
 * rules database as "candidate" (with `keep_pruned`, also the others as
 * "pruned" with the reason and the rule that subsumes them; without it
 * they are only counted, in the run's per-stage figures), in one
 * transaction together with the run's per-stage figures. Before each enumerator checkpoint the
 * candidates so far go into the run's checkpoint blob in the database, and
 * the enumerator's own checkpoint file sits next to it
 * ("<out>.run<id>.ckpt"); a stopped run is marked "interrupted" and a
 * later call with `resume` finds it by its option string, reloads the
 * candidates and continues. */
typedef struct xf_enum_generate_options {
    int max_ops;
    int max_outputs;     /* outputs of a rule side; 0: the config's default (2) */
    int max_dim;         /* largest dim of any tensor; 0: the config's default (8) */
    const char *vocab;   /* "default", "taso" or a vocabulary file */
    const char *inputs;  /* input spec; NULL: the preset's */
    int threads;         /* the result does not depend on it */
    int mpi;             /* rank 0 of an MPI run (xf_enum_options.mpi) */
    uint64_t seed;
    const char *out;     /* rules database to create or add to */
    const char *version; /* of the calling tool, recorded with the run */
    int resume;          /* continue the last interrupted run with these options */
    int keep_pruned;     /* 1: store pruned candidates as rows too (default: count them) */
    long stop_after;     /* test hook: raise *stop after N new candidates; -1 off */
    volatile sig_atomic_t *stop; /* set (e.g. by a signal) to stop at the next checkpoint */
    void *user;
    /* Enumeration progress (may be NULL). */
    void (*on_progress)(void *user, const xf_enum_progress *p);
    /* A line worth telling the user (may be NULL): news such as "resuming
     * run 3 with 120 candidates" (warning 0), or a problem that did not stop
     * the run (warning 1). */
    void (*on_note)(void *user, int warning, const char *msg);
} xf_enum_generate_options;

/* Sets the defaults: vocab "default", seed 1, one thread, stop_after -1. */
void xf_enum_generate_options_init(xf_enum_generate_options *o);

typedef struct xf_enum_generate_result {
    int64_t run_id;
    int stopped;          /* interrupted at a checkpoint: resumable (status XF_OK) */
    int bad_input;        /* on failure: the options or the database were unusable */
    xf_enum_stats enumerated;
    xf_prune_stats pruned;
    size_t candidates;
    int64_t written;      /* rows new in the database */
    int64_t pruned_stored; /* of those, pruned candidates (0 without keep_pruned) */
    double seconds;       /* wall time of the finished run */
} xf_enum_generate_result;

/* Runs xfergen as described above. XF_OK when it finished or was stopped
 * (res->stopped); on failure res->bad_input tells an unusable
 * configuration or database from a failure while running. */
xf_status xf_enum_generate(const xf_enum_generate_options *o, xf_enum_generate_result *res,
                           xf_error *err);

#ifdef XF_HAVE_MPI
/* ------------------------------------------------------------------ MPI */

/* Built when CMake finds MPI. Under `mpirun -n N xfergen`, every rank
 * calls xf_cluster_init (cluster/cluster.h); rank 0 calls xf_enum_generate
 * with o->mpi set: it runs the level loop, owns the database and the
 * checkpoint, and writes everything; ranks 1..N-1 call xf_enum_mpi_serve
 * with the same options, which builds children and confirms collisions
 * from a dynamic queue (docs/enumerate.md "MPI") until rank 0 calls
 * xf_cluster_finish. The database is the one a single process writes. */
typedef struct xf_enum_mpi_figures {
    double seconds;      /* serving, wall */
    double wait_seconds; /* of which waiting for rank 0 */
    uint64_t pieces;     /* pieces of work done */
} xf_enum_mpi_figures;

xf_status xf_enum_mpi_serve(const xf_enum_generate_options *o, xf_enum_mpi_figures *fig,
                            xf_error *err);
#endif

#endif /* XF_ENUMERATE_H */
