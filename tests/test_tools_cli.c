/*
 * test_tools_cli.c — the tools' shared argument parsers (tools/cli):
 * checked integers, finite numbers (tolerances) and --dim NAME=N,
 * including the inputs atoll and strtod used to
 * take silently (overflow, trailing junk, empty names) and the messages
 * that name the bad argument; and --mem-limit SIZE / RLFLOW_MEM_LIMIT.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tools/cli/cli.h"

START_TEST(parse_i64_checks_range_and_junk)
{
    int64_t v = 7;
    ck_assert_int_eq(xf_cli_parse_i64("42", 0, 100, &v), 0);
    ck_assert_int_eq(v, 42);
    ck_assert_int_eq(xf_cli_parse_i64("-3", -5, 5, &v), 0);
    ck_assert_int_eq(v, -3);
    ck_assert_int_eq(xf_cli_parse_i64("9223372036854775807", 1, INT64_MAX, &v), 0);
    ck_assert(v == INT64_MAX);
    v = 7;
    const char *bad[] = {NULL, "", "101", "-1", "4x", " 4", "+4", "0x10",
                         "9223372036854775808", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(xf_cli_parse_i64(bad[i], 0, 100, &v) == -1, "accepted '%s'", bad[i]);
    ck_assert_int_eq(v, 7);
}
END_TEST

/* Seeds: unsigned 64-bit, nothing else (xfonnx took 12x, -1 and overflow);
 * thread counts: 1 (or 0) up to 4 x the online CPUs, one message naming
 * the cap (100000 crashed libgomp and ONNX Runtime). */
START_TEST(seeds_and_thread_counts)
{
    uint64_t u = 0;
    ck_assert_int_eq(xf_cli_parse_u64("18446744073709551615", &u), 0);
    ck_assert_uint_eq(u, UINT64_MAX);
    const char *bad[] = {"12x", "-1", "18446744073709551616", "", " 1", "+1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(xf_cli_parse_u64(bad[i], &u) == -1, "'%s' accepted", bad[i]);
    int cap = xf_cli_max_threads(), t = 0;
    char msg[256];
    ck_assert_int_ge(cap, 4);
    ck_assert_int_eq(xf_cli_parse_threads("--threads", "1", 1, &t, msg, sizeof msg), 0);
    ck_assert_int_eq(t, 1);
    char at[32];
    snprintf(at, sizeof at, "%d", cap);
    ck_assert_int_eq(xf_cli_parse_threads("--threads", at, 1, &t, msg, sizeof msg), 0);
    ck_assert_int_eq(t, cap);
    ck_assert_int_eq(xf_cli_parse_threads("--threads", "100000", 1, &t, msg, sizeof msg), -1);
    xf_test_expect_contains(msg, "--threads 100000 is more than 4 x the");
    ck_assert_int_eq(xf_cli_parse_threads("--threads", "0", 1, &t, msg, sizeof msg), -1);
    ck_assert_int_eq(xf_cli_parse_threads("--threads", "0", 0, &t, msg, sizeof msg), 0);
    ck_assert_int_eq(xf_cli_parse_threads("--threads", "x", 1, &t, msg, sizeof msg), -1);
    xf_test_expect_contains(msg, "needs an integer from 1 to");
}
END_TEST

START_TEST(parse_f64_takes_finite_numbers_in_range)
{
    double v = 7;
    ck_assert_int_eq(xf_cli_parse_f64("1e-3", 0, 10, &v), 0);
    ck_assert(v == 1e-3);
    ck_assert_int_eq(xf_cli_parse_f64("0", 0, 10, &v), 0);
    ck_assert(v == 0);
    v = 7;
    const char *bad[] = {NULL, "", "inf", "-inf", "nan", "infinity", "1e400", "-0.5", "11",
                         "1x", " 1", "0x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(xf_cli_parse_f64(bad[i], 0, 10, &v) == -1, "accepted '%s'", bad[i]);
    ck_assert(v == 7);
}
END_TEST

START_TEST(dims_parse_and_name_the_bad_argument)
{
    xf_cli_dims d = {0};
    char msg[256];
    ck_assert_int_eq(xf_cli_dims_add(&d, "batch=8", msg, sizeof msg), 0);
    ck_assert_int_eq(xf_cli_dims_add(&d, "seq=128", msg, sizeof msg), 0);
    ck_assert_int_eq(d.n, 2);
    ck_assert_str_eq(d.names[0], "batch");
    ck_assert_int_eq(d.values[0], 8);
    ck_assert_str_eq(d.names[1], "seq");
    ck_assert_int_eq(d.values[1], 128);

    const char *bad[] = {"batch", "=8", "batch=0", "batch=-2", "batch=8x", "batch=",
                         "batch=99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        msg[0] = '\0';
        ck_assert_msg(xf_cli_dims_add(&d, bad[i], msg, sizeof msg) == -1, "accepted '%s'", bad[i]);
        ck_assert_msg(strstr(msg, bad[i]) != NULL, "message '%s' does not name '%s'", msg, bad[i]);
    }
    ck_assert_int_eq(xf_cli_dims_add(&d, NULL, msg, sizeof msg), -1);
    xf_test_expect_contains(msg, "(nothing)");
    char longname[XF_CLI_DIM_NAME + 8];
    memset(longname, 'n', XF_CLI_DIM_NAME);
    strcpy(longname + XF_CLI_DIM_NAME, "=4");
    ck_assert_int_eq(xf_cli_dims_add(&d, longname, msg, sizeof msg), -1);
    xf_test_expect_contains(msg, "longer than");
    ck_assert_int_eq(d.n, 2);

    while (d.n < XF_CLI_MAX_DIMS) ck_assert_int_eq(xf_cli_dims_add(&d, "k=1", msg, sizeof msg), 0);
    ck_assert_int_eq(xf_cli_dims_add(&d, "extra=1", msg, sizeof msg), -1);
    xf_test_expect_contains(msg, "'extra=1'");
    ck_assert_int_eq(d.n, XF_CLI_MAX_DIMS);
}
END_TEST

/* --mem-limit SIZE, else RLFLOW_MEM_LIMIT, sets the memory limit on tensors;
 * a bad size is refused naming where it came from and leaves it alone. */
START_TEST(mem_limit_from_option_or_environment)
{
    char msg[256];
    unsetenv("RLFLOW_MEM_LIMIT");
    size_t def = xf_mem_limit();
    ck_assert_int_eq(xf_cli_mem_limit(NULL, msg, sizeof msg), 0);
    ck_assert_uint_eq(xf_mem_limit(), def);
    const struct {
        const char *text;
        size_t bytes;
    } ok[] = {{"1048576", (size_t)1 << 20}, {"512M", (size_t)512 << 20}, {"64m", (size_t)64 << 20},
              {"8G", (size_t)8 << 30},      {"2048K", (size_t)2 << 20},  {"4194304T", (size_t)1 << 62}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        ck_assert_msg(xf_cli_mem_limit(ok[i].text, msg, sizeof msg) == 0, "refused '%s': %s",
                      ok[i].text, msg);
        ck_assert_uint_eq(xf_mem_limit(), ok[i].bytes);
    }
    const char *bad[] = {"", "0", "1048575", "512K", "8X", "8GB", "-1G", " 8G", "4194305T",
                         "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        msg[0] = '\0';
        ck_assert_msg(xf_cli_mem_limit(bad[i], msg, sizeof msg) == -1, "accepted '%s'", bad[i]);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "got '%s'", bad[i]);
        xf_test_expect_contains(msg, "--mem-limit expects a size from 1M to 2^62 bytes");
        xf_test_expect_contains(msg, quoted);
    }
    ck_assert_uint_eq(xf_mem_limit(), (size_t)1 << 62);
    setenv("RLFLOW_MEM_LIMIT", "3G", 1);
    ck_assert_int_eq(xf_cli_mem_limit(NULL, msg, sizeof msg), 0);
    ck_assert_uint_eq(xf_mem_limit(), (size_t)3 << 30);
    ck_assert_int_eq(xf_cli_mem_limit("1G", msg, sizeof msg), 0); /* the option wins */
    ck_assert_uint_eq(xf_mem_limit(), (size_t)1 << 30);
    setenv("RLFLOW_MEM_LIMIT", "lots", 1);
    ck_assert_int_eq(xf_cli_mem_limit(NULL, msg, sizeof msg), -1);
    xf_test_expect_contains(msg, "RLFLOW_MEM_LIMIT expects a size");
    xf_test_expect_contains(msg, "got 'lots'");
    unsetenv("RLFLOW_MEM_LIMIT");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tools_cli");
    TCase *t = tcase_create("core");
    tcase_add_test(t, parse_i64_checks_range_and_junk);
    tcase_add_test(t, parse_f64_takes_finite_numbers_in_range);
    tcase_add_test(t, dims_parse_and_name_the_bad_argument);
    tcase_add_test(t, mem_limit_from_option_or_environment);
    tcase_add_test(t, seeds_and_thread_counts);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
