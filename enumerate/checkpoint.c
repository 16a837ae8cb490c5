/*
 * checkpoint.c — the resumable state of a run in one binary file: the
 * configuration hash it belongs to, the level being built and how many of
 * its parents are done, the counters, the candidate sequence number, every
 * stored graph record and, in the last level, the lengths of its spill
 * files (spill_internal.h; the files themselves sit next to the checkpoint). The
 * class table is not saved; it is rebuilt from the records. Files are written through xf_outfile (a temporary file
 * renamed over PATH), so a crash leaves the previous checkpoint intact. The format is the host's
 * (byte order, struct layout) and versioned by XF_CKPT_VERSION.
 */
#include "enumerate_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XF_CKPT_VERSION 3u /* 3: three output references per node */
static const char magic[8] = {'X', 'F', 'E', 'N', 'U', 'M', 'C', 'P'};

typedef struct ckpt_header {
    char magic[8];
    uint32_t version;
    uint32_t record_size, stats_size, n_levels;
    uint64_t cfg_hash;
    int64_t level;
    uint64_t next_parent, seq, confirm_done;
} ckpt_header;

xf_status en_checkpoint_save(const char *path, uint64_t cfg_hash, const enum_state *s,
                               xf_error *err)
{
    xf_outfile out;
    xf_status st = xf_outfile_open(&out, path, err);
    if (st != XF_OK) return st;
    FILE *f = out.f;
    ckpt_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, magic, sizeof magic);
    h.version = XF_CKPT_VERSION;
    h.record_size = sizeof(grec);
    h.stats_size = sizeof(xf_enum_stats);
    h.n_levels = XF_ENUM_MAX_OPS + 1;
    h.cfg_hash = cfg_hash;
    h.level = s->level;
    h.next_parent = s->next_parent;
    h.seq = s->seq;
    h.confirm_done = s->confirm_done;
    int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(&s->stats, sizeof s->stats, 1, f) == 1;
    for (int l = 0; ok && l <= XF_ENUM_MAX_OPS; l++) {
        uint64_t n = s->levels[l].n;
        ok = fwrite(&n, sizeof n, 1, f) == 1 && (n == 0 || fwrite(s->levels[l].v, sizeof(grec), n, f) == n);
    }
    ok = ok && fwrite(s->spill_len, sizeof s->spill_len, 1, f) == 1;
    if (!ok) {
        st = XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        xf_outfile_abort(&out);
        return st;
    }
    return xf_outfile_commit(&out, err);
}

xf_status en_checkpoint_load(const char *path, uint64_t cfg_hash, enum_state *s, int *found,
                               xf_error *err)
{
    *found = 0;
    FILE *f;
    if (access(path, F_OK) != 0 && errno == ENOENT) return XF_OK;
    xf_status st0 = xf_infile_open(path, &f, err);
    if (st0 != XF_OK) {
        xf_error_prefix(err, "checkpoint");
        return st0;
    }
    ckpt_header h;
    xf_status st = XF_OK;
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, magic, sizeof magic) != 0) {
        st = XF_FAIL(err, XF_ERR_PARSE, "%s is not an rlflow enumeration checkpoint", path);
    } else if (h.version != XF_CKPT_VERSION || h.record_size != sizeof(grec) ||
               h.stats_size != sizeof(xf_enum_stats) || h.n_levels != XF_ENUM_MAX_OPS + 1) {
        st = XF_FAIL(err, XF_ERR_UNSUPPORTED,
                     "checkpoint %s was written by another version of rlflow (format %u); delete it "
                     "to start over", path, h.version);
    } else if (h.cfg_hash != cfg_hash) {
        st = XF_FAIL(err, XF_ERR_INVALID,
                     "checkpoint %s belongs to a different configuration (vocabulary, inputs, "
                     "limits or seed changed); delete it or run without resuming", path);
    } else if (h.level < 1 || h.level > XF_ENUM_MAX_OPS + 1 ||
               fread(&s->stats, sizeof s->stats, 1, f) != 1) {
        st = XF_FAIL(err, XF_ERR_PARSE, "checkpoint %s is truncated or corrupt", path);
    }
    for (int l = 0; st == XF_OK && l <= XF_ENUM_MAX_OPS; l++) {
        uint64_t n;
        if (fread(&n, sizeof n, 1, f) != 1 || n > (1ull << 40)) {
            st = XF_FAIL(err, XF_ERR_PARSE, "checkpoint %s is truncated or corrupt", path);
            break;
        }
        glevel *lv = &s->levels[l];
        lv->v = n ? xf_malloc(sizeof(grec) * n) : NULL;
        lv->n = lv->cap = n ? n : 0;
        if (n && !lv->v) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading %s", path);
        else if (n && fread(lv->v, sizeof(grec), n, f) != n)
            st = XF_FAIL(err, XF_ERR_PARSE, "checkpoint %s is truncated", path);
    }
    if (st == XF_OK && fread(s->spill_len, sizeof s->spill_len, 1, f) != 1)
        st = XF_FAIL(err, XF_ERR_PARSE, "checkpoint %s is truncated or corrupt", path);
    fclose(f);
    if (st != XF_OK) {
        for (int l = 0; l <= XF_ENUM_MAX_OPS; l++) en_glevel_free(&s->levels[l]);
        return st;
    }
    s->level = (int)h.level;
    s->next_parent = h.next_parent;
    s->seq = h.seq;
    s->confirm_done = h.confirm_done;
    *found = 1;
    return XF_OK;
}
