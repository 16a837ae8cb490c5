/*
 * test_cost_noise.c — timings a busy machine disturbed, told apart and kept
 * out of the cost cache (costmodel/util.c, docs/costmodel.md "Measurements
 * under load"): runs most of which waited a scheduler time slice told from
 * a kernel's own spread; runs another process preempted left out, and a
 * measurement every attempt of which was preempted (a spinning thread on
 * the measuring thread's core) used but not cached; runs other tasks ran
 * beside judged shared when most did, and a measurement beside busy
 * neighbours on another core (threads of this process, other processes)
 * used but not cached, where the same measurement without them is cached;
 * and xfcost's report of such measurements, with its hint.
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, sched_getcpu */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "costmodel/costmodel.h"
#include "testutil.h"

static xf_shape sh(int rank, int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t dims[4] = {a, b, c, d};
    return xf_shape_make(rank, dims);
}

/* Runs of a microsecond kernel of which most waited a scheduler time slice
 * are disturbed (measured again); a few slow runs, a slow kernel with its
 * ordinary spread and a fast one with jitter are not. */
START_TEST(disturbed_runs_are_told_apart)
{
    double most_waited[10] = {16.1, 0.005, 15.9, 16.0, 0.006, 16.2, 15.8, 0.005, 16.0, 16.1};
    double few_waited[10] = {0.005, 16.0, 0.006, 0.005, 0.005, 15.9, 0.006, 0.005, 0.007, 0.005};
    double slow_kernel[10] = {31.0, 30.2, 33.5, 30.1, 35.0, 30.4, 31.2, 30.0, 34.9, 30.3};
    double jitter[10] = {0.004, 0.009, 0.005, 0.012, 0.006, 0.005, 0.010, 0.004, 0.005, 0.011};
    int d = -1;
    ck_assert_double_eq_tol(xf_cost_runs_median(most_waited, 10, &d), 15.95, 1e-9);
    ck_assert_int_eq(d, 1);
    ck_assert_double_eq_tol(xf_cost_runs_median(few_waited, 10, &d), 0.0055, 1e-9);
    ck_assert_int_eq(d, 0);
    ck_assert_double_eq_tol(xf_cost_runs_median(slow_kernel, 10, &d), 30.7, 1e-9);
    ck_assert_int_eq(d, 0);
    ck_assert_double_eq_tol(xf_cost_runs_median(jitter, 10, &d), 0.0055, 1e-9);
    ck_assert_int_eq(d, 0);
    /* sorted in place: the fastest run first */
    ck_assert_double_eq(most_waited[0], 0.005);
}
END_TEST

/* Runs another process preempted do not count: the median of the others
 * when they are most; else the fastest run, and the attempt is not clean
 * (a machine that slowed every run alike, 10x, shows no spread). */
START_TEST(preempted_runs_are_left_out)
{
    unsigned char none[10] = {0};
    double some[10] = {2.9, 2.8, 9.5, 2.7, 2.8, 11.0, 2.9, 2.8, 8.0, 2.7};
    unsigned char some_pre[10] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0};
    double ms = -1;
    ck_assert_int_eq(xf_cost_runs_summary(some, some_pre, none, 10, &ms), XF_COST_RUNS_CLEAN);
    ck_assert_double_eq_tol(ms, 2.8, 1e-9); /* median of the seven clean runs */
    double most[10] = {29.5, 30.1, 2.8, 29.0, 31.2, 30.0, 29.7, 2.9, 30.3, 29.9};
    unsigned char most_pre[10] = {1, 1, 0, 1, 1, 1, 1, 0, 1, 1};
    ck_assert_int_eq(xf_cost_runs_summary(most, most_pre, none, 10, &ms), XF_COST_RUNS_PREEMPTED);
    ck_assert_double_eq_tol(ms, 2.8, 1e-9);
    double all[4] = {29.5, 30.1, 29.0, 31.2};
    unsigned char all_pre[4] = {1, 1, 1, 1};
    ck_assert_int_eq(xf_cost_runs_summary(all, all_pre, none, 4, &ms), XF_COST_RUNS_PREEMPTED);
    ck_assert_double_eq_tol(ms, 29.0, 1e-9);
    /* no preemption, but most runs waited (xf_cost_runs_median): not clean */
    double waited[10] = {16.1, 0.005, 15.9, 16.0, 0.006, 16.2, 15.8, 0.005, 16.0, 16.1};
    ck_assert_int_eq(xf_cost_runs_summary(waited, none, none, 10, &ms), XF_COST_RUNS_PREEMPTED);
    ck_assert_double_eq_tol(ms, 0.005, 1e-9);
    double quiet[3] = {1.2, 1.0, 1.1};
    ck_assert_int_eq(xf_cost_runs_summary(quiet, none, none, 3, &ms), XF_COST_RUNS_CLEAN);
    ck_assert_double_eq_tol(ms, 1.1, 1e-9);
}
END_TEST

static volatile int spinner_stop;

static void *spinner(void *arg)
{
    (void)arg;
    while (!spinner_stop) {
    }
    return NULL;
}

static xf_cost_model *open_onednn(const char *cache, xf_cost_neighbours neighbours)
{
    xf_cost_options o = xf_cost_options_default();
    o.backend = XF_COST_ONEDNN;
    o.cache_path = cache;
    o.neighbours = neighbours;
    o.threads = 1;
    o.warmup = 1;
    o.reps = 5;
    xf_cost_model *cm = NULL;
    xf_error err = {0};
    ck_assert_msg(xf_cost_open(&o, &cm, &err) == XF_OK, "open: %s", err.msg);
    return cm;
}

/* A thread spinning on the measuring thread's core takes it away in every
 * run of a matmul of several milliseconds: no attempt is clean, so the
 * cost is used (counted as disturbed) but not written to the cache, and a
 * later model on the same cache file measures it again. */
START_TEST(a_preempted_measurement_is_not_cached)
{
    const char *path = xf_test_tmp("preempted.db");
    remove(path);
    cpu_set_t old, one;
    ck_assert_int_eq(pthread_getaffinity_np(pthread_self(), sizeof old, &old), 0);
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0)
        XF_SKIP("cannot pin the test to one CPU");
    spinner_stop = 0;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, spinner, NULL), 0);
    ck_assert_int_eq(pthread_setaffinity_np(t, sizeof one, &one), 0);
    xf_dtype dt[2] = {XF_F32, XF_F32};
    xf_shape s[2] = {sh(2, 512, 1024, 0, 0), sh(2, 1024, 1024, 0, 0)};
    xf_op_cost c;
    xf_error err = {0};
    xf_cost_model *cm = open_onednn(path, XF_COST_NEIGHBOURS_MACHINE);
    xf_status st = xf_cost_op(cm, XF_OP_MATMUL, NULL, 2, dt, s, &c, &err);
    int64_t measured = xf_cost_measurements(cm), disturbed = xf_cost_disturbed(cm);
    spinner_stop = 1;
    pthread_join(t, NULL);
    pthread_setaffinity_np(pthread_self(), sizeof old, &old);
    ck_assert_msg(st == XF_OK, "%s", err.msg);
    ck_assert_int_eq(measured, 1);
    ck_assert_int_eq(disturbed, 1);
    ck_assert(c.ms > 0);
    /* the same model serves it again without measuring */
    xf_op_cost again;
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_MATMUL, NULL, 2, dt, s, &again, &err), XF_OK);
    ck_assert_double_eq(again.ms, c.ms);
    ck_assert_int_eq(xf_cost_measurements(cm), 1);
    xf_cost_close(cm);
    /* the cache file does not hold it */
    cm = open_onednn(path, XF_COST_NEIGHBOURS_MACHINE);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_MATMUL, NULL, 2, dt, s, &again, &err), XF_OK);
    ck_assert_int_eq(xf_cost_measurements(cm), 1);
    xf_cost_close(cm);
    remove(path);
}
END_TEST

/* Runs other tasks ran beside count when most of the runs not preempted
 * did: the attempt is then shared, its median the same as a clean one's;
 * a few such runs, or only preempted ones, leave it clean. */
START_TEST(shared_runs_are_told_apart)
{
    unsigned char none[10] = {0};
    double a[10] = {2.9, 2.8, 2.7, 2.8, 2.9, 2.7, 2.8, 2.9, 2.8, 2.7};
    unsigned char most[10] = {1, 1, 1, 0, 1, 1, 1, 0, 1, 1};
    double ms = -1;
    ck_assert_int_eq(xf_cost_runs_summary(a, none, most, 10, &ms), XF_COST_RUNS_SHARED);
    ck_assert_double_eq_tol(ms, 2.8, 1e-9);
    double b[10] = {2.9, 2.8, 2.7, 2.8, 2.9, 2.7, 2.8, 2.9, 2.8, 2.7};
    unsigned char half[10] = {1, 0, 1, 0, 1, 0, 1, 0, 1, 0};
    ck_assert_int_eq(xf_cost_runs_summary(b, none, half, 10, &ms), XF_COST_RUNS_CLEAN);
    ck_assert_double_eq_tol(ms, 2.8, 1e-9);
    /* of the seven runs not preempted, four ran shared */
    double c[10] = {2.9, 2.8, 9.5, 2.7, 2.8, 11.0, 2.9, 2.8, 8.0, 2.7};
    unsigned char c_pre[10] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0};
    unsigned char c_shared[10] = {1, 1, 1, 1, 0, 1, 1, 0, 1, 0};
    ck_assert_int_eq(xf_cost_runs_summary(c, c_pre, c_shared, 10, &ms), XF_COST_RUNS_SHARED);
    ck_assert_double_eq_tol(ms, 2.8, 1e-9);
    /* the preempted runs' neighbours do not count */
    double d[10] = {2.9, 2.8, 9.5, 2.7, 2.8, 11.0, 2.9, 2.8, 8.0, 2.7};
    unsigned char d_shared[10] = {0, 0, 1, 1, 0, 1, 0, 0, 1, 0};
    ck_assert_int_eq(xf_cost_runs_summary(d, c_pre, d_shared, 10, &ms), XF_COST_RUNS_CLEAN);
    /* most runs preempted: preempted, whoever ran beside them */
    double e[4] = {29.5, 30.1, 29.0, 31.2};
    unsigned char e_pre[4] = {1, 1, 1, 0}, e_shared[4] = {1, 1, 1, 1};
    ck_assert_int_eq(xf_cost_runs_summary(e, e_pre, e_shared, 4, &ms), XF_COST_RUNS_PREEMPTED);
    ck_assert_double_eq_tol(ms, 29.0, 1e-9);
}
END_TEST

/* Busy neighbours on the core beside the measuring thread's: threads of
 * this process or other processes, as many as it takes to keep half of
 * the machine's other cores busy (one on 2 cores), all pinned to it. */
enum { MAX_NEIGHBOURS = 512 };
typedef struct neighbours {
    int n;
    pthread_t thread[MAX_NEIGHBOURS];
    pid_t process[MAX_NEIGHBOURS];
} neighbours;

static int neighbours_needed(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = (int)(cores / 2);
    return n < 1 ? 1 : n > MAX_NEIGHBOURS ? MAX_NEIGHBOURS : n;
}

static void pin(pthread_t t, int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ck_assert_int_eq(pthread_setaffinity_np(t, sizeof one, &one), 0);
}

static void start_threads(neighbours *nb, int cpu)
{
    spinner_stop = 0;
    nb->n = neighbours_needed();
    for (int i = 0; i < nb->n; i++) {
        ck_assert_int_eq(pthread_create(&nb->thread[i], NULL, spinner, NULL), 0);
        pin(nb->thread[i], cpu);
    }
}

static void stop_threads(neighbours *nb)
{
    spinner_stop = 1;
    for (int i = 0; i < nb->n; i++) pthread_join(nb->thread[i], NULL);
    nb->n = 0;
}

/* cpu < 0: the processes run where the scheduler puts them. */
static void start_processes(neighbours *nb, int cpu)
{
    nb->n = neighbours_needed();
    for (int i = 0; i < nb->n; i++) {
        pid_t pid = fork();
        ck_assert_int_ne(pid, -1);
        if (pid == 0) {
            if (cpu >= 0) pin(pthread_self(), cpu);
            spinner_stop = 0;
            spinner(NULL); /* until killed */
            _exit(0);
        }
        nb->process[i] = pid;
    }
}

static void stop_processes(neighbours *nb)
{
    for (int i = 0; i < nb->n; i++) {
        kill(nb->process[i], SIGKILL);
        waitpid(nb->process[i], NULL, 0);
    }
    nb->n = 0;
}

/* Measures a matmul of some tens of microseconds (short enough that other
 * processes on the measuring core preempt few of its runs) on a fresh
 * model over `cache`: the measurements, and those timed shared and
 * preempted, of that model. */
static void measure(const char *cache, xf_cost_neighbours whose, int64_t *measured,
                    int64_t *shared, int64_t *preempted)
{
    xf_dtype dt[2] = {XF_F32, XF_F32};
    xf_shape s[2] = {sh(2, 64, 256, 0, 0), sh(2, 256, 64, 0, 0)};
    xf_op_cost c, again;
    xf_error err = {0};
    xf_cost_model *cm = open_onednn(cache, whose);
    ck_assert_msg(xf_cost_op(cm, XF_OP_MATMUL, NULL, 2, dt, s, &c, &err) == XF_OK, "%s", err.msg);
    ck_assert(c.ms > 0);
    /* the model keeps what it measured, cached or not */
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_MATMUL, NULL, 2, dt, s, &again, &err), XF_OK);
    ck_assert_double_eq(again.ms, c.ms);
    *measured = xf_cost_measurements(cm);
    *shared = xf_cost_shared(cm);
    *preempted = xf_cost_disturbed(cm);
    xf_cost_close(cm);
}

/* A neighbour spinning on another core than the measuring thread's takes
 * none of its time, but shares the core's caches and the memory bandwidth:
 * the measurement is used but counted as shared and not written to the
 * cache, whether the neighbour is a thread of this process or another
 * process, and whether the machine's running tasks or only this process's
 * count. Without the neighbour, counting this process's threads only (so
 * that what else runs on the machine, such as the suites CTest runs beside
 * this one, cannot change it), the same measurement is cached. */
START_TEST(a_measurement_beside_a_neighbour_is_not_cached)
{
    const char *path = xf_test_tmp("beside.db");
    xf_test_remove_db(path);
    cpu_set_t old;
    ck_assert_int_eq(pthread_getaffinity_np(pthread_self(), sizeof old, &old), 0);
    int here = sched_getcpu(), beside = -1;
    for (int c = 0; c < CPU_SETSIZE && beside < 0; c++)
        if (c != here && CPU_ISSET(c, &old)) beside = c;
    if (here < 0 || beside < 0)
        XF_SKIP("this test may run on one CPU only: no other core for a neighbour");
    pin(pthread_self(), here);
    neighbours nb = {0};
    int64_t measured, shared, preempted;
    const struct {
        int processes;
        xf_cost_neighbours whose;
    } cases[3] = {{0, XF_COST_NEIGHBOURS_MACHINE},
                  {1, XF_COST_NEIGHBOURS_MACHINE},
                  {0, XF_COST_NEIGHBOURS_PROCESS}};
    for (int i = 0; i < 3; i++) {
        if (cases[i].processes) start_processes(&nb, beside);
        else start_threads(&nb, beside);
        measure(path, cases[i].whose, &measured, &shared, &preempted);
        if (cases[i].processes) stop_processes(&nb);
        else stop_threads(&nb);
        /* measured each time: no model before wrote it to the file */
        ck_assert_int_eq(measured, 1);
        ck_assert_msg(shared == 1 && preempted == 0, "case %d: %lld shared, %lld preempted", i,
                      (long long)shared, (long long)preempted);
    }
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM op_cost"), 0);
    /* no neighbour: clean and cached, the next model measures nothing */
    measure(path, XF_COST_NEIGHBOURS_PROCESS, &measured, &shared, &preempted);
    ck_assert_int_eq(measured, 1);
    ck_assert_int_eq(shared + preempted, 0);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM op_cost"), 1);
    measure(path, XF_COST_NEIGHBOURS_PROCESS, &measured, &shared, &preempted);
    ck_assert_int_eq(measured, 0);
    pthread_setaffinity_np(pthread_self(), sizeof old, &old);
    xf_test_remove_db(path);
}
END_TEST

/* xfcost on a busy machine counts the kernels it timed beside other tasks,
 * hints that their costs were not kept, and keeps none in its cache file. */
START_TEST(xfcost_reports_measurements_beside_others)
{
    char model[4096], cache[4096], out[4096];
    snprintf(model, sizeof model, "%s", xf_test_tmp("relu.onnx"));
    snprintf(cache, sizeof cache, "%s", xf_test_tmp("xfcost.db"));
    snprintf(out, sizeof out, "%s", xf_test_tmp("xfcost.out"));
    xf_test_remove_db(cache);
    xf_graph g;
    xf_graph_init(&g);
    int x = xf_test_input(&g, "x", 4, (const int64_t[]){1, 64, 56, 56});
    xf_test_out(&g, xf_test_op2(&g, XF_OP_RELU, NULL, x, -1));
    xf_error err = {0};
    ck_assert_msg(xf_onnx_save(&g, model, &err) == XF_OK, "%s", err.msg);
    xf_graph_free(&g);
    neighbours nb = {0};
    start_processes(&nb, -1);
    int rc = xf_test_system("'%s' '%s' --backend onednn --cache '%s' --no-run > '%s' 2>&1",
                            xf_test_tool("xfcost"), model, cache, out);
    stop_processes(&nb);
    char *text = xf_test_read_file(out, NULL);
    ck_assert_msg(rc == 0, "%s", text);
    xf_test_expect_contains(text, "measurements: 1 new");
    xf_test_expect_contains(text, "timed while other tasks ran beside them: not cached");
    xf_test_expect_contains(text, "hint: most kernels were timed on a busy machine");
    free(text);
    ck_assert_int_eq(xf_test_sql_int(cache, "SELECT count(*) FROM op_cost"), 0);
    xf_test_remove_db(cache);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cost_noise");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, disturbed_runs_are_told_apart);
    tcase_add_test(tc, preempted_runs_are_left_out);
    tcase_add_test(tc, shared_runs_are_told_apart);
    tcase_add_test(tc, a_preempted_measurement_is_not_cached);
    tcase_add_test(tc, a_measurement_beside_a_neighbour_is_not_cached);
    tcase_add_test(tc, xfcost_reports_measurements_beside_others);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
