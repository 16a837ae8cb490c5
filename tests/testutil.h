/*
 * testutil.h — helpers shared by the Check suites: where the shared models,
 * the ONNX backend test data and the built tools are, a scratch directory,
 * exact checks of integer tensors, and a runner that executes a suite with CK_ENV-style defaults.
 */
#ifndef XF_TESTUTIL_H
#define XF_TESTUTIL_H

#include <check.h>

#include "ir/ir.h"
#include "onnx/onnx.h"

/* Directory from the environment variable, or NULL when unset or missing. */
const char *xf_test_dir(const char *env_var);
/* ../shared/models or NULL (tests using it then skip). */
const char *xf_test_models_dir(void);
/* A fresh scratch path "<tmpdir>/<name>" (directory created). Static buffer. */
const char *xf_test_tmp(const char *name);
/* Path of a built tool (modelzoo, xfonnx). Static buffer. */
const char *xf_test_tool(const char *name);
/* Runs a shell command, returns its exit status (-1 if it did not exit). */
int xf_test_system(const char *fmt, ...);
/* Fill a tensor with deterministic random values (floats in [-1,1], ints in [0, hi)). */
void xf_test_fill(xf_tensor *t, uint64_t seed, int64_t int_hi);
/* Assert that an integer tensor has dtype int64 / int32 / bool and exactly
 * the n values given (the message names the first differing element). */
void xf_test_expect_i64(const xf_tensor *t, const int64_t *v, int64_t n);
void xf_test_expect_i32(const xf_tensor *t, const int32_t *v, int64_t n);
void xf_test_expect_bool(const xf_tensor *t, const uint8_t *v, int64_t n);
/* Run suite `s`, return process exit status (0 when every test passed). */
int xf_test_run(Suite *s);

#endif
