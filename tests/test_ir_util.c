/*
 * test_ir_util.c — the one-of-each utilities of ir/: the 64-bit mixer and
 * byte hasher (pinned values: they are stored in the rules database), the
 * hash table (exact keys, hash-keyed multimap, growth, reserved key), the
 * topological sort, the monotonic clock, the array growth, the one
 * parallel loop's plan (chunk, each thread's CPU time), the one "agree" of
 * float values with its named tolerances, the heap set aside in huge
 * pages for a verifier worker, the ranges in use collapsed to huge pages
 * before the forks, and a forked worker that dies with its parent.
 */
#define _DEFAULT_SOURCE /* sbrk */
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

START_TEST(mixer_values_are_pinned)
{
    /* the rules DB stores hashes built on these: they must never change */
    ck_assert_uint_eq(xf_hash_u64(0, 0), 0xe220a8397b1dcdafull);
    ck_assert_uint_eq(xf_hash_u64(0x6A4u, 3), 0x375eed8ec61847daull);
    ck_assert_uint_eq(xf_hash_bytes(1, "rlflow graph hash", 17), 0x945b9f826d207ceaull);
    ck_assert_uint_ne(xf_hash_bytes(1, "rlflow graph hasH", 17), 0x945b9f826d207ceaull);
    ck_assert_uint_ne(xf_hash_bytes(1, "rlflow graph hash", 16), 0x945b9f826d207ceaull);
}
END_TEST

START_TEST(htab_maps_exact_keys_and_grows)
{
    xf_htab t;
    xf_htab_init(&t);
    xf_error err;
    ck_assert_ptr_null(xf_htab_get(&t, 5));
    xf_htab_prefetch(&t, 5); /* an empty table has no slot to load */
    for (uint64_t k = 1; k <= 5000; k++) {
        uint64_t *v;
        int added;
        ck_assert_int_eq(xf_htab_put(&t, k * 7919, &v, &added, &err), XF_OK);
        ck_assert_int_eq(added, 1);
        *v = k;
    }
    ck_assert_uint_eq(t.n, 5000);
    ck_assert_uint_ge(t.cap, 2 * t.n);
    /* a prefetch is a hint: present or absent keys, the table is unchanged */
    size_t cap0 = t.cap;
    for (uint64_t k = 1; k <= 6000; k++) xf_htab_prefetch(&t, k * 7919);
    ck_assert_uint_eq(t.n, 5000);
    ck_assert_uint_eq(t.cap, cap0);
    for (uint64_t k = 1; k <= 5000; k++) {
        uint64_t *v = xf_htab_get(&t, k * 7919);
        ck_assert_ptr_nonnull(v);
        ck_assert_uint_eq(*v, k);
    }
    ck_assert_ptr_null(xf_htab_get(&t, 7918));
    int added;
    uint64_t *v;
    ck_assert_int_eq(xf_htab_put(&t, 7919, &v, &added, &err), XF_OK);
    ck_assert_int_eq(added, 0);
    ck_assert_uint_eq(*v, 1);
    ck_assert_int_eq(xf_htab_add(&t, 0, 1, &err), XF_ERR_INVALID);
    size_t cap = t.cap;
    xf_htab_clear(&t);
    ck_assert_uint_eq(t.n, 0);
    ck_assert_uint_eq(t.cap, cap);
    ck_assert_ptr_null(xf_htab_get(&t, 7919));
    xf_htab_free(&t);
    ck_assert_uint_eq(t.cap, 0);
}
END_TEST

START_TEST(htab_multimap_walks_every_entry_of_a_key)
{
    /* three strings under one (deliberately colliding) hash, one under another */
    const char *names[] = {"conv", "relu", "gemm", "tanh"};
    uint64_t keys[] = {42, 42, 42, 43};
    xf_htab t = {0};
    xf_error err;
    ck_assert_int_eq(xf_htab_reserve(&t, 100, &err), XF_OK);
    size_t cap = t.cap;
    for (uint64_t i = 0; i < 4; i++) ck_assert_int_eq(xf_htab_add(&t, keys[i], i, &err), XF_OK);
    ck_assert_uint_eq(t.cap, cap); /* reserved: no growth */
    int seen = 0;
    size_t pos = XF_HTAB_START;
    for (uint64_t *v; (v = xf_htab_next(&t, 42, &pos));) {
        ck_assert_uint_lt(*v, 3);
        seen |= 1 << *v;
    }
    ck_assert_int_eq(seen, 7);
    pos = XF_HTAB_START;
    uint64_t *v = xf_htab_next(&t, 43, &pos);
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(names[*v], "tanh");
    ck_assert_ptr_null(xf_htab_next(&t, 43, &pos));
    pos = XF_HTAB_START;
    ck_assert_ptr_null(xf_htab_next(&t, 44, &pos));
    xf_htab_free(&t);
}
END_TEST

START_TEST(topo_kahn_orders_smallest_ready_first_and_finds_cycles)
{
    /* 0 -> 3, 2 -> 1, 2 -> 3: ready {0, 2} first, then 1 before 3 */
    int start[5] = {0, 1, 1, 3, 3}, succ[3] = {3, 1, 3};
    int indeg[4] = {0, 1, 0, 2}, order[4], heap[4];
    ck_assert_int_eq(xf_topo_kahn(4, start, succ, indeg, order, heap), 4);
    int want[4] = {0, 2, 1, 3};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(order[i], want[i]);
    /* 1 -> 2 -> 1 is a cycle: only 0 is ordered, 1 and 2 stay marked */
    int cstart[4] = {0, 0, 1, 2}, csucc[2] = {2, 1};
    int cindeg[3] = {0, 1, 1};
    ck_assert_int_eq(xf_topo_kahn(3, cstart, csucc, cindeg, order, heap), 1);
    ck_assert_int_eq(order[0], 0);
    ck_assert_int_gt(cindeg[1], 0);
    ck_assert_int_gt(cindeg[2], 0);
}
END_TEST

START_TEST(clock_is_monotonic)
{
    double a = xf_clock_now(), am = xf_clock_now_ms(), c = xf_clock_thread_cpu();
    volatile double x = 0;
    for (int i = 0; i < 1000000; i++) x += i;
    double b = xf_clock_now(), bm = xf_clock_now_ms(), d = xf_clock_thread_cpu();
    ck_assert_double_gt(b, a);
    ck_assert_double_gt(bm, am);
    ck_assert_double_ge(d, c);
    /* the two units read the same clock */
    ck_assert_double_lt(bm - b * 1e3, am - a * 1e3 + 1.0);
    ck_assert_double_gt(am, a * 1e3 - 1.0);
}
END_TEST

/* xf_grow: the capacity doubled from 16 until the array holds what is
 * asked, the contents kept; a smaller need leaves it alone. */
START_TEST(grow_doubles_to_hold_need)
{
    int *a = NULL, cap = 0;
    ck_assert_int_eq(xf_grow((void **)&a, &cap, 1, sizeof *a), 1);
    ck_assert_int_eq(cap, 16);
    a[0] = 7;
    ck_assert_int_eq(xf_grow((void **)&a, &cap, 100, sizeof *a), 1);
    ck_assert_int_eq(cap, 128);
    ck_assert_int_eq(a[0], 7);
    a[99] = 9;
    int *before = a;
    ck_assert_int_eq(xf_grow((void **)&a, &cap, 50, sizeof *a), 1);
    ck_assert_int_eq(cap, 128);
    ck_assert_ptr_eq(a, before);
    xf_free(a);
}
END_TEST

/* What the parallel loop's calls saw: each index taken once, whether a
 * call took more than one index, whether worker 0 ran off the caller. */
typedef struct range_seen {
    pthread_t caller;
    atomic_int hits[100];
    atomic_int calls, wide, worker0_elsewhere;
} range_seen;

static xf_status see_range(void *ctx, int worker, size_t lo, size_t hi, xf_error *err)
{
    (void)err;
    range_seen *s = ctx;
    atomic_fetch_add(&s->calls, 1);
    if (hi - lo > 1) atomic_store(&s->wide, 1);
    if (worker == 0 && !pthread_equal(pthread_self(), s->caller))
        atomic_store(&s->worker0_elsewhere, 1);
    for (size_t i = lo; i < hi; i++) atomic_fetch_add(&s->hits[i], 1);
    return XF_OK;
}

static void range_seen_init(range_seen *s)
{
    s->caller = pthread_self();
    for (int i = 0; i < 100; i++) atomic_init(&s->hits[i], 0);
    atomic_init(&s->calls, 0);
    atomic_init(&s->wide, 0);
    atomic_init(&s->worker0_elsewhere, 0);
}

/* A plan sets the chunk (here one index a call, where the loop's own
 * choice over 100 indices on 4 threads is 7) and gets every thread's CPU
 * seconds; worker 0 is the calling thread; one thread takes the whole
 * range in one call, its CPU reported too. */
START_TEST(parallel_plan_sets_the_chunk_and_reports_cpu)
{
    range_seen s;
    range_seen_init(&s);
    double cpu[4] = {-1, -1, -1, -1};
    xf_parallel_plan plan = {1, cpu};
    xf_error err;
    ck_assert_int_eq(xf_parallel(4, 0, 100, &plan, see_range, &s, &err), XF_OK);
    ck_assert_int_eq(atomic_load(&s.wide), 0);
    ck_assert_int_eq(atomic_load(&s.calls), 100);
    for (int i = 0; i < 100; i++) ck_assert_int_eq(atomic_load(&s.hits[i]), 1);
    ck_assert_int_eq(atomic_load(&s.worker0_elsewhere), 0);
    for (int t = 0; t < 4; t++) ck_assert_double_ge(cpu[t], 0);
    /* without a chunk, the loop's own: wider calls */
    range_seen_init(&s);
    ck_assert_int_eq(xf_parallel(4, 0, 100, NULL, see_range, &s, &err), XF_OK);
    ck_assert_int_eq(atomic_load(&s.wide), 1);
    for (int i = 0; i < 100; i++) ck_assert_int_eq(atomic_load(&s.hits[i]), 1);
    range_seen_init(&s);
    cpu[0] = -1;
    ck_assert_int_eq(xf_parallel(1, 0, 100, &plan, see_range, &s, &err), XF_OK);
    ck_assert_int_eq(atomic_load(&s.calls), 1);
    ck_assert_double_ge(cpu[0], 0);
}
END_TEST

/* The one "agree" rule and its named tolerances: |a - ref| <= atol +
 * rtol*|ref|, NaN only with NaN, equal infinities agree. */
START_TEST(values_agree_within_named_tolerances)
{
    ck_assert(xf_value_agree(1.0 + 1.5e-4, 1.0, XF_TOL_RULE));  /* bound 2e-4 */
    ck_assert(!xf_value_agree(1.0 + 2.5e-4, 1.0, XF_TOL_RULE));
    ck_assert(xf_value_agree(1.0 + 1.5e-3, 1.0, XF_TOL_PROBE));
    ck_assert(!xf_value_agree(1.0 + 1.5e-3, 1.0, XF_TOL_RULE));
    ck_assert(xf_value_agree(1000.5, 1000.0, XF_TOL_MODEL));    /* 1e-4 + 1.0 */
    ck_assert(!xf_value_agree(1e-4 * 3, 0.0, XF_TOL_MODEL));
    ck_assert(!xf_value_agree(1.0 + 3e-5, 1.0, XF_TOL_ROUNDING));
    ck_assert(xf_value_agree(NAN, NAN, XF_TOL_ROUNDING));
    ck_assert(!xf_value_agree(NAN, 1.0, XF_TOL_PROBE));
    ck_assert(!xf_value_agree(1.0, NAN, XF_TOL_PROBE));
    ck_assert(xf_value_agree(INFINITY, INFINITY, XF_TOL_RULE));
    ck_assert(!xf_value_agree(INFINITY, 1.0, XF_TOL_PROBE));
    /* the named tolerances are ordered: rounding within rule within probe */
    ck_assert(XF_TOL_ROUNDING.rtol < XF_TOL_RULE.rtol && XF_TOL_RULE.rtol < XF_TOL_PROBE.rtol);
}
END_TEST

/* The VmFlags line of /proc/self/smaps for the mapping holding `at`. */
static int vm_flags_of(uintptr_t at, char *flags, size_t cap)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    int in = 0, found = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = a <= at && at < b;
        else if (in && !strncmp(line, "VmFlags:", 8)) {
            snprintf(flags, cap, "%s", line + 8);
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}

/* Runs checks in a forked child (they change the process's memory settings
 * for good) and fails unless it exits 0. */
static void in_child(int (*checks)(void))
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) _exit(checks());
    int ws = 0;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert(WIFEXITED(ws));
    ck_assert_int_eq(WEXITSTATUS(ws), 0);
}

/* The child's checks; its exit status (0: all held). */
static int huge_pages_child(void)
{
    uintptr_t lo = (uintptr_t)sbrk(0);
    xf_heap_huge_pages((size_t)64 << 20);
    uintptr_t hi = (uintptr_t)sbrk(0);
    /* a solver's table lands in the part set aside, and is usable */
    unsigned char *t = xf_malloc((size_t)8 << 20);
    if (!t) return 2;
    memset(t, 1, (size_t)8 << 20);
    uintptr_t end = (uintptr_t)t + ((size_t)8 << 20); /* from the heap's top, grown */
    int inside = end > lo && end <= hi;
    xf_free(t);
#if defined(__SANITIZE_ADDRESS__)
    (void)inside; /* ASan's allocator does not use the heap: nothing was set aside */
    return 0;
#else
    if (hi - lo < ((uintptr_t)64 << 20)) return 3; /* the heap grew by what was asked */
    if (!inside) return 4;
    char flags[256];
    uintptr_t mid = ((lo + hi) / 2) & ~(((uintptr_t)2 << 20) - 1);
    if (vm_flags_of(mid, flags, sizeof flags) != 0) return 5;
    return strstr(flags, " hg") ? 0 : 6; /* hg: madvise(MADV_HUGEPAGE) */
#endif
}

/* The child's checks for the case below; its exit status (0: all held). */
static int collapse_child(void)
{
    const size_t huge = (size_t)2 << 20, len = 10 * huge;
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 2;
    uintptr_t at = ((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1);
    uintptr_t dense = at, sparse = at + 4 * huge;
    memset((void *)dense, 1, 2 * huge); /* two ranges in use */
    ((unsigned char *)sparse)[0] = 1;   /* one page of 512 */
    xf_heap_collapse_huge();
    char flags[256];
    if (vm_flags_of(dense, flags, sizeof flags) != 0) return 3;
    if (!strstr(flags, " hg")) return 4; /* hg: madvise(MADV_HUGEPAGE) */
    if (vm_flags_of(sparse, flags, sizeof flags) != 0) return 5;
    if (strstr(flags, " hg")) return 6;
    for (size_t i = 0; i < 2 * huge; i++) /* the contents stay */
        if (((unsigned char *)dense)[i] != 1) return 7;
    return munmap(m, len) == 0 ? 0 : 8;
}

/* xf_heap_collapse_huge in a child: the 2 MB ranges of an anonymous mapping
 * that are in use are marked for huge pages, with their contents, and a
 * range with one page of 512 in use is left as it is (it would be filled
 * with zeros). Whether the kernel found huge pages to collapse into is the
 * machine's business, not asserted. */
START_TEST(heap_collapse_marks_the_ranges_in_use)
{
    in_child(collapse_child);
}
END_TEST

/* xf_heap_huge_pages in a child (it changes the process's malloc settings
 * for good, as in a verifier worker): the heap grows by what was asked, the
 * mapping is marked for huge pages, and an 8 MB block is carved from it (its
 * start may lie in the top of the heap the call found). */
START_TEST(heap_huge_pages_sets_aside_a_marked_heap)
{
    in_child(huge_pages_child);
}
END_TEST

/* A worker (grandchild here) that called xf_child_dies_with_parent holds
 * the write end of a pipe and would sleep a minute; its parent exits at
 * once. The pipe reaches end-of-file within seconds, so the worker died with
 * its parent (a no-op call would leave the poll to time out). */
START_TEST(child_dies_with_its_parent)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t mid = fork();
    ck_assert_int_ge(mid, 0);
    if (mid == 0) {
        close(p[0]);
        long parent = (long)getpid();
        pid_t g = fork();
        if (g == 0) {
            xf_child_dies_with_parent(parent);
            sleep(60);
            _exit(0);
        }
        _exit(g > 0 ? 0 : 1);
    }
    close(p[1]);
    int ws = 0;
    ck_assert_int_eq(waitpid(mid, &ws, 0), mid);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    struct pollfd pf = {p[0], POLLIN, 0};
    ck_assert_int_eq(poll(&pf, 1, 20000), 1);
    char c;
    ck_assert_int_eq(read(p[0], &c, 1), 0); /* end-of-file: no writer is left */
    close(p[0]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ir_util");
    TCase *t = tcase_create("core");
    tcase_add_test(t, mixer_values_are_pinned);
    tcase_add_test(t, htab_maps_exact_keys_and_grows);
    tcase_add_test(t, htab_multimap_walks_every_entry_of_a_key);
    tcase_add_test(t, topo_kahn_orders_smallest_ready_first_and_finds_cycles);
    tcase_add_test(t, clock_is_monotonic);
    tcase_add_test(t, grow_doubles_to_hold_need);
    tcase_add_test(t, parallel_plan_sets_the_chunk_and_reports_cpu);
    tcase_add_test(t, values_agree_within_named_tolerances);
    tcase_add_test(t, heap_huge_pages_sets_aside_a_marked_heap);
    tcase_add_test(t, heap_collapse_marks_the_ranges_in_use);
    tcase_add_test(t, child_dies_with_its_parent);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
