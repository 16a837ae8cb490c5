/*
 * test_tools_cli.c — the tools' shared argument parsers (tools/cli):
 * checked integers, finite numbers (tolerances) and --dim NAME=N,
 * including the inputs atoll and strtod used to
 * take silently (overflow, trailing junk, empty names) and the messages
 * that name the bad argument; --mem-limit SIZE / RLFLOW_MEM_LIMIT; and the
 * table-driven parser: every option type stored, --help printed from the
 * table, every bad value said one way.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ------------------------------------------------ the table of options */

typedef struct table_vals {
    int flag, n, choice, threads;
    double x;
    const char *file, *pos[2];
    xf_cli_dims dims;
    int called;
    int64_t big;
    uint64_t seed;
    unsigned char seen[10]; /* which options were given, in table order */
} table_vals;

static int call_twice(void *user, const char *name, const char *v, char *msg, size_t n)
{
    table_vals *t = user;
    if (v && !strcmp(v, "bad")) return xf_cli_needs(msg, n, name, "anything but bad", v);
    t->called += 2;
    return 0;
}

static const char *const colours[] = {"red", "green", "blue", NULL};
static const int colour_values[] = {10, 20, 30};

/* Parses args (NULL-terminated) with a table of every type; what the parse
 * said on stderr into err, the table's --help into help (when given). */
static int parse_with_table(table_vals *t, const char *const *args, char *err, size_t n,
                            char *help, size_t help_n)
{
    memset(t, 0, sizeof *t);
    t->n = 5;
    const xf_cli_opt opts[] = {
        {.name = "--flag", .alias = "-f", .type = XF_CLI_FLAG, .off = offsetof(table_vals, flag), .set = 3,
         .label = "-f, --flag", .help = "a flag"},
        {.name = "--file", .type = XF_CLI_STR, .off = offsetof(table_vals, file), .what = "a file name",
         .label = "--file FILE", .help = "a file\nover two lines"},
        {.name = "--n", .type = XF_CLI_INT, .off = offsetof(table_vals, n), .lo = 1, .hi = 9, .label = "--n N",
         .help = "a count"},
        {.name = "--x", .type = XF_CLI_F64, .off = offsetof(table_vals, x), .lo = 0.5, .label = NULL},
        {.name = "--colour", .type = XF_CLI_CHOICE, .off = offsetof(table_vals, choice), .choices = colours,
         .values = colour_values, .label = "--colour-of-the-thing C", .help = "red, green or blue"},
        {.name = "--threads", .type = XF_CLI_THREADS, .off = offsetof(table_vals, threads), .lo = 1,
         .label = "--threads N", .help = "threads"},
        {.name = "--dim", .type = XF_CLI_DIM, .off = offsetof(table_vals, dims), .label = "--dim NAME=N",
         .help = "a dim"},
        {.name = "--call", .type = XF_CLI_CALL, .takes_value = 1, .call = call_twice,
         .label = "--call V", .help = "called"},
        {.name = "--big", .type = XF_CLI_I64, .off = offsetof(table_vals, big), .lo = 5},
        {.name = "--seed", .type = XF_CLI_U64, .off = offsetof(table_vals, seed)},
    };
    xf_cli_spec spec = {.tool = "tool", .head = "usage: tool [options]\n", .tail = "end\n",
                        .opts = opts, .n_opts = (int)(sizeof opts / sizeof opts[0]),
                        .positional = t->pos, .n_positional = 2, .base = t,
                        .seen = t->seen};
    char *argv[32] = {"tool"};
    int argc = 1;
    while (args[argc - 1]) {
        argv[argc] = (char *)args[argc - 1];
        argc++;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s", xf_test_tmp("cli_stderr.txt"));
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    dup2(fileno(f), 2);
    int rc = xf_cli_parse(&spec, argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(f);
    size_t len = 0;
    char *text = xf_test_read_file(path, &len);
    if (err) snprintf(err, n, "%s", text ? text : "");
    free(text);
    if (help) {
        FILE *h = tmpfile();
        ck_assert_ptr_nonnull(h);
        xf_cli_usage(&spec, h);
        rewind(h);
        size_t got = fread(help, 1, help_n - 1, h);
        help[got] = '\0';
        fclose(h);
    }
    return rc;
}

START_TEST(table_parses_every_type)
{
    table_vals t;
    char err[1024], help[2048];
    const char *good[] = {"in", "-f", "--file", "a.db", "--n", "7", "--x", "0.75", "--colour",
                          "blue", "--threads", "1", "--dim", "N=4", "--call", "v", "out", "--big",
                          "5000000000", "--seed", "18446744073709551615", NULL};
    ck_assert_int_eq(parse_with_table(&t, good, err, sizeof err, help, sizeof help), 0);
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(t.flag, 3);
    ck_assert_str_eq(t.file, "a.db");
    ck_assert_int_eq(t.n, 7);
    ck_assert_double_eq(t.x, 0.75);
    ck_assert_int_eq(t.choice, 30);
    ck_assert_int_eq(t.threads, 1);
    ck_assert_int_eq(t.dims.n, 1);
    ck_assert_str_eq(t.dims.names[0], "N");
    ck_assert_int_eq(t.called, 2);
    ck_assert_str_eq(t.pos[0], "in");
    ck_assert_str_eq(t.pos[1], "out");
    ck_assert_int_eq(t.big, 5000000000LL);
    ck_assert_uint_eq(t.seed, UINT64_MAX);
    for (int i = 0; i < 10; i++) /* every option was given (-f counts as --flag) */
        ck_assert_int_eq(t.seen[i], 1);
    /* --help from the table: labels in one column, continuation lines under
     * the help, a long label followed by two spaces, hidden options left out */
    ck_assert_str_eq(help, "usage: tool [options]\n"
                           "  -f, --flag         a flag\n"
                           "  --file FILE        a file\n"
                           "                     over two lines\n"
                           "  --n N              a count\n"
                           "  --colour-of-the-thing C  red, green or blue\n"
                           "  --threads N        threads\n"
                           "  --dim NAME=N       a dim\n"
                           "  --call V           called\n"
                           "end\n");
    const char *helps[] = {"--n", "3", "-h", "--bogus", NULL};
    ck_assert_int_eq(parse_with_table(&t, helps, err, sizeof err, NULL, 0), -1);
    ck_assert_int_eq(t.n, 3); /* what came before -h was parsed */
}
END_TEST

/* Every bad value said one way, naming the option and the value; status 2. */
START_TEST(table_says_what_is_wrong)
{
    static const struct {
        const char *args[4], *said;
    } bad[] = {
        {{"--n", "0"}, "tool: --n needs an integer in range, got '0'\n"},
        {{"--n"}, "tool: --n needs an integer in range, got '(nothing)'\n"},
        {{"--x", "0.25"}, "tool: --x needs a finite number >= 0.5, got '0.25'\n"},
        {{"--x", "inf"}, "tool: --x needs a finite number >= 0.5, got 'inf'\n"},
        {{"--file", ""}, "tool: --file needs a file name, got ''\n"},
        {{"--colour", "pink"}, "tool: --colour needs red, green or blue, got 'pink'\n"},
        {{"--call", "bad"}, "tool: --call needs anything but bad, got 'bad'\n"},
        {{"--dim", "N"}, "tool: --dim "},
        {{"--threads", "0"}, "tool: --threads "},
        {{"--big", "4"}, "tool: --big needs an integer in range, got '4'\n"},
        {{"--seed", "-1"}, "tool: --seed needs an integer from 0 to 2^64-1, got '-1'\n"},
        {{"--bogus"}, "tool: unknown option '--bogus' (see tool --help)\n"},
        {{"a", "b", "c"}, "tool: unexpected argument 'c'\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        table_vals t;
        char err[1024];
        const char *args[5] = {bad[i].args[0], bad[i].args[1], bad[i].args[2], bad[i].args[3],
                               NULL};
        ck_assert_int_eq(parse_with_table(&t, args, err, sizeof err, NULL, 0), 2);
        ck_assert_msg(strncmp(err, bad[i].said, strlen(bad[i].said)) == 0, "said '%s', not '%s'",
                      err, bad[i].said);
    }
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
    tcase_add_test(t, table_parses_every_type);
    tcase_add_test(t, table_says_what_is_wrong);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
