/*
 * log.c — the one logger. Libraries never print to stdout; everything goes
 * to stderr through xf_log, filtered by a level set by the program or by the
 * XF_LOG environment variable.
 */
#include "ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int level_set = 0;
static xf_log_level current = XF_LOG_WARN;

static void init_from_env(void)
{
    if (level_set) return;
    level_set = 1;
    const char *e = getenv("XF_LOG");
    if (!e) return;
    static const char *names[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i < 5; i++)
        if (strcmp(e, names[i]) == 0) current = (xf_log_level)i;
}

void xf_log_set_level(xf_log_level level)
{
    level_set = 1;
    current = level;
}

xf_log_level xf_log_get_level(void)
{
    init_from_env();
    return current;
}

void xf_log(xf_log_level level, const char *fmt, ...)
{
    init_from_env();
    if (level < current || current == XF_LOG_OFF) return;
    static const char *tags[] = {"debug", "info", "warning", "error"};
    fprintf(stderr, "%s: ", tags[level < XF_LOG_OFF ? level : XF_LOG_ERROR]);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
