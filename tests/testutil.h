/*
 * testutil.h — helpers shared by the Check suites: where the shared models,
 * the ONNX backend test data and the built tools are, a scratch directory,
 * exact checks of integer tensors, whole files read into memory,
 * graph-building shorthands that fail the running test on error, an infix
 * graph parser, a check that two graphs compute the same function, skips
 * that show, and a runner that executes a suite with CK_ENV-style defaults
 * and prints its summary.
 *
 * Skips. A case that cannot run (a tool, a Python module, data or a GPU is
 * missing) calls XF_SKIP: it prints "SKIP <suite>/<case>: <reason>" and
 * ends the case, which the suite's summary then counts as skipped, not as
 * passed. A case that runs but must leave out one of its checks calls
 * xf_test_skip_part: the same line with "(part)", and the summary counts
 * the case apart. Check runs each case in a forked child by default, so a
 * counter kept by the case would die with the child: xf_test_run opens a
 * pipe before running the suite, every skip writes one byte to it ('s' a
 * skipped case, 'p' a case without some check), and after the run the
 * parent reads the bytes back. A pipe rather than a file: nothing to name
 * or remove, nothing shared by suites CTest runs side by side, and it works
 * the same without fork (CK_FORK=no). Its ends are close-on-exec, so the
 * programs cases run do not hold them.
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
/* A path that behaves as /dev/full (every write fails with "No space left
 * on device") for output-file tests: a character device 1,7 made as the
 * scratch file `name`, or /dev/full itself when this process cannot make
 * device nodes, and so, not being root, cannot replace /dev/full either
 * if the code under test is broken. NULL when neither is possible (skip).
 * Static buffer. */
const char *xf_test_full_device(const char *name);
/* A fresh FIFO as the scratch file `name`; NULL when it cannot be made.
 * Static buffer. */
const char *xf_test_fifo(const char *name);
/* Whether path (not following a link) is a character device. */
int xf_test_is_char_device(const char *path);
/* Path of a built tool (modelzoo, xfonnx). Static buffer. */
const char *xf_test_tool(const char *name);
/* Removes an SQLite database file and its -wal and -shm sidecars, if present. */
void xf_test_remove_db(const char *path);
/* One integer from a plain SQLite query on the database file at path / SQL
 * run on it, past the rulesdb API (asserting each works). */
int64_t xf_test_sql_int(const char *path, const char *sql);
void xf_test_sql_exec(const char *path, const char *sql);
/* The pid of a process that has exited and been reaped (free, for now): a
 * stand-in for a killed writer. */
int xf_test_dead_pid(void);
/* Runs a shell command, returns its exit status (-1 if it did not exit). */
int xf_test_system(const char *fmt, ...);
/* How many nodes of g have operator op. */
int xf_test_count_op(const xf_graph *g, xf_op op);
/* A float32 rank-0 constant holding v (asserting it is added). */
int xf_test_scalar(xf_graph *g, const char *name, float v);
/* Builds modelzoo MODEL in-process with ARGS as the CLI spells them
 * ("--layers 2 --seed 3") into *g (asserting it works). */
void xf_test_modelzoo_build(const char *model, const char *args, xf_graph *g);
/* The same model written to the scratch file "<name>.onnx" and loaded back
 * into *g, as the importer sees it (asserting every step works). */
void xf_test_modelzoo(const char *model, const char *args, const char *name, xf_graph *g);
/* Fill a tensor with deterministic random values (floats in [-1,1], ints in [0, hi)). */
void xf_test_fill(xf_tensor *t, uint64_t seed, int64_t int_hi);
/* Assert that an integer tensor has dtype int64 / int32 / bool and exactly
 * the n values given (the message names the first differing element). */
void xf_test_expect_i64(const xf_tensor *t, const int64_t *v, int64_t n);
void xf_test_expect_i32(const xf_tensor *t, const int32_t *v, int64_t n);
void xf_test_expect_bool(const xf_tensor *t, const uint8_t *v, int64_t n);
/* The whole file at path, NUL-terminated, in a malloc'd buffer the caller
 * frees; its length (without the NUL) in *len unless len is NULL. Fails the
 * running test, naming the path, when the file cannot be read. */
char *xf_test_read_file(const char *path, size_t *len);
/* Asserts that the file at `copy` holds the bytes of the file at `orig`. */
void xf_test_expect_same_file(const char *orig, const char *copy);
/* Asserts that text contains needle (the message shows the text). */
void xf_test_expect_contains(const char *text, const char *needle);
/* A float32 graph input of the given rank and dims. */
int xf_test_input(xf_graph *g, const char *name, int rank, const int64_t *dims);
/* A float32 constant of the given rank and dims, filled by xf_test_fill. */
int xf_test_weight(xf_graph *g, const char *name, int rank, const int64_t *dims, uint64_t seed);
/* Output of op on a (and b when b >= 0) with params p (NULL: defaults). */
int xf_test_op2(xf_graph *g, xf_op op, const xf_params *p, int a, int b);
/* The same with three operands (a convolution with a bias, a layer norm with
 * its scale and bias). */
int xf_test_op3(xf_graph *g, xf_op op, const xf_params *p, int a, int b, int c);
/* Marks v as a graph output. */
void xf_test_out(xf_graph *g, int v);
/* x reshaped to `to` (fails the running test on error). */
int xf_test_reshape(xf_graph *g, int x, xf_shape to);
/* Adds the node an infix operator name stands for, on args[0..n_args), to g;
 * returns its output value (fails the running test on error). */
typedef int (*xf_test_infix_op)(xf_graph *g, const char *name, const int *args, int n_args);
/* Parses infix text "expr; expr; ..." into g with xf_graph_parse and marks
 * each expression a graph output. An expression is the name of one of g's
 * graph inputs or "name(expr, ...)", which apply turns into a node. */
void xf_test_parse_infix(xf_graph *g, const char *text, xf_test_infix_op apply);
/* Runs a and b on the same random inputs (drawn with seed); asserts that they
 * have as many inputs and outputs and that every output is within tol. */
void xf_test_expect_same_function(const xf_graph *a, const xf_graph *b, uint64_t seed,
                                  double tol);
/* Ends the running case as skipped: prints "SKIP <suite>/<case>: <reason>"
 * (printf-style) and returns from the test function, so use it in the
 * START_TEST body itself. */
#define XF_SKIP(...)                                                                     \
    do {                                                                                 \
        xf_test_skip(__VA_ARGS__);                                                       \
        return;                                                                          \
    } while (0)
void xf_test_skip(const char *fmt, ...) XF_PRINTF(1, 2);
/* Notes that the running case goes on without some check: prints
 * "SKIP <suite>/<case> (part): <reason>" once per case and reason (without
 * fork, once per test function); the case still passes or fails on the
 * checks it does run. */
void xf_test_skip_part(const char *fmt, ...) XF_PRINTF(1, 2);
/* Whether /usr/bin/python3 can import module. */
int xf_test_have_python(const char *module);
/* Whether program is on PATH. */
int xf_test_have_program(const char *program);
/* Opens url in headless Chromium and returns the DOM its scripts leave
 * (malloc'd, the caller frees it); fails the case when Chromium fails or
 * logs any console message (an uncaught error, a failed load). */
char *xf_test_chromium_dom(const char *url);
/* A width x height screenshot of url by headless Chromium, checked to be a
 * PNG of that size of more than min_bytes (a blank page compresses to a
 * few kB; text, tables and pictures do not). */
void xf_test_chromium_screenshot(const char *url, unsigned width, unsigned height,
                                 long min_bytes);
/* The command that starts an MPI job ("mpirun --oversubscribe", with what
 * Open MPI needs to run as root and under the sanitizers), or NULL with
 * *why when this build has no MPI or mpirun is not installed. */
const char *xf_test_mpirun(const char **why);
/* onnx.checker (full_check, /usr/bin/python3) accepts the model at path;
 * without Python's onnx module, a skipped part (xf_test_skip_part). */
void xf_test_onnx_checker(const char *path);
/* Runs suite `s`, then prints "<suite>: N cases, P passed, F failed, S
 * skipped" (and how many ran without some check). Returns the process
 * exit status: 1 when a case failed, 77 (CTest's SKIP_RETURN_CODE, set in
 * tests/CMakeLists.txt) when every case was skipped, 0 otherwise. */
int xf_test_run(Suite *s);

#endif
