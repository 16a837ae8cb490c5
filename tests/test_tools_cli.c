/*
 * test_tools_cli.c — the tools' shared argument parsers (tools/cli):
 * checked integers, finite numbers (tolerances) and --dim NAME=N,
 * including the inputs atoll and strtod used to
 * take silently (overflow, trailing junk, empty names) and the messages
 * that name the bad argument.
 */
#include <stdint.h>
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

int main(void)
{
    Suite *s = suite_create("tools_cli");
    TCase *t = tcase_create("core");
    tcase_add_test(t, parse_i64_checks_range_and_junk);
    tcase_add_test(t, parse_f64_takes_finite_numbers_in_range);
    tcase_add_test(t, dims_parse_and_name_the_bad_argument);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
