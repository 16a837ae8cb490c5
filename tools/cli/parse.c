/*
 * parse.c — the table-driven command line (cli.h, "a table of options"):
 * one loop over argv that looks each option up in the tool's table, checks
 * its value by type and stores it; the --help text printed from the same
 * table. Bad values are said one way: "TOOL: OPT needs WHAT, got 'VALUE'".
 */
#include "cli.h"

#include <float.h>
#include <string.h>

int xf_cli_needs(char *msg, size_t n, const char *opt, const char *what, const char *value)
{
    snprintf(msg, n, "%s needs %s, got '%s'", opt, what, value ? value : "(nothing)");
    return -1;
}

static const xf_cli_opt *find(const xf_cli_spec *s, const char *a)
{
    for (int i = 0; i < s->n_opts; i++)
        if (!strcmp(a, s->opts[i].name) || (s->opts[i].alias && !strcmp(a, s->opts[i].alias)))
            return &s->opts[i];
    return NULL;
}

/* "a, b or c" of a choice's values. */
static void choice_list(const xf_cli_opt *o, char *buf, size_t n)
{
    size_t k = 0, count = 0;
    while (o->choices[count]) count++;
    buf[0] = '\0';
    for (size_t i = 0; i < count && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i == 0 ? "" : i + 1 == count ? " or " : ", ",
                              o->choices[i]);
}

/* Stores the value of o; 0, or -1 with the message in msg. */
static int store(const xf_cli_spec *s, const xf_cli_opt *o, const char *a, const char *v,
                 char *msg, size_t n)
{
    char what[256];
    int64_t i64;
    void *dst = (char *)s->base + o->off;
    switch (o->type) {
    case XF_CLI_FLAG: *(int *)dst = o->set; return 0;
    case XF_CLI_STR:
        if (!v || (!*v && !o->allow_empty))
            return xf_cli_needs(msg, n, a, o->what ? o->what : "a value", v);
        *(const char **)dst = v;
        return 0;
    case XF_CLI_INT:
        if (xf_cli_parse_i64(v, (int64_t)o->lo, (int64_t)o->hi, &i64) != 0)
            return xf_cli_needs(msg, n, a, o->what ? o->what : "an integer in range", v);
        *(int *)dst = (int)i64;
        return 0;
    case XF_CLI_I64:
        if (xf_cli_parse_i64(v, (int64_t)o->lo, o->hi > 0 ? (int64_t)o->hi : INT64_MAX,
                             (int64_t *)dst) == 0)
            return 0;
        return xf_cli_needs(msg, n, a, o->what ? o->what : "an integer in range", v);
    case XF_CLI_U64:
        if (xf_cli_parse_u64(v, (uint64_t *)dst) == 0) return 0;
        return xf_cli_needs(msg, n, a, o->what ? o->what : "an integer from 0 to 2^64-1", v);
    case XF_CLI_F64:
        if (xf_cli_parse_f64(v, o->lo, o->hi > 0 ? o->hi : DBL_MAX, (double *)dst) == 0)
            return 0;
        snprintf(what, sizeof what, "a finite number >= %g", o->lo);
        return xf_cli_needs(msg, n, a, o->what ? o->what : what, v);
    case XF_CLI_CHOICE:
        for (int i = 0; v && o->choices[i]; i++)
            if (!strcmp(v, o->choices[i])) {
                *(int *)dst = o->values ? o->values[i] : i;
                return 0;
            }
        choice_list(o, what, sizeof what);
        return xf_cli_needs(msg, n, a, what, v);
    case XF_CLI_THREADS: return xf_cli_parse_threads(a, v, (int)o->lo, (int *)dst, msg, n);
    case XF_CLI_DIM:
        if (xf_cli_dims_add(dst, v, what, sizeof what) == 0) return 0;
        snprintf(msg, n, "%s %s", a, what);
        return -1;
    case XF_CLI_CALL: return o->call(s->base, a, v, msg, n);
    }
    return -1;
}

int xf_cli_parse(const xf_cli_spec *s, int argc, char **argv)
{
    int n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            xf_cli_usage(s, stdout);
            return -1;
        }
        const xf_cli_opt *o = find(s, a);
        if (o) {
            int takes = o->type != XF_CLI_FLAG && (o->type != XF_CLI_CALL || o->takes_value);
            char msg[1024];
            if (store(s, o, a, takes ? next : NULL, msg, sizeof msg) != 0) {
                fprintf(stderr, "%s: %s\n", s->tool, msg);
                return 2;
            }
            if (s->seen) s->seen[o - s->opts] = 1;
            i += takes;
        } else if (a[0] == '-') {
            fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", s->tool, a, s->tool);
            return 2;
        } else if (n_pos < s->n_positional) {
            s->positional[n_pos++] = a;
        } else {
            fprintf(stderr, "%s: unexpected argument '%s'\n", s->tool, a);
            return 2;
        }
    }
    return 0;
}

void xf_cli_usage(const xf_cli_spec *s, FILE *f)
{
    fputs(s->head, f);
    for (int i = 0; i < s->n_opts; i++) {
        const xf_cli_opt *o = &s->opts[i];
        if (!o->label) continue;
        const char *h = o->help;
        size_t len = strcspn(h, "\n");
        if (strlen(o->label) <= 18) fprintf(f, "  %-18s %.*s\n", o->label, (int)len, h);
        else fprintf(f, "  %s  %.*s\n", o->label, (int)len, h);
        for (h += len; *h == '\n'; h += len) {
            h++;
            len = strcspn(h, "\n");
            fprintf(f, "%21s%.*s\n", "", (int)len, h);
        }
    }
    fputs(s->tail, f);
}
