/*
 * default_rules.c — the rules database used when none is given
 * (optimize.h "the default rules"): its name, keyed by what makes the
 * rules so that a file of another build is never used; where it is looked
 * for (the caller's directories, then the user's cache); and how it is
 * made, once: xfergen's pipeline (xf_enum_generate) over the default
 * vocabulary (and the unbatched heads' preset at 4 operators), then
 * xferverify's (xf_derive_verify_db), into a temporary
 * file renamed at the end, under an flock(2) on a lock file beside it so
 * that a second process waits for the first and uses its database (and the
 * temporary files of a maker that was killed are removed).
 *
 * Progress goes to the caller's callback as short lines with an ETA; the
 * library prints nothing. A tool and the Python binding both call this.
 */
#include "optimize.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "derive/derive.h"
#include "enumerate/enumerate.h"
#include "rulesdb/rulesdb.h"
#include "verify/verify.h"

#ifndef XF_VERSION
#error "XF_VERSION (the project's version) is set by optimize/CMakeLists.txt"
#endif

#define PROGRESS_EVERY_S 2.0

void xf_default_rules_options_init(xf_default_rules_options *o)
{
    memset(o, 0, sizeof *o);
    o->make = 1;
}

static int ops_of(const xf_default_rules_options *o)
{
    return o && o->max_ops > 0 ? o->max_ops : XF_DEFAULT_RULES_OPS;
}

/* 1 when the database holds the unbatched heads' rules besides the
 * default vocabulary's: at the full operator count (tests make smaller
 * databases without them). */
static int with_unbatched(const xf_default_rules_options *o)
{
    return ops_of(o) >= XF_DEFAULT_RULES_OPS;
}

/* The preset's vocabulary and inputs as text, into what (n bytes). */
static xf_status preset_text(const char *preset, char *what, size_t n, xf_error *err)
{
    xf_enum_config c;
    xf_enum_config_init(&c);
    char inputs[1024];
    xf_status st = xf_enum_config_preset(&c, preset, err);
    if (st == XF_OK) st = xf_enum_inputs_format(&c, inputs, sizeof inputs, err);
    size_t len = 0;
    if (st == XF_OK) {
        len = (size_t)snprintf(what, n, "inputs %s; vocabulary ", inputs);
        if (len >= n) st = XF_FAIL(err, XF_ERR_INVALID, "the preset %s does not fit", preset);
    }
    if (st == XF_OK) st = xf_enum_vocab_format(&c, what + len, n - len, err);
    xf_enum_config_free(&c);
    if (st != XF_OK) xf_error_prefix(err, "the default rules' vocabulary (%s): ", preset);
    return st;
}

xf_status xf_default_rules_name(const xf_default_rules_options *o, char *buf, size_t n,
                                xf_error *err)
{
    char text[16384], extra[4096] = "";
    xf_status st = preset_text("default", text, sizeof text, err);
    if (st == XF_OK && with_unbatched(o)) st = preset_text("unbatched", extra, sizeof extra, err);
    if (st != XF_OK) return st;
    char what[256];
    snprintf(what, sizeof what, "rlflow %s; ops %d; schema %d; axioms %d; verifier %d", XF_VERSION,
             ops_of(o), XF_RULESDB_SCHEMA_VERSION, xf_verify_axiom_count(), XF_VERIFY_REVISION);
    uint64_t h = xf_hash_bytes(0x726c666c6f77ULL, what, strlen(what));
    h = xf_hash_bytes(h, text, strlen(text));
    if (*extra) {
        char ops[64];
        snprintf(ops, sizeof ops, "; unbatched ops %d; ", XF_DEFAULT_RULES_UNBATCHED_OPS);
        h = xf_hash_bytes(h, ops, strlen(ops));
        h = xf_hash_bytes(h, extra, strlen(extra));
    }
    if ((size_t)snprintf(buf, n, "rules-default-%s-%dops-%016" PRIx64 ".db", XF_VERSION,
                         ops_of(o), h) >= n)
        return XF_FAIL(err, XF_ERR_INVALID, "the default rules' name does not fit %zu bytes", n);
    return XF_OK;
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

/* ------------------------------------------------------------- progress */

typedef struct progress {
    const xf_default_rules_options *o;
    double last;
} progress;

static void say(progress *p, int force, const char *fmt, ...) XF_PRINTF(3, 4);
static void say(progress *p, int force, const char *fmt, ...)
{
    if (!p->o || !p->o->progress) return;
    double now = xf_clock_now();
    if (!force && now - p->last < PROGRESS_EVERY_S) return;
    p->last = now;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    p->o->progress(p->o->user, line);
}

static void eta_text(double eta_s, char *buf, size_t n)
{
    if (eta_s < 0) snprintf(buf, n, "?");
    else snprintf(buf, n, "%.0fs", eta_s);
}

static void on_enum_progress(void *user, const xf_enum_progress *e)
{
    char eta[32];
    eta_text(e->eta_s, eta, sizeof eta);
    if (e->step) { /* pruning or the write, after the enumeration */
        say(user, 0, "default rules: %s, %" PRIu64 "/%" PRIu64 " rules, ETA %s (step), %.0fs elapsed",
            e->step, e->done, e->total, eta, e->elapsed_s);
        return;
    }
    say(user, 0,
        "default rules: generating, level %d, %" PRIu64 "/%" PRIu64 " parents, %" PRIu64
        " candidates, ETA %s (level), %.0fs elapsed",
        e->level, e->parents_done, e->parents_total, e->candidates, eta, e->elapsed_s);
}

static void on_verify_progress(void *user, const xf_verify_tally *t)
{
    double eta = t->done > 0 && t->total > t->done
                     ? t->elapsed_s * (double)(t->total - t->done) / (double)t->done
                     : -1;
    char eta_s[32];
    eta_text(eta, eta_s, sizeof eta_s);
    say(user, 0,
        "default rules: proving, %" PRId64 "/%" PRId64 " rules of this size (%" PRId64
        " proved), ETA %s (size), %.0fs elapsed",
        t->done, t->total, t->proved, eta_s, t->elapsed_s);
}

static void on_size(void *user, int size)
{
    say(user, 1, "default rules: deciding the rules of %d operator(s)", size);
}

/* ----------------------------------------------------------------- make */

/* Generates the candidates of a vocabulary preset up to max_ops operators
 * into `tmp` (added to what is there). */
static xf_status generate(const char *tmp, const char *preset, int max_ops, int jobs, progress *p,
                          xf_error *err)
{
    xf_enum_generate_options g;
    xf_enum_generate_options_init(&g);
    g.max_ops = max_ops;
    g.vocab = preset;
    g.threads = jobs;
    g.out = tmp;
    g.version = XF_VERSION;
    g.user = p;
    g.on_progress = on_enum_progress;
    xf_enum_generate_result gr;
    say(p, 1, "default rules: generating the candidates of the %s vocabulary, up to %d "
              "operators, into %s", preset, g.max_ops, tmp);
    xf_status st = xf_enum_generate(&g, &gr, err);
    if (st == XF_OK && gr.stopped)
        st = XF_FAIL(err, XF_ERR_INTERNAL, "generating the candidates stopped before the end");
    if (st != XF_OK)
        xf_error_prefix(err, "making the default rules (generating the %s vocabulary's candidates "
                             "into %s): ", preset, tmp);
    return st;
}

/* Generates and proves the rules into `tmp` (removed first): the default
 * vocabulary's, and at the full size the unbatched heads' 4-operator ones
 * (GPT's heads in the layout ONNX Runtime folds, which need a fourth
 * operator: docs/tools/xfergen.md). */
static xf_status make_db(const char *tmp, const xf_default_rules_options *o, progress *p,
                         xf_error *err)
{
    xf_rulesdb_remove(tmp);
    int jobs = o && o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (jobs < 1) jobs = 1;
    if (jobs > XF_VERIFY_MAX_JOBS) jobs = XF_VERIFY_MAX_JOBS;
    xf_status st = generate(tmp, "default", ops_of(o), jobs, p, err);
    if (st == XF_OK && with_unbatched(o))
        st = generate(tmp, "unbatched", XF_DEFAULT_RULES_UNBATCHED_OPS, jobs, p, err);
    if (st != XF_OK) return st;
    xf_rulesdb *db = NULL;
    if ((st = xf_rulesdb_open(tmp, 0, &db, err)) != XF_OK) {
        xf_error_prefix(err, "making the default rules: ");
        return st;
    }
    xf_derive_verify_options v;
    xf_derive_verify_options_init(&v);
    v.vopt.jobs = jobs;
    v.vopt.version = XF_VERSION;
    v.vopt.user = p;
    v.vopt.on_progress = on_verify_progress;
    v.user = p;
    v.on_start = on_size;
    xf_verify_tally t;
    int64_t derived = 0;
    st = xf_derive_verify_db(db, tmp, &v, &t, &derived, err);
    /* what the file holds: the tally counts the solver's verdicts, and a
     * derive pass after a round derives some of its unknowns */
    xf_rulesdb_count *rows = NULL;
    int n_rows = 0;
    if (st == XF_OK) st = xf_rulesdb_count_by(db, XF_RULESDB_BY_STATUS, &rows, &n_rows, err);
    xf_rulesdb_close(db);
    if (st != XF_OK) {
        xf_error_prefix(err, "making the default rules (proving the candidates of %s): ", tmp);
        return st;
    }
    int64_t n[4] = {0, 0, 0, 0};
    static const char *const names[4] = {"proved", "derived", "refuted", "unknown"};
    for (int r = 0; r < n_rows; r++)
        for (int k = 0; k < 4; k++)
            if (!strcmp(rows[r].key, names[k])) n[k] = rows[r].n;
    xf_free(rows);
    say(p, 1, "default rules: %" PRId64 " proved, %" PRId64 " derived, %" PRId64 " refuted, %" PRId64
              " unknown in %.0fs", n[0], n[1], n[2], n[3], t.elapsed_s);
    return XF_OK;
}

/* Removes the temporary files of makers that died (killed, or the machine
 * went down): under the lock, no other maker of `name` is running. */
static void remove_stale(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    if (!d) return;
    char prefix[300], path[4400];
    snprintf(prefix, sizeof prefix, "%s.tmp-", name);
    size_t n = strlen(prefix);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, n) != 0 || strchr(e->d_name + n, '-')) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        xf_rulesdb_remove(path);
    }
    closedir(d);
}

xf_status xf_default_rules_make_in(const char *dir, const xf_default_rules_options *o, char *path,
                                   size_t n, int *made, xf_error *err)
{
    *made = 0;
    char name[256];
    xf_status st = xf_default_rules_name(o, name, sizeof name, err);
    if (st != XF_OK) return st;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return XF_FAIL(err, XF_ERR_IO, "cannot create %s for the default rules: %s", dir,
                       strerror(errno));
    if ((size_t)snprintf(path, n, "%s/%s", dir, name) >= n)
        return XF_FAIL(err, XF_ERR_INVALID, "the default rules' path in %s is too long", dir);
    if (exists(path)) return XF_OK;
    char lock[4200], tmp[4200];
    snprintf(lock, sizeof lock, "%s/rules-default.lock", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return XF_FAIL(err, XF_ERR_IO, "cannot open the lock file %s: %s", lock, strerror(errno));
    progress p = {o, -1e9};
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        say(&p, 1, "default rules: another process is making %s; waiting for it", path);
        if (flock(fd, LOCK_EX) != 0) {
            st = XF_FAIL(err, XF_ERR_IO, "cannot lock %s: %s", lock, strerror(errno));
            close(fd);
            return st;
        }
    }
    if (!exists(path)) { /* not made by the process we waited for */
        remove_stale(dir, name);
        st = make_db(tmp, o, &p, err);
        if (st == XF_OK && rename(tmp, path) != 0)
            st = XF_FAIL(err, XF_ERR_IO, "cannot rename %s to %s: %s", tmp, path,
                         strerror(errno));
        xf_rulesdb_remove(tmp);
        if (st == XF_OK) *made = 1;
        if (o && o->progress) o->progress(o->user, "");
    }
    close(fd); /* releases the lock */
    return st;
}

xf_status xf_default_rules_find(const xf_default_rules_options *o, char *path, size_t n,
                                xf_default_rules_origin *origin, xf_error *err)
{
    char name[256];
    xf_status st = xf_default_rules_name(o, name, sizeof name, err);
    if (st != XF_OK) return st;
    for (int i = 0; o && i < o->n_dirs; i++) {
        if (!o->dirs[i]) continue;
        if ((size_t)snprintf(path, n, "%s/%s", o->dirs[i], name) < n && exists(path)) {
            *origin = XF_DEFAULT_RULES_FOUND;
            return XF_OK;
        }
    }
    char cache[4000];
    if (!xf_cost_user_dir(cache, sizeof cache))
        return XF_FAIL(err, XF_ERR_IO,
                       "no default rules database %s next to the program, and no user cache "
                       "directory to make it in (neither XDG_CACHE_HOME nor HOME is set, or "
                       "the directory cannot be created); give one with --rules",
                       name);
    if ((size_t)snprintf(path, n, "%s/%s", cache, name) >= n)
        return XF_FAIL(err, XF_ERR_INVALID, "the default rules' path in %s is too long", cache);
    if (exists(path)) {
        *origin = XF_DEFAULT_RULES_CACHED;
        return XF_OK;
    }
    if (o && !o->make)
        return XF_FAIL(err, XF_ERR_IO,
                       "no default rules database %s next to the program nor in %s (make it "
                       "with `rlflow-agent --make-rules %s`)",
                       name, cache, cache);
    int made = 0;
    st = xf_default_rules_make_in(cache, o, path, n, &made, err);
    if (st != XF_OK) return st;
    *origin = made ? XF_DEFAULT_RULES_MADE : XF_DEFAULT_RULES_CACHED;
    return XF_OK;
}
