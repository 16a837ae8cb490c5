/*
 * cli.c — the tools' shared argument parsers (see cli.h). strtoll with
 * errno catches overflow that atoll would silently wrap or clamp.
 */
#include "tools/cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/ir.h"

int xf_cli_parse_i64(const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    if (!text || !*text || !(text[0] == '-' || (text[0] >= '0' && text[0] <= '9'))) return -1;
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, 10);
    if (errno == ERANGE || *end || x < lo || x > hi) return -1;
    *out = (int64_t)x;
    return 0;
}

int xf_cli_parse_u64(const char *text, uint64_t *out)
{
    if (!text || !(text[0] >= '0' && text[0] <= '9')) return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(text, &end, 10);
    if (errno == ERANGE || *end) return -1;
    *out = (uint64_t)x;
    return 0;
}

int xf_cli_max_threads(void)
{
    return 4 * xf_cli_online_cpus(1 << 16);
}

int xf_cli_parse_threads(const char *opt, const char *text, int lo, int *out, char *msg,
                         size_t msg_n)
{
    int64_t v;
    int cap = xf_cli_max_threads();
    if (xf_cli_parse_i64(text, lo, cap, &v) == 0) {
        *out = (int)v;
        return 0;
    }
    int64_t big;
    if (xf_cli_parse_i64(text, cap + 1, INT64_MAX, &big) == 0)
        snprintf(msg, msg_n, "%s %s is more than 4 x the %d online CPUs; give at most %d", opt,
                 text, cap / 4, cap);
    else
        snprintf(msg, msg_n, "%s needs an integer from %d to %d (4 x the online CPUs), got '%s'",
                 opt, lo, cap, text ? text : "(nothing)");
    return -1;
}

int xf_cli_online_cpus(int hi)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > hi ? hi : (int)n;
}

int xf_cli_parse_f64(const char *text, double lo, double hi, double *out)
{
    if (!text || !*text || isspace((unsigned char)text[0])) return -1;
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    if (errno == ERANGE || *end || !isfinite(x) || !(x >= lo && x <= hi)) return -1;
    *out = x;
    return 0;
}

int xf_cli_dims_add(xf_cli_dims *d, const char *arg, char *msg, size_t msg_n)
{
    const char *eq = arg ? strchr(arg, '=') : NULL;
    int64_t v;
    if (!eq || eq == arg) {
        snprintf(msg, msg_n, "expects NAME=N, got '%s'", arg ? arg : "(nothing)");
    } else if ((size_t)(eq - arg) >= XF_CLI_DIM_NAME) {
        snprintf(msg, msg_n, "name longer than %d bytes in '%s'", XF_CLI_DIM_NAME - 1, arg);
    } else if (xf_cli_parse_i64(eq + 1, 1, INT64_MAX, &v) != 0) {
        snprintf(msg, msg_n, "expects NAME=N with N an integer >= 1 that fits 64 bits, got '%s'",
                 arg);
    } else if (d->n == XF_CLI_MAX_DIMS) {
        snprintf(msg, msg_n, "at most %d dimensions can be set, '%s' is one more",
                 XF_CLI_MAX_DIMS, arg);
    } else {
        memcpy(d->buf[d->n], arg, (size_t)(eq - arg));
        d->buf[d->n][eq - arg] = '\0';
        d->names[d->n] = d->buf[d->n];
        d->values[d->n++] = v;
        return 0;
    }
    return -1;
}

/* "512M" -> 512 MiB; 0 and *bytes set, else -1. */
static int parse_size(const char *text, int64_t *bytes)
{
    static const char suffix[] = "KMGT";
    size_t n = text ? strlen(text) : 0;
    char num[32];
    int shift = 0;
    if (n == 0 || n >= sizeof num) return -1;
    memcpy(num, text, n + 1);
    const char *s = strchr(suffix, num[n - 1] >= 'a' ? num[n - 1] - 'a' + 'A' : num[n - 1]);
    if (s && *s) {
        shift = 10 * (int)(s - suffix + 1);
        num[n - 1] = '\0';
    }
    int64_t v;
    if (xf_cli_parse_i64(num, 1, XF_SHAPE_MAX_ELEMS >> shift, &v) != 0) return -1;
    *bytes = v << shift;
    return 0;
}

int xf_cli_mem_limit(const char *arg, char *msg, size_t msg_n)
{
    const char *from = "--mem-limit", *text = arg;
    if (!text) {
        from = "RLFLOW_MEM_LIMIT";
        text = getenv(from);
        if (!text) return 0;
    }
    int64_t bytes;
    if (parse_size(text, &bytes) != 0 || bytes < ((int64_t)1 << 20)) {
        snprintf(msg, msg_n,
                 "%s expects a size from 1M to 2^62 bytes, a number with an optional K, M, G or T "
                 "suffix (e.g. 512M, 8G), got '%s'",
                 from, text);
        return -1;
    }
    xf_mem_limit_set((size_t)bytes);
    return 0;
}
