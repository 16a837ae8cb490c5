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
