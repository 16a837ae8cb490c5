/*
 * extend_internal.h — private: building the children of one stored graph (one more
 * node), with every check that decides whether a child is new, canonical
 * and irreducible. Workers run this in parallel on disjoint parents; it
 * only reads the store and the class table.
 */
#ifndef XF_ENUMERATE_EXTEND_INTERNAL_H
#define XF_ENUMERATE_EXTEND_INTERNAL_H

#include "shapecache_internal.h"
#include "valmemo_internal.h"

/* A graph built at the current level, before the class table sees it. */
typedef struct child {
    uint64_t fp;    /* class key */
    uint64_t shash; /* structural hash */
    uint32_t parent;
    uint16_t var;
    uint8_t in[MAX_NODE_INPUTS];
    uint8_t n_in, n_outputs;
} child;

typedef struct childbuf {
    child *v;
    size_t n, cap;
    /* The last level: the class entry of each child's fingerprint (NULL:
     * none), looked up by the thread that built the children; NULL when
     * not looked up (the merge then looks them up itself). */
    const centry **rep;
} childbuf;

/* What every worker reads while a level is built. */
typedef struct level_ctx {
    const xf_enum_config *cfg;
    const glevel *levels;
    const hset *reps; /* structural hashes of every class representative */
    int level;     /* operators in the graphs being built */
    int out_bound; /* most outputs a graph of this level may have */
} level_ctx;

typedef struct worker {
    evalctx ev;
    shapecache sc;
    int in_sid[XF_ENUM_MAX_INPUTS];
    valmemo memo;       /* output hashes of nodes already evaluated */
    egraph evald;       /* the last parent evaluated in ev: nodes 0..evald.n_nodes-1 */
    uint64_t reducible; /* children dropped as reducible */
    uint64_t *groups_ok; /* per parent: the groups of shapes each variant applies to */
    uint32_t inputs_of_sid[XF_ENUM_MAX_INPUTS]; /* the inputs of each input shape id (bit k: input k) */
} worker;

xf_status en_worker_init(worker *w, const xf_enum_config *cfg, const evalue *inputs, xf_error *err);
void en_worker_free(worker *w);
/* Appends to `out` every canonical, irreducible child of stored graph
 * `parent` (at lc->level - 1). */
xf_status en_extend_parent(worker *w, const level_ctx *lc, uint32_t parent, childbuf *out,
                        xf_error *err);
/* Rebuilds a child's structure. */
void en_child_graph(const level_ctx *lc, const child *c, egraph *g);

#endif /* XF_ENUMERATE_EXTEND_INTERNAL_H */
