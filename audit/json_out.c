/*
 * json_out.c — the few JSON primitives the exports need: string literals
 * with every character JSON requires escaped (and, for <script> blocks,
 * the characters HTML gives meaning to), numbers (non-finite ones as
 * strings, since JSON has no literal for them) and shapes.
 */
#include <math.h>

#include "audit_impl.h"

static void json_str(FILE *f, const char *s, int html)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20 || (html && (*p == '<' || *p == '>' || *p == '&')))
                fprintf(f, "\\u%04x", (unsigned)*p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void audit_json_str(FILE *f, const char *s)
{
    json_str(f, s, 0);
}

void audit_json_str_html(FILE *f, const char *s)
{
    json_str(f, s, 1);
}

void audit_json_num(FILE *f, double v)
{
    if (isnan(v))
        fputs("\"NaN\"", f);
    else if (isinf(v))
        fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", f);
    else
        fprintf(f, "%.9g", v);
}

void audit_json_shape(FILE *f, const xf_shape *s)
{
    fputc('[', f);
    for (int d = 0; d < s->rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)s->dims[d]);
    fputc(']', f);
}
