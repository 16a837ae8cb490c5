/*
 * testutil.c — see testutil.h.
 */
#include "testutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

const char *xf_test_tool(const char *name)
{
    static char buf[4096];
    const char *b = getenv("XF_BIN_DIR");
    snprintf(buf, sizeof buf, "%s/%s", b ? b : ".", name);
    return buf;
}

void xf_test_remove_db(const char *path)
{
    char aux[4200];
    unlink(path);
    snprintf(aux, sizeof aux, "%s-wal", path);
    unlink(aux);
    snprintf(aux, sizeof aux, "%s-shm", path);
    unlink(aux);
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

void xf_test_modelzoo(const char *model, const char *args, const char *name, xf_graph *g)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.onnx", xf_test_tmp(name));
    int rc = xf_test_system("%s %s %s -o %s > /dev/null", xf_test_tool("modelzoo"), model, args,
                            path);
    ck_assert_msg(rc == 0, "modelzoo %s %s exited %d", model, args, rc);
    xf_error err = {0};
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
    int v = xf_graph_op(g, op, p, in, b < 0 ? 1 : 2, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

void xf_test_out(xf_graph *g, int v)
{
    ck_assert_int_eq(xf_graph_mark_output(g, v, NULL), XF_OK);
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

int xf_test_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
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
