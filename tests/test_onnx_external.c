/*
 * test_onnx_external.c — ONNX external data (big models' weights in a file
 * next to the model), on a small BERT from the model zoo (about 3 MB of
 * weights, one tensor of 1 MiB) with the sizes that switch external data on
 * lowered, so every path runs in well under a second (the model as the
 * importer reads it, so that a round trip keeps its canonical hash):
 *  - export with a data file: small tensors inline, the rest external with
 *    location/offset/length, 1 MiB tensors at 64 KiB-aligned offsets; the
 *    files read back to the same graph (canonical hash, outputs), and
 *    onnx.checker / onnx.load accept them when python3-onnx is present;
 *  - the automatic switch above the inline limit writes "<model>.data";
 *  - the writer's read back borrows the weights instead of copying them;
 *  - malformed models give clear errors naming tensor and file: truncated
 *    data file, offset or length beyond it, length that is not the
 *    tensor's, locations that escape the model's directory (absolute, '..',
 *    a symbolic link leading out), a number that is not one;
 *  - writing is atomic for the pair: a data file that cannot be written
 *    (its writes fail at the flush) leaves the old model in place and no
 *    temporary file behind; a data file that is a directory or a device is
 *    refused before anything is written (issue 30: a device swallowed the
 *    weights with exit 0);
 *  - the tools' --external-data options (modelzoo, xfonnx roundtrip).
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx.pb-c.h"
#include "testutil.h"

#define ZOO_ARGS "--layers 1 --hidden 256 --heads 4 --seq 8 --vocab 300"

/* Scratch path "<tmp>/ext/<name>" (four rotating buffers). */
static const char *path_of(const char *name)
{
    static char buf[4][4096];
    static int k;
    char rel[512];
    snprintf(rel, sizeof rel, "ext/%s", name);
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s", xf_test_tmp(rel));
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", buf[k]);
    *strrchr(dir, '/') = '\0';
    mkdir(dir, 0755);
    return buf[k];
}

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* Number of files in the directory of `path` whose name contains ".tmp.". */
static int temp_files_beside(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

static void save(const xf_graph *g, const char *path, const char *location, size_t inline_limit)
{
    xf_onnx_save_options o = xf_onnx_default_save_options();
    o.external_data = location;
    if (inline_limit) o.inline_limit = inline_limit;
    xf_error err;
    ck_assert_msg(xf_onnx_save_with(g, path, &o, &err) == XF_OK, "%s", err.msg);
}

static Onnx__ModelProto *unpack(const char *path)
{
    size_t len;
    char *buf = xf_test_read_file(path, &len);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, (const uint8_t *)buf);
    free(buf);
    ck_assert_msg(m != NULL, "%s does not decode", path);
    return m;
}

static const char *entry(const Onnx__TensorProto *t, const char *key)
{
    for (size_t i = 0; i < t->n_external_data; i++)
        if (strcmp(t->external_data[i]->key, key) == 0) return t->external_data[i]->value;
    return NULL;
}

static void repack(Onnx__ModelProto *m, const char *path)
{
    size_t n = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(n + 1);
    ck_assert_ptr_nonnull(buf);
    onnx__model_proto__pack(m, buf);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
    fclose(f);
    free(buf);
}

/* Rewrites entry `key` of the first external tensor of the model at src
 * into dst (same directory); returns that tensor's name in name[]. */
static void patch_entry(const char *src, const char *dst, const char *key, const char *value,
                        char *name, size_t n)
{
    Onnx__ModelProto *m = unpack(src);
    Onnx__TensorProto *t = NULL;
    for (size_t i = 0; i < m->graph->n_initializer && !t; i++)
        if (m->graph->initializer[i]->n_external_data) t = m->graph->initializer[i];
    ck_assert_ptr_nonnull(t);
    snprintf(name, n, "%s", t->name);
    for (size_t i = 0; i < t->n_external_data; i++)
        if (strcmp(t->external_data[i]->key, key) == 0) {
            free(t->external_data[i]->value);
            t->external_data[i]->value = strdup(value);
        }
    repack(m, dst);
    onnx__model_proto__free_unpacked(m, NULL);
}

/* Loading `path` fails with `code` and a message holding each needle. */
static void expect_load_error(const char *path, xf_status code, const char *const *needles)
{
    xf_graph g;
    xf_error err;
    xf_status st = xf_onnx_load(path, NULL, &g, &err);
    ck_assert_msg(st == code, "%s: status %d, want %d (%s)", path, st, code,
                  st ? err.msg : "loaded");
    for (int i = 0; needles[i]; i++) xf_test_expect_contains(err.msg, needles[i]);
}

/* ------------------------------------------------------------ round trip */

START_TEST(round_trip_with_data_file)
{
    xf_graph g, back;
    xf_test_modelzoo("bert", ZOO_ARGS, "zoo1", &g);
    const char *model = path_of("rt.onnx");
    char data[4096];
    snprintf(data, sizeof data, "%s", path_of("rt_weights.bin"));
    save(&g, model, "rt_weights.bin", 0);

    /* layout: small tensors inline, the others external, aligned when big */
    Onnx__ModelProto *m = unpack(model);
    int n_ext = 0, n_big = 0, n_inline = 0;
    unsigned long long end = 0;
    for (size_t i = 0; i < m->graph->n_initializer; i++) {
        const Onnx__TensorProto *t = m->graph->initializer[i];
        if (!t->n_external_data) {
            ck_assert_msg(t->raw_data.len < 1024, "%s: %zu bytes inline", t->name,
                          t->raw_data.len);
            n_inline++;
            continue;
        }
        n_ext++;
        ck_assert_int_eq(t->data_location, ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
        ck_assert_str_eq(entry(t, "location"), "rt_weights.bin");
        unsigned long long off = strtoull(entry(t, "offset"), NULL, 10);
        unsigned long long len = strtoull(entry(t, "length"), NULL, 10);
        ck_assert_uint_ge(len, 1024);
        if (len >= (1u << 20)) {
            n_big++;
            ck_assert_msg(off % 65536 == 0, "%s at offset %llu", t->name, off);
        }
        if (off + len > end) end = off + len;
    }
    onnx__model_proto__free_unpacked(m, NULL);
    ck_assert_int_gt(n_ext, 5);
    ck_assert_int_gt(n_inline, 0);
    ck_assert_int_ge(n_big, 1);
    ck_assert_int_eq(file_size(data), (long long)end);
    ck_assert_int_lt(file_size(model), 64 << 10);

    xf_error err;
    ck_assert_msg(xf_onnx_load(model, NULL, &back, &err) == XF_OK, "%s", err.msg);
    ck_assert_uint_eq(xf_graph_hash(&back), xf_graph_hash(&g));
    xf_test_expect_same_function(&g, &back, 3, 0.0);
    xf_graph_free(&back);

    if (!xf_test_have_python("onnx")) {
        xf_test_skip_part("python3 has no onnx module: onnx.checker not run");
    } else {
        ck_assert_int_eq(xf_test_system("/usr/bin/python3 -c \"import onnx, sys; "
                                        "onnx.checker.check_model(sys.argv[1], full_check=True); "
                                        "m = onnx.load(sys.argv[1]); "
                                        "assert all(t.raw_data or t.float_data or t.int64_data "
                                        "for t in m.graph.initializer)\" '%s'",
                                        model),
                         0);
    }
    xf_graph_free(&g);
}
END_TEST

START_TEST(automatic_above_inline_limit)
{
    xf_graph g;
    xf_test_modelzoo("bert", ZOO_ARGS, "zoo2", &g);
    const char *model = path_of("auto.onnx");
    char data[4096];
    snprintf(data, sizeof data, "%s.data", model);
    unlink(data);
    save(&g, model, NULL, 0); /* 3 MB: one file */
    ck_assert_int_eq(file_size(data), -1);
    ck_assert_int_gt(file_size(model), 1 << 20);
    save(&g, model, NULL, 1 << 20); /* over a 1 MiB limit: external */
    ck_assert_int_gt(file_size(data), 1 << 20);
    ck_assert_int_lt(file_size(model), 64 << 10);
    Onnx__ModelProto *m = unpack(model);
    int ext = 0;
    for (size_t i = 0; i < m->graph->n_initializer; i++)
        if (m->graph->initializer[i]->n_external_data) {
            ck_assert_str_eq(entry(m->graph->initializer[i], "location"), "auto.onnx.data");
            ext++;
        }
    onnx__model_proto__free_unpacked(m, NULL);
    ck_assert_int_gt(ext, 0);
    xf_graph back;
    xf_error err;
    ck_assert_msg(xf_onnx_load(model, NULL, &back, &err) == XF_OK, "%s", err.msg);
    ck_assert_uint_eq(xf_graph_hash(&back), xf_graph_hash(&g));
    xf_graph_free(&back);
    xf_graph_free(&g);
}
END_TEST

START_TEST(read_back_borrows_weights)
{
    xf_graph g, back;
    xf_test_modelzoo("bert", ZOO_ARGS, "zoo3", &g);
    xf_onnx_save_options o = xf_onnx_default_save_options();
    o.external_data = "borrow.bin";
    xf_onnx_writer *w;
    xf_error err;
    const char *model = path_of("borrow.onnx");
    unlink(model); /* from an earlier run */
    ck_assert_msg(xf_onnx_writer_open(&g, model, &o, &w, &err) == XF_OK, "%s", err.msg);
    size_t model_bytes;
    uint64_t data_bytes;
    const char *loc;
    xf_onnx_writer_sizes(w, &model_bytes, &data_bytes, &loc);
    ck_assert_str_eq(loc, "borrow.bin");
    ck_assert_uint_gt(data_bytes, 3u << 20);
    ck_assert_uint_lt(model_bytes, 64 << 10);
    ck_assert_msg(xf_onnx_writer_read_back(w, NULL, &back, &err) == XF_OK, "%s", err.msg);
    ck_assert_uint_eq(xf_graph_hash(&back), xf_graph_hash(&g));
    int borrowed = 0;
    for (int i = 0; i < back.n_values; i++) {
        const xf_value *v = &back.values[i];
        if (v->kind != XF_VALUE_CONST || !v->borrowed) continue;
        int found = 0;
        for (int j = 0; j < g.n_values && !found; j++) found = g.values[j].data == v->data;
        ck_assert_msg(found, "borrowed constant '%s' does not point at the graph's weights",
                      v->name);
        borrowed++;
    }
    ck_assert_int_gt(borrowed, 5);
    xf_graph_free(&back);
    /* nothing is written before commit */
    ck_assert_int_eq(file_size(model), -1);
    ck_assert_int_eq(xf_onnx_writer_commit(w, &err), XF_OK);
    xf_onnx_writer_free(w);
    ck_assert_int_eq(file_size(path_of("borrow.bin")), (long long)data_bytes);
    xf_graph_free(&g);
}
END_TEST

/* ----------------------------------------------------------------- errors */

START_TEST(malformed_external_data)
{
    xf_graph g;
    xf_test_modelzoo("bert", ZOO_ARGS, "zoo4", &g);
    const char *model = path_of("bad.onnx");
    char ok[4096], bad[4096], data[4096], name[256];
    snprintf(ok, sizeof ok, "%s", model);
    snprintf(bad, sizeof bad, "%s", path_of("bad_patched.onnx"));
    snprintf(data, sizeof data, "%s", path_of("bad.bin"));
    save(&g, ok, "bad.bin", 0);
    long long size = file_size(data);

    patch_entry(ok, bad, "offset", "999999999", name, sizeof name);
    const char *beyond[] = {name, "bad.bin", "too short", NULL};
    expect_load_error(bad, XF_ERR_PARSE, beyond);

    patch_entry(ok, bad, "length", "4", name, sizeof name);
    const char *length[] = {name, "length is 4 bytes", NULL};
    expect_load_error(bad, XF_ERR_PARSE, length);

    patch_entry(ok, bad, "offset", "12x", name, sizeof name);
    const char *nan[] = {name, "'12x' is not a number", NULL};
    expect_load_error(bad, XF_ERR_PARSE, nan);

    patch_entry(ok, bad, "location", "../bad.bin", name, sizeof name);
    const char *up[] = {name, "'../bad.bin' is refused", NULL};
    expect_load_error(bad, XF_ERR_UNSUPPORTED, up);

    patch_entry(ok, bad, "location", "/etc/passwd", name, sizeof name);
    const char *abs[] = {name, "'/etc/passwd' is refused", NULL};
    expect_load_error(bad, XF_ERR_UNSUPPORTED, abs);

    /* a link in the model's directory that leads out of it */
    char outside[4096], link[4096];
    snprintf(outside, sizeof outside, "%s", xf_test_tmp("outside.bin"));
    snprintf(link, sizeof link, "%s", path_of("link.bin"));
    ck_assert_int_eq(xf_test_system("cp '%s' '%s' && ln -sf '%s' '%s'", data, outside, outside,
                                    link),
                     0);
    patch_entry(ok, bad, "location", "link.bin", name, sizeof name);
    const char *linked[] = {name, "symbolic link", NULL};
    expect_load_error(bad, XF_ERR_UNSUPPORTED, linked);

    /* a truncated data file: the first tensor past the end is named */
    ck_assert_int_eq(truncate(data, size / 2), 0);
    const char *cut[] = {"initializer", "bad.bin", "too short", NULL};
    expect_load_error(ok, XF_ERR_PARSE, cut);
    ck_assert_int_eq(truncate(data, 0), 0);
    expect_load_error(ok, XF_ERR_PARSE, cut);
    unlink(data);
    const char *gone[] = {"external data file", "bad.bin", NULL};
    expect_load_error(ok, XF_ERR_IO, gone);
    unlink(outside);
    unlink(link);
    xf_graph_free(&g);
}
END_TEST

START_TEST(writer_refuses_bad_locations)
{
    xf_graph g;
    xf_test_modelzoo("bert", ZOO_ARGS, "zoo5", &g);
    const char *model = path_of("refuse.onnx");
    xf_onnx_save_options o = xf_onnx_default_save_options();
    xf_error err;
    const char *bad[] = {"../up.bin", "/tmp/abs.bin", "", "a/../../b.bin", "refuse.onnx"};
    for (int i = 0; i < 5; i++) {
        o.external_data = bad[i];
        ck_assert_int_eq(xf_onnx_save_with(&g, model, &o, &err), XF_ERR_INVALID);
        xf_test_expect_contains(err.msg, "refuse.onnx");
        ck_assert_int_eq(file_size(model), -1);
    }
    /* no directory of its own next to a device */
    o.external_data = "w.bin";
    ck_assert_int_eq(xf_onnx_save_with(&g, "/dev/null", &o, &err), XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "device");
    xf_graph_free(&g);
}
END_TEST

START_TEST(pair_written_atomically)
{
    xf_graph g;
    xf_test_modelzoo("bert", ZOO_ARGS, "zoo6", &g);
    const char *model = path_of("atomic.onnx");
    char m[4096], d[4096];
    snprintf(m, sizeof m, "%s", model);
    FILE *f = fopen(m, "wb");
    ck_assert_ptr_nonnull(f);
    fputs("OLD MODEL", f);
    fclose(f);
    xf_onnx_save_options o = xf_onnx_default_save_options();
    xf_error err;
    /* the data file is a directory, or (through a link) a device: refused
     * before anything is written (weights go to a regular file or a new
     * path) */
    snprintf(d, sizeof d, "%s", path_of("atomic_dir"));
    mkdir(d, 0755);
    o.external_data = "atomic_dir";
    ck_assert_int_eq(xf_onnx_save_with(&g, m, &o, &err), XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "is a directory; the weights go to a regular file");
    ck_assert_int_eq(file_size(m), 9);
    ck_assert_int_eq(temp_files_beside(m), 0);
    const char *full = xf_test_full_device("atomic_full");
    if (!full) {
        xf_test_skip_part("no device that behaves as /dev/full");
    } else {
        char link[4096];
        snprintf(link, sizeof link, "%s", path_of("atomic_full.bin"));
        unlink(link);
        ck_assert_int_eq(symlink(full, link), 0);
        o.external_data = "atomic_full.bin";
        ck_assert_int_eq(xf_onnx_save_with(&g, m, &o, &err), XF_ERR_INVALID);
        xf_test_expect_contains(err.msg, "is a character device");
        ck_assert_int_eq(file_size(m), 9);
        ck_assert_int_eq(temp_files_beside(m), 0);
        unlink(link);
        if (strcmp(full, "/dev/full") != 0) unlink(full);
    }
    /* the data file's writes fail at the flush (a file size limit stands
     * in for a full disk), after the model's temporary file exists: both
     * are dropped */
    struct rlimit old, small = {1 << 20, 1 << 20};
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    small.rlim_max = old.rlim_max;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    o.external_data = "atomic_big.bin";
    xf_status big = xf_onnx_save_with(&g, m, &o, &err);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, was);
    ck_assert_int_eq(big, XF_ERR_IO);
    xf_test_expect_contains(err.msg, "File too large");
    ck_assert_int_eq(file_size(m), 9);
    ck_assert_int_eq(temp_files_beside(m), 0);
    ck_assert_int_eq(file_size(path_of("atomic_big.bin")), -1);
    /* and a good pair replaces the old model */
    o.external_data = "atomic.bin";
    ck_assert_int_eq(xf_onnx_save_with(&g, m, &o, &err), XF_OK);
    ck_assert_int_gt(file_size(m), 9);
    ck_assert_int_gt(file_size(path_of("atomic.bin")), 1 << 20);
    ck_assert_int_eq(temp_files_beside(m), 0);
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------------------------------ tools */

START_TEST(tools_external_data_options)
{
    char model[4096], out[4096], log[4096];
    snprintf(model, sizeof model, "%s", path_of("zoo.onnx"));
    snprintf(out, sizeof out, "%s", path_of("zoo_rt.onnx"));
    snprintf(log, sizeof log, "%s", path_of("zoo.log"));
    ck_assert_int_eq(xf_test_system("'%s' bert " ZOO_ARGS " --external-data zoo.bin -o '%s' > '%s'",
                                    xf_test_tool("modelzoo"), model, log),
                     0);
    char *text = xf_test_read_file(log, NULL);
    xf_test_expect_contains(text, "weights in external data 'zoo.bin'");
    free(text);
    ck_assert_int_gt(file_size(path_of("zoo.bin")), 1 << 20);
    ck_assert_int_eq(xf_test_system("'%s' roundtrip '%s' -o '%s' --external-data rt/../zoo_rt.bin "
                                    "> '%s' 2>&1",
                                    xf_test_tool("xfonnx"), model, out, log),
                     2);
    text = xf_test_read_file(log, NULL);
    xf_test_expect_contains(text, "is refused");
    free(text);
    ck_assert_int_eq(xf_test_system("'%s' roundtrip '%s' -o '%s' --external-data zoo_rt.bin "
                                    "> '%s' 2>&1",
                                    xf_test_tool("xfonnx"), model, out, log),
                     0);
    text = xf_test_read_file(log, NULL);
    xf_test_expect_contains(text, "external data: zoo_rt.bin");
    xf_test_expect_contains(text, "round trip ok");
    free(text);
    xf_graph a, b;
    xf_error err;
    ck_assert_msg(xf_onnx_load(model, NULL, &a, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_onnx_load(out, NULL, &b, &err) == XF_OK, "%s", err.msg);
    ck_assert_uint_eq(xf_graph_hash(&a), xf_graph_hash(&b));
    xf_graph_free(&a);
    xf_graph_free(&b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("onnx_external");
    TCase *tc = tcase_create("external");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, round_trip_with_data_file);
    tcase_add_test(tc, automatic_above_inline_limit);
    tcase_add_test(tc, read_back_borrows_weights);
    tcase_add_test(tc, malformed_external_data);
    tcase_add_test(tc, writer_refuses_bad_locations);
    tcase_add_test(tc, pair_written_atomically);
    tcase_add_test(tc, tools_external_data_options);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
