/*
 * test_xfergen.c — end-to-end tests of the xfergen tool on tiny
 * vocabularies (matmul, ewadd, relu over two activations and two weights, at
 * most 2 operators; matmul and ewadd at 3; convolutions and pooling at 2):
 * known identities (associativity, commutativity, distributivity, conv+relu
 * fusion, average pooling as a convolution) land in the rules database as
 * candidates and false pairs never do, the same seed gives the same rule
 * list (also with another thread count), an interrupted run resumed with
 * --resume ends with the same list as an uninterrupted one, pruned
 * candidates are only counted unless --keep-pruned stores them, pruning
 * and the write show a progress line for each of their steps, and bad
 * arguments exit with status 2 and a message.
 *
 * Interruption uses the tool's test hook XF_XFERGEN_STOP_AFTER=N (the stop
 * flag is raised after N candidates, as SIGINT would raise it). The library
 * call behind the tool (xf_enum_generate) is also run in-process: stopped,
 * resumed, and given an unusable vocabulary; and under mpirun with rank 0
 * out of memory as it hands out the first piece of work (the run ends with
 * that error).
 */
#include "testutil.h"

#include "enumerate/enumerate.h"
#include "rulesdb/rulesdb.h"
#ifdef XF_HAVE_MPI
#include "cluster/cluster.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INPUTS "x0:2x4,x1:2x4,w0:4x4,w1:4x4"

#define TINY_VOCAB "# tiny vocabulary for the end-to-end test\nmatmul\newadd\nrelu\n"

/* Writes `text` to a vocabulary file named after db; returns its path. */
static const char *vocab_file(const char *db, const char *text)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s.vocab", db);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Runs xfergen on `vocab` over `inputs` with at most max_ops operators into
 * `db` (removed first unless resuming); extra options appended. Returns the
 * exit status. */
static int run_gen(const char *db, const char *vocab, const char *inputs, int max_ops,
                   const char *env, const char *extra)
{
    const char *vpath = vocab_file(db, vocab);
    if (!strstr(extra, "--resume")) xf_test_system("rm -f '%s' '%s'-wal '%s'-shm '%s'.run*", db, db, db, db);
    return xf_test_system("%s '%s' --max-ops %d --vocab '%s' --inputs %s --seed 7 -o '%s' --quiet %s "
                          "2>'%s.err'",
                          env, xf_test_tool("xfergen"), max_ops, vpath, inputs, db, extra, db);
}

/* The tiny vocabulary at 2 operators. */
static int run_xfergen(const char *db, const char *env, const char *extra)
{
    return run_gen(db, TINY_VOCAB, INPUTS, 2, env, extra);
}

/* Every rule as "status | src | dst | why | input names | subsumed by", in
 * id order. Caller frees. */
static char *export_rules(const char *db_path, int64_t *n_candidates)
{
    xf_rulesdb *db;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(db_path, XF_RULESDB_READONLY, &db, &err) == XF_OK, "%s", err.msg);
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = 1;
    xf_rulesdb_iter *it;
    ck_assert_int_eq(xf_rulesdb_iter_begin(db, &f, &it, &err), XF_OK);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    out[0] = '\0';
    *n_candidates = 0;
    for (;;) {
        int has = 0;
        ck_assert_int_eq(xf_rulesdb_iter_next(it, &info, &has, &err), XF_OK);
        if (!has) break;
        if (info.status == XF_RULE_CANDIDATE) ++*n_candidates;
        size_t need = strlen(info.src_text) + strlen(info.dst_text) +
                      (info.why ? strlen(info.why) : 0) + strlen(info.input_names) + 96;
        while (len + need >= cap) {
            cap *= 2;
            out = realloc(out, cap);
            ck_assert_ptr_nonnull(out);
        }
        len += (size_t)snprintf(out + len, cap - len, "%s | %s | %s | %s | %s | %lld\n",
                                xf_rulesdb_status_name(info.status), info.src_text, info.dst_text,
                                info.why ? info.why : "", info.input_names,
                                (long long)info.subsumed_by);
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    xf_rulesdb_close(db);
    return out;
}

/* The most recent run's row (info initialised here; caller frees). */
static void last_run(const char *db_path, xf_rulesdb_run_info *info)
{
    xf_rulesdb *db;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(db_path, XF_RULESDB_READONLY, &db, &err) == XF_OK, "%s", err.msg);
    int64_t id;
    int n;
    ck_assert_int_eq(xf_rulesdb_run_recent(db, &id, 1, &n, &err), XF_OK);
    ck_assert_int_eq(n, 1);
    xf_rulesdb_run_info_init(info);
    ck_assert_int_eq(xf_rulesdb_run_get(db, id, info, &err), XF_OK);
    xf_rulesdb_close(db);
}

static xf_run_state last_run_state(const char *db_path, int *n_stages)
{
    xf_rulesdb_run_info info;
    last_run(db_path, &info);
    xf_run_state s = info.state;
    *n_stages = info.n_stages;
    ck_assert_str_eq(info.tool, "xfergen");
    xf_rulesdb_run_info_free(&info);
    return s;
}

/* Is "src | dst" (either orientation) listed with this status? */
static int has_rule(const char *list, const char *status, const char *a, const char *b)
{
    char l1[512], l2[512];
    snprintf(l1, sizeof l1, "%s | %s | %s |", status, a, b);
    snprintf(l2, sizeof l2, "%s | %s | %s |", status, b, a);
    return strstr(list, l1) != NULL || strstr(list, l2) != NULL;
}

START_TEST(test_identities_found)
{
    char db[4096];
    snprintf(db, sizeof db, "%s", xf_test_tmp("ident.db"));
    ck_assert_int_eq(run_xfergen(db, "", "-j 2"), 0);
    int64_t n_cand;
    char *list = export_rules(db, &n_cand);
    ck_assert_int_gt(n_cand, 0);
    /* matmul associativity, in canonical input order */
    ck_assert_msg(has_rule(list, "candidate", "matmul(matmul(x0, w0), w1)", "matmul(x0, matmul(w0, w1))"),
                  "associativity missing:\n%s", list);
    /* ewadd commutes */
    ck_assert_msg(has_rule(list, "candidate", "ewadd(x0, x1)", "ewadd(x1, x0)") ||
                      has_rule(list, "candidate", "ewadd(w0, w1)", "ewadd(w1, w0)"),
                  "ewadd commutativity missing:\n%s", list);
    /* matmul does not commute, and relu does not distribute over ewadd */
    ck_assert(!strstr(list, "| matmul(w0, w1) | matmul(w1, w0) |"));
    ck_assert(!strstr(list, "| matmul(w1, w0) | matmul(w0, w1) |"));
    ck_assert(!strstr(list, "relu(ewadd(x0, x1)) | ewadd(relu(x0), relu(x1))"));
    ck_assert(!strstr(list, "ewadd(relu(x0), relu(x1)) | relu(ewadd(x0, x1))"));
    /* pruned candidates are counted, not stored (test_pruned_counted_or_kept) */
    ck_assert(!strstr(list, "pruned | "));
    int n_stages;
    ck_assert_int_eq(last_run_state(db, &n_stages), XF_RUN_DONE);
    ck_assert_int_ge(n_stages, 9); /* enumerate, fingerprints, candidates, 4 prune stages,
                                      pruned-stored, write */
    free(list);
}
END_TEST

START_TEST(test_more_identities_found)
{
    char db[4096];
    int64_t n;
    /* matmul distributes over ewadd (3 operators on the source side) */
    snprintf(db, sizeof db, "%s", xf_test_tmp("dist.db"));
    ck_assert_int_eq(run_gen(db, "matmul\newadd\n", "x0:2x4,w0:4x4,w1:4x4", 3, "", ""), 0);
    char *list = export_rules(db, &n);
    ck_assert_msg(has_rule(list, "candidate", "ewadd(matmul(x0, w0), matmul(x0, w1))",
                           "matmul(x0, ewadd(w0, w1))"),
                  "distributivity missing:\n%s", list);
    free(list);
    /* conv + relu fusion, and average pooling as a depthwise convolution with
     * the pooling constant (exact only because fingerprints divide by 9) */
    snprintf(db, sizeof db, "%s", xf_test_tmp("conv.db"));
    ck_assert_int_eq(run_gen(db,
                             "relu\nconv2d kernel=3x3 pad=same\nconv2d kernel=3x3 pad=same act=relu\n"
                             "conv2d kernel=3x3 pad=same group=depthwise\n"
                             "avgpool kernel=3x3 pad=same count_include_pad=1\n"
                             "const_pool shape=4x1x3x3\n",
                             "x0:1x4x4x4,w0:4x4x3x3", 2, "", ""),
                     0);
    list = export_rules(db, &n);
    ck_assert_msg(has_rule(list, "candidate", "relu(conv2d[3x3,s1,same](x0, w0))",
                           "conv2d[3x3,s1,same,relu](x0, w0)"),
                  "conv+relu fusion missing:\n%s", list);
    ck_assert_msg(has_rule(list, "candidate", "conv2d[3x3,s1,same,g4](x0, const_pool[4x1x3x3]())",
                           "avgpool[3x3,s1,same,count_pad](x0)"),
                  "avgpool as conv missing:\n%s", list);
    /* relu does not commute with a convolution */
    ck_assert(!strstr(list, "conv2d[3x3,s1,same](relu(x0), w0) | relu(conv2d[3x3,s1,same](x0, w0))"));
    ck_assert(!strstr(list, "relu(conv2d[3x3,s1,same](x0, w0)) | conv2d[3x3,s1,same](relu(x0), w0)"));
    free(list);
}
END_TEST

START_TEST(test_same_seed_same_rules)
{
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s", xf_test_tmp("det_a.db"));
    snprintf(b, sizeof b, "%s", xf_test_tmp("det_b.db"));
    ck_assert_int_eq(run_xfergen(a, "", "-j 2"), 0);
    ck_assert_int_eq(run_xfergen(b, "", "-j 1"), 0);
    int64_t na, nb;
    char *la = export_rules(a, &na), *lb = export_rules(b, &nb);
    ck_assert_int_eq(na, nb);
    ck_assert_str_eq(la, lb);
    free(la);
    free(lb);
}
END_TEST

START_TEST(test_resume_after_interrupt)
{
    char full[4096], part[4096];
    snprintf(full, sizeof full, "%s", xf_test_tmp("full.db"));
    snprintf(part, sizeof part, "%s", xf_test_tmp("part.db"));
    ck_assert_int_eq(run_xfergen(full, "", ""), 0);
    /* --resume with nothing to resume is a usage error */
    ck_assert_int_eq(run_xfergen(full, "", "--resume"), 2);
    ck_assert_int_eq(run_xfergen(part, "XF_XFERGEN_STOP_AFTER=1", ""), 1);
    int n_stages;
    ck_assert_int_eq(last_run_state(part, &n_stages), XF_RUN_INTERRUPTED);
    int64_t n_part;
    char *mid = export_rules(part, &n_part);
    ck_assert_int_eq(n_part, 0); /* rules are written only when the run completes */
    free(mid);
    ck_assert_int_eq(run_xfergen(part, "", "--resume"), 0);
    ck_assert_int_eq(last_run_state(part, &n_stages), XF_RUN_DONE);
    int64_t nf, np;
    char *lf = export_rules(full, &nf), *lp = export_rules(part, &np);
    ck_assert_int_eq(nf, np);
    ck_assert_str_eq(lf, lp);
    free(lf);
    free(lp);
}
END_TEST

/* Count of the last run's stage `name`; -1 when it has none. */
static int64_t stage_count(const char *db_path, const char *name)
{
    xf_rulesdb_run_info info;
    last_run(db_path, &info);
    int64_t c = -1;
    for (int i = 0; i < info.n_stages; i++)
        if (strcmp(info.stages[i].name, name) == 0) c = info.stages[i].count;
    xf_rulesdb_run_info_free(&info);
    return c;
}

/* xfergen on the taso vocabulary at max_ops operators, pruned candidates
 * kept (so reasons and subsuming rules are compared too), started by
 * `prefix` (mpirun, environment settings); the exit status. */
static int run_taso(const char *db, int max_ops, const char *prefix, const char *extra)
{
    if (!strstr(extra, "--resume")) xf_test_system("rm -f '%s' '%s'-wal '%s'-shm '%s'.run*", db, db, db, db);
    return xf_test_system("%s '%s' --max-ops %d --vocab taso --keep-pruned -o '%s' --quiet %s "
                          "2>'%s.err'",
                          prefix, xf_test_tool("xfergen"), max_ops, db, extra, db);
}

/* Under `mpirun -n 3` (rank 0 keeps the database, ranks 1 and 2 build and
 * confirm graphs from a dynamic queue) xfergen writes the database `-j 2`
 * writes: same rules, ids, statuses, reasons, input names, subsuming rules.
 * Three operators: the workers get level 2 (17,275 graphs) in two messages. */
START_TEST(test_mpi_same_database)
{
    const char *why = NULL, *mpirun = xf_test_mpirun(&why);
    if (!mpirun) XF_SKIP("%s", why);
    char one[4096], mpi[4096], prefix[256];
    snprintf(one, sizeof one, "%s", xf_test_tmp("one.db"));
    snprintf(mpi, sizeof mpi, "%s", xf_test_tmp("mpi.db"));
    snprintf(prefix, sizeof prefix, "%s -n 3", mpirun);
    ck_assert_int_eq(run_taso(one, 3, "", "-j 2"), 0);
    ck_assert_int_eq(run_taso(mpi, 3, prefix, ""), 0);
    int64_t n1, nm;
    char *l1 = export_rules(one, &n1), *lm = export_rules(mpi, &nm);
    ck_assert_int_gt(n1, 3000);
    ck_assert_int_eq(n1, nm);
    ck_assert_str_eq(l1, lm);
    free(l1);
    free(lm);
    /* The same run figures: graphs of each level, candidates, prune stages. */
    ck_assert_int_eq(stage_count(one, "enumerate"), stage_count(mpi, "enumerate"));
    ck_assert_int_eq(stage_count(one, "candidates"), stage_count(mpi, "candidates"));
    ck_assert_int_eq(stage_count(one, "prune-generality"), stage_count(mpi, "prune-generality"));
}
END_TEST

/* The database does not depend on -j: more than 3,000 rows, kept and
 * pruned, fetched for pruning and prepared for the write a batch (1,024)
 * ahead on the threads and stored in order. */
START_TEST(test_threads_same_database)
{
    char one[4096], three[4096];
    snprintf(one, sizeof one, "%s", xf_test_tmp("j1.db"));
    snprintf(three, sizeof three, "%s", xf_test_tmp("j3.db"));
    ck_assert_int_eq(run_taso(one, 3, "", "-j 1"), 0);
    ck_assert_int_eq(run_taso(three, 3, "", "-j 3"), 0);
    int64_t n1, n3;
    char *l1 = export_rules(one, &n1), *l3 = export_rules(three, &n3);
    ck_assert_int_gt(n1, 3000);
    ck_assert_int_eq(n1, n3);
    ck_assert_str_eq(l1, l3);
    free(l1);
    free(l3);
}
END_TEST

/* An interrupted MPI run resumes, under MPI or without it, and so does an
 * interrupted single-process run under MPI: each ends with the database of
 * an uninterrupted run. */
START_TEST(test_mpi_resume)
{
    const char *why = NULL, *mpirun = xf_test_mpirun(&why);
    if (!mpirun) XF_SKIP("%s", why);
    char full[4096], a[4096], b[4096], prefix[256], stop[300];
    snprintf(full, sizeof full, "%s", xf_test_tmp("full.db"));
    snprintf(a, sizeof a, "%s", xf_test_tmp("a.db"));
    snprintf(b, sizeof b, "%s", xf_test_tmp("b.db"));
    snprintf(prefix, sizeof prefix, "%s -n 3", mpirun);
    snprintf(stop, sizeof stop, "%s -x XF_XFERGEN_STOP_AFTER=1 -n 3", mpirun);
    ck_assert_int_eq(run_taso(full, 2, "", "-j 2"), 0);
    int n_stages;
    ck_assert_int_ne(run_taso(a, 2, stop, ""), 0);
    ck_assert_int_eq(last_run_state(a, &n_stages), XF_RUN_INTERRUPTED);
    ck_assert_int_eq(run_taso(a, 2, "", "-j 2 --resume"), 0);
    ck_assert_int_eq(run_taso(b, 2, "XF_XFERGEN_STOP_AFTER=1", "-j 2"), 1);
    ck_assert_int_eq(last_run_state(b, &n_stages), XF_RUN_INTERRUPTED);
    ck_assert_int_eq(run_taso(b, 2, prefix, "--resume"), 0);
    int64_t nf, na, nb;
    char *lf = export_rules(full, &nf), *la = export_rules(a, &na), *lb = export_rules(b, &nb);
    ck_assert_int_eq(last_run_state(a, &n_stages), XF_RUN_DONE);
    ck_assert_int_eq(last_run_state(b, &n_stages), XF_RUN_DONE);
    ck_assert_str_eq(lf, la);
    ck_assert_str_eq(lf, lb);
    free(lf);
    free(la);
    free(lb);
    /* ... and an MPI run resumes an MPI run. */
    ck_assert_int_ne(run_taso(a, 2, stop, ""), 0);
    ck_assert_int_eq(run_taso(a, 2, prefix, "--resume"), 0);
    ck_assert_int_eq(last_run_state(a, &n_stages), XF_RUN_DONE);
    la = export_rules(a, &na);
    lf = export_rules(full, &nf);
    ck_assert_str_eq(lf, la);
    free(lf);
    free(la);
}
END_TEST

#ifdef XF_HAVE_MPI
/* The allocation fail_realloc fails once: the first growth of the table of
 * an extension queue's results (64 childbufs of 32 bytes, enumerate/mpi.c
 * send_piece), the first piece rank 0 hands out. */
#define NOMEM_SIZE (64 * 4 * sizeof(size_t))
static int nomem_fired;

static void *pass_malloc(void *user, size_t n)
{
    (void)user;
    return malloc(n);
}

static void *fail_realloc(void *user, void *p, size_t n)
{
    (void)user;
    if (!p && n == NOMEM_SIZE && !nomem_fired) {
        nomem_fired = 1;
        return NULL;
    }
    return realloc(p, n);
}

static void pass_free(void *user, void *p)
{
    (void)user;
    free(p);
}

/* Under mpirun (XF_TEST_MPI_NOMEM=db): rank 0 runs the pipeline with the
 * allocation above failing, the other ranks serve it. Exit status 0 when
 * rank 0 reports that failure and every rank ends. */
static int mpi_nomem(const char *db)
{
    xf_allocator a = {pass_malloc, fail_realloc, pass_free, NULL};
    xf_set_allocator(&a);
    int rank = 0, size = 1, rc = 0;
    xf_error err;
    if (xf_cluster_init(NULL, NULL, &rank, &size, &err) != XF_OK) return 10;
    xf_enum_generate_options o;
    xf_enum_generate_options_init(&o);
    o.max_ops = 2;
    o.vocab = "taso";
    o.out = db;
    o.version = "test";
    if (rank != 0) {
        xf_enum_mpi_figures f;
        rc = xf_enum_mpi_serve(&o, &f, &err) == XF_OK ? 0 : 11;
    } else {
        o.mpi = 1;
        xf_enum_generate_result r;
        xf_status st = xf_enum_generate(&o, &r, &err);
        rc = st == XF_ERR_NOMEM && strstr(err.msg, "pieces of work") ? 0 : 12;
        if (rc) fprintf(stderr, "mpi_nomem: status %d: %s\n", (int)st, st ? err.msg : "");
    }
    xf_cluster_finish();
    return rc;
}
#endif

/* Rank 0 running out of memory while it hands out the first pieces of work
 * fails the run with that error: it waits only for the pieces that went
 * out (it had counted the failed one too and waited for its answer for
 * ever). */
START_TEST(test_mpi_out_of_memory_ends)
{
    const char *why = NULL, *mpirun = xf_test_mpirun(&why);
    if (!mpirun) XF_SKIP("%s", why);
    char db[4096], self[4096];
    snprintf(db, sizeof db, "%s", xf_test_tmp("nomem.db"));
    xf_test_system("rm -f '%s' '%s'-wal '%s'-shm '%s'.run*", db, db, db, db);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert_int_gt(n, 0);
    self[n] = 0;
    ck_assert_int_eq(xf_test_system("timeout 120 %s -n 2 -x XF_TEST_MPI_NOMEM='%s' '%s' 2>'%s.err'",
                                    mpirun, db, self, db),
                     0);
}
END_TEST

/* The lines of `list` that start with `prefix`, concatenated. Caller frees. */
static char *lines_starting(const char *list, const char *prefix)
{
    char *out = malloc(strlen(list) + 1);
    ck_assert_ptr_nonnull(out);
    size_t len = 0;
    for (const char *p = list; *p;) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p + 1) : strlen(p);
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            memcpy(out + len, p, l);
            len += l;
        }
        p += l;
    }
    out[len] = '\0';
    return out;
}

/* Pruned candidates are counted by default and stored with --keep-pruned;
 * the kept candidates are the same rows either way, and the counts in the
 * run's stages agree with the rows. */
START_TEST(test_pruned_counted_or_kept)
{
    char cnt[4096], keep[4096];
    snprintf(cnt, sizeof cnt, "%s", xf_test_tmp("count.db"));
    snprintf(keep, sizeof keep, "%s", xf_test_tmp("keep.db"));
    ck_assert_int_eq(run_gen(cnt, "matmul\newadd\n", "x0:2x4,w0:4x4,w1:4x4", 3, "", ""), 0);
    ck_assert_int_eq(
        run_gen(keep, "matmul\newadd\n", "x0:2x4,w0:4x4,w1:4x4", 3, "", "--keep-pruned"), 0);
    int64_t nc, nk;
    char *lc = export_rules(cnt, &nc), *lk = export_rules(keep, &nk);
    ck_assert_int_gt(nc, 0);
    ck_assert_int_eq(nc, nk);
    ck_assert_msg(strstr(lc, "pruned | ") == NULL, "count-only mode stored pruned rules:\n%s", lc);
    char *kept_c = lines_starting(lc, "candidate | "), *kept_k = lines_starting(lk, "candidate | ");
    ck_assert_str_eq(kept_c, kept_k);
    ck_assert_str_eq(kept_c, lc); /* nothing but candidates */
    char *pruned = lines_starting(lk, "pruned | ");
    int64_t n_pruned = 0;
    for (const char *p = pruned; (p = strstr(p, "pruned | ")) != NULL; p++) n_pruned++;
    ck_assert_int_gt(n_pruned, 0);
    ck_assert_msg(strstr(pruned, "renaming: ") || strstr(pruned, "common-") ||
                      strstr(pruned, "generality: "),
                  "pruned rules without a reason:\n%s", pruned);
    /* the stages count what was pruned in both modes, the rows only with --keep-pruned */
    ck_assert_int_eq(stage_count(cnt, "pruned-stored"), 0);
    ck_assert_int_eq(stage_count(keep, "pruned-stored"), n_pruned);
    ck_assert_int_eq(stage_count(cnt, "prune-generality"), nc);
    ck_assert_int_eq(stage_count(keep, "prune-generality"), nk);
    ck_assert_int_eq(stage_count(cnt, "candidates"), stage_count(keep, "candidates"));
    ck_assert_int_gt(stage_count(cnt, "candidates"), nc);
    ck_assert_int_eq(stage_count(cnt, "write"), nc);
    ck_assert_int_eq(stage_count(keep, "write"), nk + n_pruned);
    /* the CPU rows of the enumerator's phases count what each phase handled */
    ck_assert_int_eq(stage_count(cnt, "cpu-build"), stage_count(cnt, "enumerate"));
    ck_assert_int_eq(stage_count(cnt, "cpu-merge"), stage_count(cnt, "fingerprints"));
    ck_assert_int_ge(stage_count(cnt, "cpu-confirm"), stage_count(cnt, "candidates"));
    ck_assert_int_eq(stage_count(cnt, "cpu-emit"), stage_count(cnt, "candidates"));
    free(lc);
    free(lk);
    free(kept_c);
    free(kept_k);
    free(pruned);
}
END_TEST

/* xf_enum_generate in-process: a run stopped after 2 candidates is
 * resumable and reported as stopped, its resumption writes the same rules
 * as the tool's uninterrupted run, and an unusable vocabulary is bad input
 * (not a failure while running). */
START_TEST(test_library_run)
{
    char full[4096], lib[4096];
    snprintf(full, sizeof full, "%s", xf_test_tmp("lib_full.db"));
    snprintf(lib, sizeof lib, "%s", xf_test_tmp("lib.db"));
    ck_assert_int_eq(run_xfergen(full, "", ""), 0);
    xf_test_remove_db(lib);
    xf_enum_generate_options o;
    xf_enum_generate_options_init(&o);
    o.max_ops = 2;
    o.vocab = vocab_file(lib, TINY_VOCAB);
    o.inputs = INPUTS;
    o.seed = 7;
    o.out = lib;
    o.version = "test";
    o.stop_after = 2;
    xf_enum_generate_result r;
    xf_error err;
    ck_assert_msg(xf_enum_generate(&o, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.stopped, 1);
    ck_assert_uint_ge(r.candidates, 2);
    ck_assert_int_eq(r.written, 0);
    int n_stages;
    ck_assert_int_eq(last_run_state(lib, &n_stages), XF_RUN_INTERRUPTED);
    o.stop_after = -1;
    o.resume = 1;
    ck_assert_msg(xf_enum_generate(&o, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.stopped, 0);
    ck_assert_int_eq(last_run_state(lib, &n_stages), XF_RUN_DONE);
    int64_t nf, nl;
    char *lf = export_rules(full, &nf), *ll = export_rules(lib, &nl);
    ck_assert_str_eq(lf, ll);
    ck_assert_int_eq(nf, nl);
    ck_assert_int_eq((int64_t)r.pruned.kept, nl);
    ck_assert_uint_eq(r.pruned.in, r.candidates);
    ck_assert(r.written > 0 && r.written <= (int64_t)r.candidates);
    free(lf);
    free(ll);

    o.resume = 0;
    o.vocab = "/nonexistent/v.txt";
    ck_assert_int_ne(xf_enum_generate(&o, &r, &err), XF_OK);
    ck_assert_int_eq(r.bad_input, 1);
    ck_assert_msg(strstr(err.msg, "/nonexistent/v.txt") != NULL, "%s", err.msg);
}
END_TEST

/* Runs xfergen with raw arguments; returns the status, stderr into errbuf. */
static int run_raw(const char *args, char *errbuf, size_t n)
{
    char errf[4096];
    snprintf(errf, sizeof errf, "%s", xf_test_tmp("bad.err"));
    int rc = xf_test_system("%s %s 2>'%s' >/dev/null", xf_test_tool("xfergen"), args, errf);
    FILE *f = fopen(errf, "r");
    ck_assert_ptr_nonnull(f);
    size_t got = fread(errbuf, 1, n - 1, f);
    errbuf[got] = '\0';
    fclose(f);
    return rc;
}

/* Without --quiet and not on a terminal, each step after the enumeration
 * (pruning's five, the write) gets a progress line with its rules, rate and
 * ETA as soon as it starts. */
START_TEST(test_progress_lines)
{
    char db[4096], args[8192], errbuf[16384];
    snprintf(db, sizeof db, "%s", xf_test_tmp("progress.db"));
    xf_test_system("rm -f '%s' '%s'-wal '%s'-shm", db, db, db);
    snprintf(args, sizeof args, "--max-ops 2 --vocab '%s' --inputs %s -j 2 -o '%s'",
             vocab_file(db, TINY_VOCAB), INPUTS, db);
    ck_assert_int_eq(run_raw(args, errbuf, sizeof errbuf), 0);
    static const char *const steps[] = {"pruning: terms", "pruning: canonical forms",
                                        "pruning: common subgraph", "pruning: common supergraph",
                                        "pruning: generality", "writing"};
    const char *at = errbuf;
    for (int i = 0; i < 6; i++) {
        char want[64];
        snprintf(want, sizeof want, "%s, 0/", steps[i]);
        const char *line = strstr(at, want);
        ck_assert_msg(line, "no line '%s' (in order) in:\n%s", want, errbuf);
        const char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        ck_assert_msg(strstr(line, "rules (") && strstr(line, "ETA ") && strstr(line, "ETA ") < end,
                      "%.*s", (int)(end - line), line);
        at = end;
    }
}
END_TEST

/* GPT's merged Q/K/V to heads (issue 28): a three-way split of the last
 * axis, whose three parts are a rule's outputs (--max-outputs 3) and hold
 * two heads of 2 each (c0 2x2x12: --max-dim 12). The rule "each third taken
 * to heads is the heads of the whole split three ways" is generated, and
 * xferverify proves it (axiom hsplit-slice-last). Without --max-dim the
 * input is refused; the options are recorded in the run. */
START_TEST(test_three_way_heads)
{
    char db[4096];
    snprintf(db, sizeof db, "%s", xf_test_tmp("qkv.db"));
    const char *vocab = "split axis=-1 parts=3 rank=3\nsplit axis=-2 parts=3 rank=4\n"
                        "reshape view=split_last heads=2 rank=3\n"
                        "reshape view=split_last heads=6 rank=3\n";
    ck_assert_int_eq(run_gen(db, vocab, "c0:2x2x12", 4, "", ""), 2);
    ck_assert_int_eq(run_gen(db, vocab, "c0:2x2x12", 4, "", "--max-outputs 3 --max-dim 12"), 0);
    xf_rulesdb_run_info info;
    last_run(db, &info);
    ck_assert_ptr_nonnull(strstr(info.options, "--max-outputs 3 --max-dim 12"));
    xf_rulesdb_run_info_free(&info);
    ck_assert_int_eq(xf_test_system("%s '%s' >/dev/null 2>'%s.verr'", xf_test_tool("xferverify"),
                                    db, db),
                     0);
    int64_t n = 0;
    char *list = export_rules(db, &n);
    /* one line: proved, three head reshapes of thirds => thirds of the
     * heads (the outputs in the order the enumeration met them) */
    const char *proved = "proved | reshape[shape=2x2x2x2](split";
    const char *of_heads = "[axis=-2,sizes=2/2/2](reshape[shape=2x2x6x2](c0))";
    int found = 0;
    for (char *line = strtok(list, "\n"); line && !found; line = strtok(NULL, "\n")) {
        int thirds = 0, heads = 0;
        for (const char *p = line; (p = strstr(p, "sizes=4/4/4](c0))")); p++) thirds++;
        for (const char *p = line; (p = strstr(p, of_heads)); p++) heads++;
        found = strncmp(line, proved, strlen(proved)) == 0 && thirds == 3 && heads == 3;
    }
    ck_assert_msg(found, "the three-way heads rule is not proved");
    free(list);
}
END_TEST

/* GPT's heads in the layout ONNX Runtime folds into its FusedMatMul
 * (issue 28): the head transpose of a [1,S,H] part, perm 0,2,1,3 of its
 * [1,S,h,d] reshape, is perm 1,2,0,3 of the [S,1,h,d] reshape of the part
 * squeezed and unsqueezed (and the key's 0,2,3,1 is 1,2,3,0). Generated
 * over an input with a unit first axis and proved by xferverify (a swap
 * with the unit axis the squeeze pins is a view); the rule holds wherever
 * that axis is 1, not only at its own sizes. */
START_TEST(test_unbatched_heads)
{
    char db[4096];
    snprintf(db, sizeof db, "%s", xf_test_tmp("heads.db"));
    const char *vocab = "squeeze axes=0 rank=3\nunsqueeze axes=1 rank=2\n"
                        "reshape view=split_last heads=2 rank=3\ntranspose perm=0,2,1,3\n"
                        "transpose perm=1,2,0,3\ntranspose perm=0,2,3,1\ntranspose perm=1,2,3,0\n";
    ck_assert_int_eq(run_gen(db, vocab, "u0:1x4x4", 4, "", ""), 0);
    ck_assert_int_eq(xf_test_system("%s '%s' >/dev/null 2>'%s.verr'", xf_test_tool("xferverify"),
                                    db, db),
                     0);
    int64_t n = 0;
    char *list = export_rules(db, &n);
    const char *rules[2][2] = {
        {"transpose[perm=1,2,0,3](reshape[shape=4x1x2x2](unsqueeze[axes=1](squeeze[axes=0](u0))))",
         "transpose[perm=0,2,1,3](reshape[shape=1x4x2x2](u0))"},
        {"transpose[perm=1,2,3,0](reshape[shape=4x1x2x2](unsqueeze[axes=1](squeeze[axes=0](u0))))",
         "transpose[perm=0,2,3,1](reshape[shape=1x4x2x2](u0))"},
    };
    for (int k = 0; k < 2; k++) {
        char want[1024];
        snprintf(want, sizeof want, "proved | %s | %s |", rules[k][0], rules[k][1]);
        ck_assert_msg(strstr(list, want), "not proved: %s\n%s", want, list);
    }
    free(list);
    char out[4096];
    snprintf(out, sizeof out, "%s.show", db);
    for (int id = 1; id <= 7; id++) {
        xf_test_system("%s show '%s' %d >>'%s' 2>&1", xf_test_tool("xferdb"), db, id, out);
    }
    char *shown = xf_test_read_file(out, NULL);
    ck_assert_ptr_nonnull(shown);
    const char *at = strstr(shown, rules[0][0]);
    ck_assert_ptr_nonnull(at);
    at = strstr(at, "holds where: ");
    ck_assert_ptr_nonnull(at);
    ck_assert_msg(strncmp(at, "holds where: u0[-3] == 1\n", 25) == 0, "%.60s", at);
    free(shown);
}
END_TEST

START_TEST(test_bad_arguments)
{
    char e[4096], cmd[8192];
    char db[4096], notdb[4096];
    snprintf(db, sizeof db, "%s", xf_test_tmp("bad.db"));
    snprintf(notdb, sizeof notdb, "%s", xf_test_tmp("not_a.db"));
    FILE *f = fopen(notdb, "w");
    ck_assert_ptr_nonnull(f);
    fputs("this is not a database\n", f);
    fclose(f);

    ck_assert_int_eq(run_raw("--max-ops 0 -o x.db", e, sizeof e), 2);
    ck_assert_ptr_nonnull(strstr(e, "--max-ops"));
    ck_assert_int_eq(run_raw("--max-ops 2", e, sizeof e), 2);
    ck_assert_ptr_nonnull(strstr(e, "-o"));
    ck_assert_int_eq(run_raw("--max-ops 2 -o x.db --frobnicate", e, sizeof e), 2);
    ck_assert_ptr_nonnull(strstr(e, "--frobnicate"));
    ck_assert_int_eq(run_raw("--max-ops 2 -o x.db -j zero", e, sizeof e), 2);
    ck_assert_ptr_nonnull(strstr(e, "-j"));
    snprintf(cmd, sizeof cmd, "--max-ops 2 --vocab /nonexistent/v.txt -o '%s'", db);
    ck_assert_int_eq(run_raw(cmd, e, sizeof e), 2);
    ck_assert_ptr_nonnull(strstr(e, "/nonexistent/v.txt"));
    snprintf(cmd, sizeof cmd, "--max-ops 2 --inputs 'x0:2xq' -o '%s'", db);
    ck_assert_int_eq(run_raw(cmd, e, sizeof e), 2);
    ck_assert_ptr_nonnull(strstr(e, "2xq"));
    snprintf(cmd, sizeof cmd, "--max-ops 1 --inputs " INPUTS " -o '%s'", notdb);
    ck_assert_int_eq(run_raw(cmd, e, sizeof e), 2);
    ck_assert_ptr_nonnull(strstr(e, notdb));
    ck_assert_int_eq(run_raw("--help", e, sizeof e), 0);
}
END_TEST

int main(void)
{
#ifdef XF_HAVE_MPI
    const char *nomem_db = getenv("XF_TEST_MPI_NOMEM");
    if (nomem_db && xf_cluster_launched()) return mpi_nomem(nomem_db);
#endif
    Suite *s = suite_create("xfergen");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_identities_found);
    tcase_add_test(tc, test_more_identities_found);
    tcase_add_test(tc, test_same_seed_same_rules);
    tcase_add_test(tc, test_resume_after_interrupt);
    tcase_add_test(tc, test_three_way_heads);
    tcase_add_test(tc, test_unbatched_heads);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_progress_lines);
    tcase_add_test(tc, test_library_run);
    tcase_add_test(tc, test_pruned_counted_or_kept);
    tcase_add_test(tc, test_threads_same_database);
    tcase_add_test(tc, test_mpi_same_database);
    tcase_add_test(tc, test_mpi_resume);
    tcase_add_test(tc, test_mpi_out_of_memory_ends);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
