/*
 * testutil.c — see testutil.h.
 */
#define _DEFAULT_SOURCE /* mknod, makedev */
#include "testutil.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "modelzoo/modelzoo.h"
#include "rulesdb/rulesdb.h"

const char *xf_test_dir(const char *env_var)
{
    const char *d = getenv(env_var);
    struct stat st;
    if (!d || stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
    return d;
}

const char *xf_test_models_dir(void)
{
    static char buf[4096];
    const char *s = xf_test_dir("XF_SHARED_DIR");
    if (!s) return NULL;
    snprintf(buf, sizeof buf, "%s/models", s);
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
    return buf;
}

const char *xf_test_tmp(const char *name)
{
    static char buf[4096];
    const char *t = getenv("XF_TMPDIR");
    if (!t) t = "/tmp";
    /* mkdir -p: each test has its own directory below a shared parent */
    snprintf(buf, sizeof buf, "%s", t);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
    snprintf(buf, sizeof buf, "%s/%s", t, name);
    return buf;
}

const char *xf_test_full_device(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s", xf_test_tmp(name));
    unlink(buf);
    if (mknod(buf, S_IFCHR | 0666, makedev(1, 7)) == 0) return buf;
    if (geteuid() != 0 && access("/dev/full", W_OK) == 0) return "/dev/full";
    return NULL;
}

const char *xf_test_fifo(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s", xf_test_tmp(name));
    unlink(buf);
    return mkfifo(buf, 0644) == 0 ? buf : NULL;
}

int xf_test_is_char_device(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

const char *xf_test_tool(const char *name)
{
    static char buf[4096];
    const char *b = getenv("XF_BIN_DIR");
    snprintf(buf, sizeof buf, "%s/%s", b ? b : ".", name);
    return buf;
}

void xf_test_remove_db(const char *path)
{
    xf_rulesdb_remove(path);
}

int64_t xf_test_sql_int(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
    /* a tool may be writing the file (test_xferverify's other_writers_get_in
     * polls a running xferverify): wait for its lock as the tools do */
    sqlite3_busy_timeout(h, 10000);
    sqlite3_stmt *s = NULL;
    ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(h));
    ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(h);
    return v;
}

void xf_test_sql_exec(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(h, sql, NULL, NULL, &msg);
    ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, msg ? msg : "");
    sqlite3_free(msg);
    sqlite3_close(h);
}

int xf_test_dead_pid(void)
{
    fflush(NULL);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) _exit(0);
    ck_assert_int_eq(waitpid(child, NULL, 0), child);
    return (int)child;
}

int xf_test_system(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc)) return -1;
    return WEXITSTATUS(rc);
}

int xf_test_count_op(const xf_graph *g, xf_op op)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) n += g->nodes[i].op == op;
    return n;
}

int xf_test_scalar(xf_graph *g, const char *name, float v)
{
    xf_error err = {0};
    xf_shape s = xf_shape_make(0, NULL);
    int id = xf_graph_add_const(g, name, XF_F32, &s, &v, &err);
    ck_assert_msg(id >= 0, "%s", err.msg);
    return id;
}

void xf_test_modelzoo_build(const char *model, const char *args, xf_graph *g)
{
    const xf_zoo_model *m = xf_modelzoo_model_find(model);
    ck_assert_msg(m != NULL, "modelzoo has no model '%s'", model);
    xf_zoo_config c;
    xf_modelzoo_config_init(&c, m);
    char flag[64];
    long long v;
    int used = 0;
    const char *p = args;
    for (; sscanf(p, " %63s %lld%n", flag, &v, &used) == 2; p += used) {
        if (strcmp(flag, "--seed") == 0) {
            c.seed = (uint64_t)v;
            continue;
        }
        xf_zoo_opt o = xf_modelzoo_option_find(flag);
        ck_assert_msg(o != XF_ZOO_OPT_COUNT && m->defaults[o] != 0, "%s takes no %s", model,
                      flag);
        c.v[o] = v;
    }
    while (isspace((unsigned char)*p)) p++;
    ck_assert_msg(*p == '\0', "modelzoo %s: cannot read '%s' as --OPTION N pairs", model, p);
    xf_error err = {0};
    ck_assert_msg(xf_modelzoo_build(m, &c, g, &err) == XF_OK, "modelzoo %s %s: %s", model, args,
                  err.msg);
}

void xf_test_modelzoo(const char *model, const char *args, const char *name, xf_graph *g)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.onnx", xf_test_tmp(name));
    xf_graph built;
    xf_test_modelzoo_build(model, args, &built);
    xf_error err = {0};
    ck_assert_msg(xf_onnx_save(&built, path, &err) == XF_OK, "save %s: %s", path, err.msg);
    xf_graph_free(&built);
    ck_assert_msg(xf_onnx_load(path, NULL, g, &err) == XF_OK, "load %s: %s", path, err.msg);
    remove(path);
}

void xf_test_fill(xf_tensor *t, uint64_t seed, int64_t int_hi)
{
    xf_rng r;
    xf_rng_seed(&r, seed);
    int64_t n = xf_shape_numel(&t->shape);
    for (int64_t i = 0; i < n; i++) {
        switch (t->dtype) {
        case XF_F32: ((float *)t->data)[i] = xf_rng_uniform(&r, -1.0f, 1.0f); break;
        case XF_I64: ((int64_t *)t->data)[i] = (int64_t)(xf_rng_next(&r) % (uint64_t)int_hi); break;
        case XF_I32: ((int32_t *)t->data)[i] = (int32_t)(xf_rng_next(&r) % (uint64_t)int_hi); break;
        case XF_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(xf_rng_next(&r) & 1); break;
        default: break;
        }
    }
}

char *xf_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    ck_assert_msg(n >= 0, "cannot size %s", path);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc((size_t)n + 1, 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_msg(fread(buf, 1, (size_t)n, f) == (size_t)n, "short read of %s", path);
    fclose(f);
    if (len) *len = (size_t)n;
    return buf;
}

void xf_test_expect_same_file(const char *orig, const char *copy)
{
    size_t la, lb;
    char *a = xf_test_read_file(orig, &la), *b = xf_test_read_file(copy, &lb);
    ck_assert_msg(la == lb && memcmp(a, b, la) == 0, "%s is not a copy of %s", copy, orig);
    free(a);
    free(b);
}

void xf_test_expect_contains(const char *text, const char *needle)
{
    ck_assert_msg(strstr(text, needle), "output lacks '%s':\n%.3000s", needle, text);
}

int xf_test_input(xf_graph *g, const char *name, int rank, const int64_t *dims)
{
    xf_shape s = xf_shape_make(rank, dims);
    int v = xf_graph_add_input(g, name, XF_F32, &s, NULL);
    ck_assert_int_ge(v, 0);
    return v;
}

int xf_test_weight(xf_graph *g, const char *name, int rank, const int64_t *dims, uint64_t seed)
{
    xf_shape s = xf_shape_make(rank, dims);
    xf_tensor t;
    ck_assert_int_eq(xf_tensor_alloc(&t, XF_F32, &s, NULL), XF_OK);
    xf_test_fill(&t, seed, 0);
    int v = xf_graph_add_const(g, name, XF_F32, &s, t.data, NULL);
    xf_tensor_free(&t);
    ck_assert_int_ge(v, 0);
    return v;
}

int xf_test_op2(xf_graph *g, xf_op op, const xf_params *p, int a, int b)
{
    int in[2] = {a, b};
    xf_error err;
    int v = xf_graph_op(g, op, p, in, a < 0 ? 0 : b < 0 ? 1 : 2, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

int xf_test_op3(xf_graph *g, xf_op op, const xf_params *p, int a, int b, int c)
{
    int in[3] = {a, b, c};
    xf_error err;
    int v = xf_graph_op(g, op, p, in, 3, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

void xf_test_out(xf_graph *g, int v)
{
    ck_assert_int_eq(xf_graph_mark_output(g, v, NULL), XF_OK);
}

int xf_test_reshape(xf_graph *g, int x, xf_shape to)
{
    xf_params p = xf_params_default();
    p.n_shape = to.rank;
    for (int i = 0; i < to.rank; i++) p.shape[i] = to.dims[i];
    return xf_test_op2(g, XF_OP_RESHAPE, &p, x, -1);
}

static int infix_op(xf_graph *g, const char *name, const char *params, const int *args,
                    int n_args, void *user, xf_error *err)
{
    (void)err;
    ck_assert_msg(!params[0], "%s[%s]: the test shorthand takes no parameters", name, params);
    return (*(xf_test_infix_op *)user)(g, name, args, n_args);
}

void xf_test_parse_infix(xf_graph *g, const char *text, xf_test_infix_op apply)
{
    xf_error err;
    ck_assert_msg(xf_graph_parse(g, text, infix_op, &apply, &err) == XF_OK, "%s: %s", text, err.msg);
}

void xf_test_expect_same_function(const xf_graph *a, const xf_graph *b, uint64_t seed, double tol)
{
    xf_error err;
    ck_assert_int_eq(a->n_inputs, b->n_inputs);
    ck_assert_int_eq(a->n_outputs, b->n_outputs);
    xf_tensor *in = calloc((size_t)a->n_inputs + 1, sizeof *in);
    xf_tensor *oa = calloc((size_t)a->n_outputs + 1, sizeof *oa);
    xf_tensor *ob = calloc((size_t)a->n_outputs + 1, sizeof *ob);
    ck_assert(in && oa && ob);
    ck_assert_int_eq(xf_graph_random_inputs(a, seed, in, &err), XF_OK);
    ck_assert_msg(xf_interp_run(a, in, a->n_inputs, oa, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_interp_run(b, in, b->n_inputs, ob, &err) == XF_OK, "%s", err.msg);
    for (int i = 0; i < a->n_outputs; i++) {
        double max_abs = 0, max_rel = 0;
        ck_assert_msg(xf_tensor_compare(&ob[i], &oa[i], &max_abs, &max_rel, &err) == XF_OK, "%s",
                      err.msg);
        ck_assert_msg(max_abs <= tol, "output %d differs by %g", i, max_abs);
        xf_tensor_free(&oa[i]);
        xf_tensor_free(&ob[i]);
    }
    for (int i = 0; i < a->n_inputs; i++) xf_tensor_free(&in[i]);
    free(in);
    free(oa);
    free(ob);
}

/* ------------------------------------------------------------------ skips */

/* The suite's name (the executable's, less "test_") and the pipe the skips
 * are counted through (see testutil.h); set by xf_test_run, inherited by
 * the forked cases. */
static char suite_name[256] = "?";
static int skip_pipe[2] = {-1, -1};

static void suite_name_from_exe(void)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    exe[n] = '\0';
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    if (strncmp(base, "test_", 5) == 0) base += 5;
    snprintf(suite_name, sizeof suite_name, "%s", base);
}

/* Writes one record byte ('s' or 'p') for the runner to count. */
static void skip_record(char kind)
{
    if (skip_pipe[1] >= 0 && write(skip_pipe[1], &kind, 1) != 1)
        fprintf(stderr, "SKIP not counted: %s\n", strerror(errno));
}

void xf_test_skip(const char *fmt, ...)
{
    char reason[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    fprintf(stderr, "SKIP %s/%s: %s\n", suite_name, tcase_name(), reason);
    skip_record('s');
}

void xf_test_skip_part(const char *fmt, ...)
{
    /* Once per case and reason: a helper may be called many times a case. */
    static char last_case[256], last_reason[1024];
    char reason[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    int same_case = strcmp(last_case, tcase_name()) == 0;
    if (same_case && strcmp(last_reason, reason) == 0) return;
    snprintf(last_case, sizeof last_case, "%s", tcase_name());
    snprintf(last_reason, sizeof last_reason, "%s", reason);
    fprintf(stderr, "SKIP %s/%s (part): %s\n", suite_name, last_case, reason);
    if (!same_case) skip_record('p');
}

int xf_test_have_python(const char *module)
{
    return xf_test_system("/usr/bin/python3 -c 'import %s' > /dev/null 2>&1", module) == 0;
}

int xf_test_have_program(const char *program)
{
    return xf_test_system("command -v '%s' > /dev/null 2>&1", program) == 0;
}

const char *xf_test_mpirun(const char **why)
{
#ifndef XF_HAVE_MPI
    *why = "this build has no MPI (libopenmpi-dev not found by CMake)";
    return NULL;
#endif
    *why = "mpirun is not installed (openmpi-bin)";
    if (!xf_test_have_program("mpirun")) return NULL;
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    /* Under the sanitizers: Open MPI keeps its own allocations until exit. */
    return getenv("XF_SANITIZED") ? "mpirun --oversubscribe -x ASAN_OPTIONS=detect_leaks=0"
                                  : "mpirun --oversubscribe";
}

void xf_test_onnx_checker(const char *path)
{
    static int have = -1;
    if (have < 0) have = xf_test_have_python("onnx");
    if (!have) {
        xf_test_skip_part("python3's onnx module not found: onnx.checker not run");
        return;
    }
    int rc = xf_test_system("/usr/bin/python3 -c 'import onnx, sys; "
                            "onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' "
                            "'%s'",
                            path);
    ck_assert_msg(rc == 0, "onnx.checker rejects %s", path);
}

/* Opens the skip pipe: close-on-exec, the write end non-blocking (a full
 * pipe, 64 KiB of skips, loses a count rather than hanging a case). */
static int skip_pipe_open(void)
{
    if (pipe(skip_pipe) != 0) return -1;
    for (int i = 0; i < 2; i++)
        if (fcntl(skip_pipe[i], F_SETFD, FD_CLOEXEC) != 0 ||
            fcntl(skip_pipe[i], F_SETFL, O_NONBLOCK) != 0)
            return -1;
    return 0;
}

/* Closes the write end and counts the records: skipped cases into *s,
 * cases without some check into *p. */
static void skip_pipe_count(int *s, int *p)
{
    *s = *p = 0;
    close(skip_pipe[1]);
    skip_pipe[1] = -1;
    char buf[4096];
    ssize_t n;
    while ((n = read(skip_pipe[0], buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n; i++) {
            *s += buf[i] == 's';
            *p += buf[i] == 'p';
        }
    close(skip_pipe[0]);
    skip_pipe[0] = -1;
}

int xf_test_run(Suite *s)
{
    suite_name_from_exe();
    if (skip_pipe_open() != 0) {
        fprintf(stderr, "%s: cannot open the skip pipe: %s\n", suite_name, strerror(errno));
        return 1;
    }
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int n = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    int skipped, part;
    skip_pipe_count(&skipped, &part);
    printf("%s: %d cases, %d passed, %d failed, %d skipped", suite_name, n, n - failed - skipped,
           failed, skipped);
    if (part > 0) printf(" (%d ran without some check)", part);
    printf("\n");
    fflush(stdout);
    if (failed > 0) return 1;
    return n > 0 && skipped == n ? 77 : 0;
}

/* One element check shared by the integer expectations. */
#define XF_EXPECT_INTS(t, v, n, dt, type)                                                \
    do {                                                                                \
        ck_assert_int_eq((t)->dtype, (dt));                                             \
        ck_assert_int_eq(xf_shape_numel(&(t)->shape), (n));                             \
        const type *d_ = (t)->data;                                                     \
        for (int64_t i_ = 0; i_ < (n); i_++)                                            \
            ck_assert_msg(d_[i_] == (v)[i_], "element %lld is %lld, expected %lld",     \
                          (long long)i_, (long long)d_[i_], (long long)(v)[i_]);        \
    } while (0)

void xf_test_expect_i64(const xf_tensor *t, const int64_t *v, int64_t n)
{
    XF_EXPECT_INTS(t, v, n, XF_I64, int64_t);
}

void xf_test_expect_i32(const xf_tensor *t, const int32_t *v, int64_t n)
{
    XF_EXPECT_INTS(t, v, n, XF_I32, int32_t);
}

void xf_test_expect_bool(const xf_tensor *t, const uint8_t *v, int64_t n)
{
    XF_EXPECT_INTS(t, v, n, XF_BOOL, uint8_t);
}

void xf_test_chromium_screenshot(const char *url, unsigned width, unsigned height,
                                 long min_bytes)
{
    char path[4200];
    snprintf(path, sizeof path, "%s", xf_test_tmp("screenshot.png"));
    unlink(path);
    ck_assert_int_eq(xf_test_system("chromium --headless --no-sandbox --disable-gpu "
                                    "--user-data-dir='%s' --screenshot='%s' --window-size=%u,%u "
                                    "'%s' > /dev/null 2>&1",
                                    xf_test_tmp("chromium-profile"), path, width, height, url),
                     0);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s not written", path);
    unsigned char h[24];
    ck_assert_uint_eq(fread(h, 1, sizeof h, f), sizeof h);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    ck_assert_int_eq(memcmp(h, "\x89PNG\r\n\x1a\n", 8), 0);
    unsigned w = (unsigned)h[16] << 24 | (unsigned)h[17] << 16 | (unsigned)h[18] << 8 | h[19];
    unsigned ht = (unsigned)h[20] << 24 | (unsigned)h[21] << 16 | (unsigned)h[22] << 8 | h[23];
    ck_assert_uint_eq(w, width);
    ck_assert_uint_eq(ht, height);
    ck_assert_int_gt(size, min_bytes);
}

char *xf_test_chromium_dom(const char *url)
{
    char dom[4200], log[4200];
    snprintf(dom, sizeof dom, "%s", xf_test_tmp("dom.html"));
    snprintf(log, sizeof log, "%s", xf_test_tmp("chromium.log"));
    int rc = xf_test_system("chromium --headless --no-sandbox --disable-gpu --user-data-dir='%s' "
                            "--enable-logging=stderr --v=0 --dump-dom '%s' > '%s' 2> '%s'",
                            xf_test_tmp("chromium-profile"), url, dom, log);
    ck_assert_int_eq(rc, 0);
    char *text = xf_test_read_file(log, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(!strstr(text, "CONSOLE"), "console messages:\n%s", text);
    free(text);
    text = xf_test_read_file(dom, NULL);
    ck_assert_ptr_nonnull(text);
    return text;
}
