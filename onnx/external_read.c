/*
 * external_read.c — the importer's side of ONNX external data: parses a
 * tensor's external_data entries (location, offset, length), refuses a
 * location that leaves the model's directory, checks offset and length
 * against the data file's size before reading, and streams the bytes into
 * the tensor with positioned reads of at most 64 MiB each, so importing a
 * model costs one copy of its weights and no intermediate buffer. A model
 * read back from memory (xf_onnx_writer) finds its tensors in the segment
 * list of its unwritten data file instead.
 */
#define _DEFAULT_SOURCE /* realpath, pread */
#include "external_internal.h"
#include "import_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Largest single read: bounded so a huge tensor does not meet the
 * kernel's per-call limit (about 2 GiB) and progress is steady. */
#define READ_CHUNK ((size_t)64 << 20)

int ox_ext_location_ok(const char *loc)
{
    if (!loc[0] || loc[0] == '/' || loc[0] == '\\') return 0;
    const char *p = loc;
    while (*p) {
        size_t n = strcspn(p, "/\\");
        if (n == 2 && p[0] == '.' && p[1] == '.') return 0;
        p += n;
        if (*p) p++;
    }
    return 1;
}

static int parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s) return 0;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* 1 when the file `path` resolves (symbolic links followed) to a place
 * inside `dir`: a link in the model's directory must not lead out of it. */
static int stays_inside(const char *dir, const char *path)
{
    char rd[PATH_MAX], rp[PATH_MAX];
    if (!realpath(dir, rd) || !realpath(path, rp)) return 1; /* the open reports it */
    size_t n = strlen(rd);
    if (n == 1) return 1; /* the model lives in / */
    return strncmp(rd, rp, n) == 0 && rp[n] == '/';
}

typedef struct ext_entry {
    const char *location;
    uint64_t offset, length;
} ext_entry;

/* The tensor's external_data entries; the length must be the tensor's size
 * when given (it is then `bytes` in any case). */
static xf_status parse_entry(const Onnx__TensorProto *tp, const char *what, size_t bytes,
                             ext_entry *e, xf_error *err)
{
    memset(e, 0, sizeof *e);
    int has_length = 0;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const char *k = ox_str(tp->external_data[i]->key);
        const char *v = ox_str(tp->external_data[i]->value);
        if (strcmp(k, "location") == 0)
            e->location = v;
        else if (strcmp(k, "offset") == 0 && !parse_u64(v, &e->offset))
            return XF_FAIL(err, XF_ERR_PARSE, "%s: external data offset '%s' is not a number",
                           what, v);
        else if (strcmp(k, "length") == 0) {
            if (!parse_u64(v, &e->length))
                return XF_FAIL(err, XF_ERR_PARSE, "%s: external data length '%s' is not a number",
                               what, v);
            has_length = 1;
        }
    }
    if (!e->location)
        return XF_FAIL(err, XF_ERR_PARSE, "%s: external data without a 'location' entry", what);
    if (!ox_ext_location_ok(e->location))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s: external data location '%s' is refused: it must be a relative path "
                       "inside the model's directory (no absolute path, no '..')",
                       what, e->location);
    if (has_length && e->length != bytes)
        return XF_FAIL(err, XF_ERR_PARSE,
                       "%s: external data length is %llu bytes, the tensor's shape needs %zu",
                       what, (unsigned long long)e->length, bytes);
    e->length = bytes;
    return XF_OK;
}

xf_status ox_ext_read(const Onnx__TensorProto *tp, const char *what, const char *base_dir,
                       void *dst, size_t bytes, xf_error *err)
{
    ext_entry e;
    xf_status st = parse_entry(tp, what, bytes, &e, err);
    if (st != XF_OK) return st;
    if (!base_dir)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s: data lives in external file '%s', but the model was loaded from "
                       "memory without a base directory",
                       what, e.location);
    size_t plen = strlen(base_dir) + strlen(e.location) + 2;
    char *path = xf_malloc(plen);
    if (!path) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", what);
    snprintf(path, plen, "%s/%s", base_dir, e.location);
    if (!stays_inside(base_dir, path)) {
        st = XF_FAIL(err, XF_ERR_UNSUPPORTED,
                     "%s: external data location '%s' is refused: it is a symbolic link that "
                     "leads out of the model's directory",
                     what, e.location);
        xf_free(path);
        return st;
    }
    /* an input of this run: no output may be written over it (ir/outfile.c);
     * a full list only means it is not guarded */
    xf_outfile_protect(path, "the external data of an input model", NULL);
    FILE *f;
    st = xf_infile_open(path, &f, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "%s: external data file", what);
        xf_free(path);
        return st;
    }
    int fd = fileno(f);
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        st = XF_FAIL(err, XF_ERR_IO, "%s: cannot stat '%s': %s", what, path, strerror(errno));
    } else if (e.offset > (uint64_t)sb.st_size || (uint64_t)sb.st_size - e.offset < bytes) {
        st = XF_FAIL(err, XF_ERR_PARSE,
                     "%s: external data file '%s' has %lld bytes, too short for %zu bytes at "
                     "offset %llu (the file is truncated or the model's offset/length are wrong)",
                     what, path, (long long)sb.st_size, bytes, (unsigned long long)e.offset);
    }
    for (size_t done = 0; st == XF_OK && done < bytes;) {
        size_t n = bytes - done < READ_CHUNK ? bytes - done : READ_CHUNK;
        ssize_t got = pread(fd, (uint8_t *)dst + done, n, (off_t)(e.offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            st = XF_FAIL(err, XF_ERR_IO, "%s: cannot read %zu bytes at offset %llu of '%s': %s",
                         what, bytes, (unsigned long long)e.offset, path,
                         got < 0 ? strerror(errno) : "the file shrank while being read");
        else
            done += (size_t)got;
    }
    fclose(f);
    xf_free(path);
    return st;
}

xf_status ox_ext_lookup(const Onnx__TensorProto *tp, const char *what, const imp_ext_mem *mem,
                         size_t bytes, const void **data, xf_error *err)
{
    *data = NULL;
    ext_entry e;
    xf_status st = parse_entry(tp, what, bytes, &e, err);
    if (st != XF_OK) return st;
    if (strcmp(e.location, mem->location) != 0)
        return XF_FAIL(err, XF_ERR_PARSE, "%s: external data file '%s' is not the model's ('%s')",
                       what, e.location, mem->location);
    size_t lo = 0, hi = mem->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mem->segs[mid].offset < e.offset) lo = mid + 1;
        else hi = mid;
    }
    if (lo == mem->n || mem->segs[lo].offset != e.offset || mem->segs[lo].length != bytes)
        return XF_FAIL(err, XF_ERR_PARSE,
                       "%s: no tensor of %zu bytes at offset %llu of external data '%s'", what,
                       bytes, (unsigned long long)e.offset, e.location);
    *data = mem->segs[lo].data;
    return XF_OK;
}
