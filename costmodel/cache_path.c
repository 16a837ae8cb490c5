/*
 * cache_path.c — where the cost cache lives, one rule for every tool:
 * a path given is used as it is, the keyword "none" keeps nothing (an
 * in-memory cache), and no path means the user's cache,
 * $XDG_CACHE_HOME/rlflow/costs.db or else ~/.cache/rlflow/costs.db, its
 * directories created; with neither variable set, or when the directory
 * cannot be made, nothing is kept. A tool used to decide this itself, and
 * one that did not know "none" created a file of that name. The user's
 * rlflow directory itself (xf_cost_user_dir) also holds the default rules
 * database (optimize/default_rules.c).
 */
#include "costmodel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *xf_cost_user_dir(char *buf, size_t n)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[4000];
    if (xdg && *xdg) snprintf(dir, sizeof dir, "%s", xdg);
    else if (home && *home) snprintf(dir, sizeof dir, "%s/.cache", home);
    else return NULL;
    mkdir(dir, 0755);
    if ((size_t)snprintf(buf, n, "%s/rlflow", dir) >= n) return NULL;
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return NULL;
    return buf;
}

const char *xf_cost_cache_path(const char *given, char *buf, size_t n)
{
    if (given) return strcmp(given, XF_COST_CACHE_NONE) == 0 ? NULL : given;
    char dir[4000];
    if (!xf_cost_user_dir(dir, sizeof dir)) return NULL;
    if ((size_t)snprintf(buf, n, "%s/costs.db", dir) >= n) return NULL;
    return buf;
}
