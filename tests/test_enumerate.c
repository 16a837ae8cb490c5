/*
 * test_enumerate.c — enumerate/: field arithmetic of the fingerprints
 * (inverses, reduction, Fermat), the vocabulary and input-spec formats
 * (round trip, errors naming the line, vocabulary files capped at 1 MiB),
 * and enumeration on tiny
 * vocabularies where the expected identities are known: matmul
 * associativity, matmul distributing over ewadd, two matmuls sharing an
 * input merged through concat/split, conv+relu fusion, avg-pool as a
 * depthwise conv with the pooling constant, relu commuting with transpose.
 * relu(a+b) = relu(a)+relu(b) is never a candidate, every candidate is
 * re-checked here on fresh float inputs, -j1 and -j2 give the same list,
 * and a stopped run resumed from its checkpoint gives the same list as an
 * uninterrupted one, also when stopped inside the last level (whose
 * fingerprints are on disk). A reducible child is never evaluated, and
 * candidates taken as records (xfergen's) are serialized by the confirming
 * threads and rebuild into the same rules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "enumerate/enumerate.h"
#include "rulesdb/rulesdb.h"
#include "testutil.h"

#define P XF_ENUM_P

/* ----------------------------------------------------------------- field */

START_TEST(field_arithmetic)
{
    ck_assert_uint_eq(xf_enum_fp_add(P - 1, 1), 0);
    ck_assert_uint_eq(xf_enum_fp_add(P - 1, P - 1), P - 2);
    ck_assert_uint_eq(xf_enum_fp_sub(0, 1), P - 1);
    ck_assert_uint_eq(xf_enum_fp_sub(5, 3), 2);
    ck_assert_uint_eq(xf_enum_fp_mul(P - 1, P - 1), 1); /* (-1)^2 */
    ck_assert_uint_eq(xf_enum_fp_mul(1ull << 60, 4), 2); /* 2^62 = 2 * 2^61 = 2 */
    ck_assert_uint_eq(xf_enum_fp_reduce(UINT64_MAX), 7); /* 2^64 - 1 = 8 - 1 */
    ck_assert_uint_eq(xf_enum_fp_reduce(P), 0);
    ck_assert_uint_eq(xf_enum_fp_inv(2), (P + 1) / 2);
    ck_assert_uint_eq(xf_enum_fp_inv(1), 1);
    ck_assert_uint_eq(xf_enum_fp_inv(0), 0);
    ck_assert_uint_eq(xf_enum_fp_pow(3, P - 1), 1); /* Fermat */
    ck_assert_uint_eq(xf_enum_fp_pow(2, 61), 1);
    uint64_t a = 0x123456789ABCDEFull % P;
    for (int i = 0; i < 1000; i++) {
        a = xf_enum_fp_add(xf_enum_fp_mul(a, 0x5DEECE66Dull), 11);
        if (a == 0) continue;
        ck_assert_uint_eq(xf_enum_fp_mul(a, xf_enum_fp_inv(a)), 1);
    }
    /* small values are inverted by Euclid, the rest by Fermat: the two agree,
     * and across the boundary (2^32) each is an inverse */
    for (uint64_t v = 1; v <= 5000; v++) ck_assert_uint_eq(xf_enum_fp_inv(v), xf_enum_fp_pow(v, P - 2));
    const uint64_t edge[] = {(1ull << 32) - 2, (1ull << 32) - 1, 1ull << 32, (1ull << 32) + 1, P - 1};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
        ck_assert_uint_eq(xf_enum_fp_mul(edge[i], xf_enum_fp_inv(edge[i])), 1);
        ck_assert_uint_eq(xf_enum_fp_inv(edge[i]), xf_enum_fp_pow(edge[i], P - 2));
    }
    /* 1/9 * 9 copies of x = x: average pooling of a constant window */
    uint64_t x = 987654321, s = 0;
    for (int i = 0; i < 9; i++) s = xf_enum_fp_add(s, x);
    ck_assert_uint_eq(xf_enum_fp_mul(s, xf_enum_fp_inv(9)), x);
    ck_assert_uint_eq(xf_enum_fp_prf(1, 42), xf_enum_fp_prf(1, 42));
    ck_assert_uint_ne(xf_enum_fp_prf(1, 42), xf_enum_fp_prf(2, 42));
    ck_assert_uint_ne(xf_enum_fp_prf(1, 42), xf_enum_fp_prf(1, 43));
    ck_assert_uint_lt(xf_enum_fp_prf(7, 9), P);
}
END_TEST

/* ---------------------------------------------------------------- config */

START_TEST(vocab_round_trip)
{
    xf_enum_config c, d;
    xf_enum_config_init(&c);
    xf_enum_config_init(&d);
    xf_error err;
    ck_assert_int_eq(xf_enum_config_preset(&c, "default", &err), XF_OK);
    ck_assert_int_eq(xf_enum_config_validate(&c, &err), XF_OK);
    char *text = malloc(1 << 16);
    ck_assert_int_eq(xf_enum_vocab_format(&c, text, 1 << 16, &err), XF_OK);
    ck_assert_ptr_nonnull(strstr(text, "conv2d kernel=3x3 pad=same act=relu\n"));
    ck_assert_ptr_nonnull(strstr(text, "split axis=1\n"));
    /* a three-way split round-trips with its part count */
    ck_assert_int_eq(xf_enum_vocab_parse(&d, "split axis=-1 parts=3\n", "t", &err), XF_OK);
    char one[128];
    ck_assert_int_eq(xf_enum_vocab_format(&d, one, sizeof one, &err), XF_OK);
    ck_assert_ptr_nonnull(strstr(one, "split axis=-1 parts=3\n"));
    ck_assert_int_eq(d.ops[0].params.n_split, 3);
    ck_assert_ptr_nonnull(strstr(text, "softmax axis=-1\n"));
    /* the shape and indexing operators of the default vocabulary (issue 28) */
    ck_assert_ptr_nonnull(strstr(text, "reshape rank=2 view=unflatten lead=2\n"));
    ck_assert_ptr_nonnull(strstr(text, "reshape rank=3 view=split_last heads=2\n"));
    ck_assert_ptr_nonnull(strstr(text, "slice rank=3 axis=1 start=0 end=1\n"));
    ck_assert_ptr_nonnull(strstr(text, "matmul rank=3,2\n"));
    ck_assert_ptr_nonnull(strstr(text, "ewadd rank=1,2|3 broadcast=1\n"));
    ck_assert_int_eq(xf_enum_vocab_parse(&d, text, "roundtrip", &err), XF_OK);
    ck_assert_int_eq(d.n_ops, c.n_ops);
    for (int i = 0; i < c.n_ops; i++) {
        ck_assert_str_eq(d.ops[i].name, c.ops[i].name);
        ck_assert(memcmp(&d.ops[i].params, &c.ops[i].params, sizeof(xf_params)) == 0);
        ck_assert_int_eq(d.ops[i].mode, c.ops[i].mode);
    }
    /* the preset inputs round-trip too, and the hash sees every change */
    char spec[512];
    ck_assert_int_eq(xf_enum_inputs_format(&c, spec, sizeof spec, &err), XF_OK);
    ck_assert_int_eq(xf_enum_inputs_parse(&d, spec, &err), XF_OK);
    ck_assert_uint_eq(xf_enum_config_hash(&c), xf_enum_config_hash(&d));
    d.seed = 2;
    ck_assert_uint_ne(xf_enum_config_hash(&c), xf_enum_config_hash(&d));
    ck_assert_int_eq(xf_enum_vocab_load(&d, "taso", &err), XF_OK);
    ck_assert_int_lt(d.n_ops, c.n_ops);
    ck_assert_int_eq(xf_enum_vocab_load(&d, "noviews", &err), XF_OK);
    ck_assert_int_lt(d.n_ops, c.n_ops);
    for (int i = 0; i < d.n_ops; i++) ck_assert_int_ne(d.ops[i].op, XF_OP_RESHAPE);
    free(text);
    xf_enum_config_free(&c);
    xf_enum_config_free(&d);
}
END_TEST

/* Issue 17: --vocab read a file of any size (a device that never ends,
 * until memory ran out). A vocabulary file of up to 1 MiB loads; one byte
 * more, or /dev/zero, is refused naming the file and the cap. */
static void write_vocab(const char *path, size_t size)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    size_t n = (size_t)fprintf(f, "relu\n");
    for (; n < size; n++) fputc(n + 1 == size ? '\n' : '#', f);
    fclose(f);
}

START_TEST(vocab_file_size_is_capped)
{
    xf_enum_config c;
    xf_enum_config_init(&c);
    xf_error err;
    char path[4096];
    snprintf(path, sizeof path, "%s", xf_test_tmp("vocab_cap.txt"));
    write_vocab(path, XF_ENUM_VOCAB_MAX_BYTES);
    ck_assert_msg(xf_enum_vocab_load(&c, path, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(c.n_ops, 1);
    write_vocab(path, XF_ENUM_VOCAB_MAX_BYTES + 1);
    ck_assert_int_eq(xf_enum_vocab_load(&c, path, &err), XF_ERR_INVALID);
    char want[4200];
    snprintf(want, sizeof want, "vocabulary file %s is larger than 1.0 MiB", path);
    xf_test_expect_contains(err.msg, want);
    remove(path);
    /* an endless device is not read at all: only regular files are */
    ck_assert_int_eq(xf_enum_vocab_load(&c, "/dev/zero", &err), XF_ERR_IO);
    xf_test_expect_contains(err.msg, "/dev/zero: not a regular file");
    xf_enum_config_free(&c);
}
END_TEST

START_TEST(config_errors)
{
    xf_enum_config c;
    xf_enum_config_init(&c);
    xf_error err;
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "matmul\n# fine\nfrobnicate\n", "v.txt", &err),
                     XF_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "v.txt:3"));
    ck_assert_ptr_nonnull(strstr(err.msg, "frobnicate"));
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "conv2d kernel=3x3 colour=red", "v.txt", &err),
                     XF_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "colour"));
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "conv2d act=relu", "v.txt", &err), XF_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "kernel"));
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "relu\nrelu\n", "v.txt", &err), XF_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "twice"));
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "gather", "v.txt", &err), XF_ERR_UNSUPPORTED);
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "reshape", "v.txt", &err), XF_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "view="));
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "reshape view=fold", "v.txt", &err), XF_ERR_PARSE);
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "split axis=1 parts=4", "v.txt", &err), XF_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "parts"));
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "relu parts=3", "v.txt", &err), XF_ERR_PARSE);
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "relu view=flatten", "v.txt", &err), XF_ERR_PARSE);
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "slice axis=1 start=2 end=1", "v.txt", &err), XF_ERR_PARSE);
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "matmul rank=3,9", "v.txt", &err), XF_ERR_PARSE);
    ck_assert_int_eq(xf_enum_config_preset(&c, "bogus", &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "taso"));
    ck_assert_int_eq(xf_enum_inputs_parse(&c, "x0:4x4,x0:2", &err), XF_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "twice"));
    ck_assert_int_eq(xf_enum_inputs_parse(&c, "x0:4xq", &err), XF_ERR_PARSE);
    ck_assert_int_eq(xf_enum_inputs_parse(&c, "x0", &err), XF_ERR_PARSE);
    ck_assert_int_eq(xf_enum_inputs_parse(&c, "x0:2x", &err), XF_ERR_PARSE);   /* trailing x */
    ck_assert_int_eq(xf_enum_inputs_parse(&c, "x0:+2x2", &err), XF_ERR_PARSE); /* sign */
    ck_assert_int_eq(xf_enum_inputs_parse(&c, "x0:4x4,s:scalar", &err), XF_OK);
    ck_assert_int_eq(c.n_inputs, 2);
    ck_assert_int_eq(c.inputs[1].shape.rank, 0);
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "relu", "v", &err), XF_OK);
    c.max_ops = 9;
    ck_assert_int_eq(xf_enum_config_validate(&c, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "max_ops"));
    xf_enum_config_free(&c);
}
END_TEST

/* ------------------------------------------------------------ enumeration */

typedef struct cand {
    char *text; /* "src  =>  dst" */
    int hs[XF_OP_COUNT], hd[XF_OP_COUNT];
    int n_out;
    int src_act, dst_act; /* fused activation of the first conv on each side */
} cand;

typedef struct collected {
    cand *v;
    int n, cap;
    int stop_after; /* > 0: set *stop after this many candidates */
    volatile sig_atomic_t *stop;
    int stop_level;      /* > 0: set *stop at the first progress report inside this level */
    uint64_t stopped_at; /* parents of stop_level done when it was set */
    uint64_t to_confirm; /* largest progress.to_confirm seen */
    int stop_confirming; /* set *stop once some of the last level's collisions are confirmed */
} collected;

static int first_conv_act(const xf_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == XF_OP_CONV) return g->nodes[i].params.activation;
    return -1;
}

/* Runs both sides on fresh float inputs: every candidate must hold. */
static void recheck(const xf_rule *r)
{
    int ni = r->src.n_inputs, no = r->src.n_outputs;
    xf_tensor in[16], a[8], b[8];
    ck_assert_int_le(ni, 16);
    ck_assert_int_le(no, 8);
    ck_assert_int_eq(xf_rule_validate(r, NULL), XF_OK);
    ck_assert_uint_ne(xf_graph_hash(&r->src), xf_graph_hash(&r->dst));
    ck_assert_int_eq(xf_graph_random_inputs(&r->src, 4242, in, NULL), XF_OK);
    ck_assert_int_eq(xf_interp_run(&r->src, in, ni, a, NULL), XF_OK);
    ck_assert_int_eq(xf_interp_run(&r->dst, in, ni, b, NULL), XF_OK);
    for (int k = 0; k < no; k++) {
        ck_assert(xf_tensor_close(&a[k], &b[k], 1e-4, 1e-4));
        xf_tensor_free(&a[k]);
        xf_tensor_free(&b[k]);
    }
    for (int i = 0; i < ni; i++) xf_tensor_free(&in[i]);
}

static xf_status on_candidate(void *user, xf_enum_candidate *c, xf_error *err)
{
    (void)err;
    collected *col = user;
    ck_assert_uint_eq(c->seq, (uint64_t)col->n); /* also across a resume */
    recheck(&c->rule);
    if (col->n == col->cap) {
        col->cap = col->cap ? col->cap * 2 : 64;
        col->v = realloc(col->v, sizeof(cand) * (size_t)col->cap);
        ck_assert_ptr_nonnull(col->v);
    }
    cand *k = &col->v[col->n++];
    memset(k, 0, sizeof *k);
    char s[1024], d[1024], t[2100];
    ck_assert_int_eq(xf_graph_format(&c->rule.src, s, sizeof s, NULL), XF_OK);
    ck_assert_int_eq(xf_graph_format(&c->rule.dst, d, sizeof d, NULL), XF_OK);
    snprintf(t, sizeof t, "%s  =>  %s", s, d);
    k->text = strdup(t);
    xf_graph_op_histogram(&c->rule.src, k->hs);
    xf_graph_op_histogram(&c->rule.dst, k->hd);
    k->n_out = c->rule.src.n_outputs;
    k->src_act = first_conv_act(&c->rule.src);
    k->dst_act = first_conv_act(&c->rule.dst);
    ck_assert_int_eq(c->src_ops, c->rule.src.n_nodes);
    ck_assert_int_eq(c->dst_ops, c->rule.dst.n_nodes);
    if (col->stop_after > 0 && col->n >= col->stop_after) *col->stop = 1;
    return XF_OK;
}

static void collected_free(collected *c)
{
    for (int i = 0; i < c->n; i++) free(c->v[i].text);
    free(c->v);
    memset(c, 0, sizeof *c);
}

static void enumerate_outs(const char *vocab, const char *inputs, int max_ops, int max_outputs,
                           int threads, collected *out, xf_enum_stats *stats)
{
    xf_enum_config c;
    xf_enum_config_init(&c);
    xf_error err;
    ck_assert_msg(xf_enum_vocab_parse(&c, vocab, "test", &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_enum_inputs_parse(&c, inputs, &err) == XF_OK, "%s", err.msg);
    c.max_ops = max_ops;
    if (max_outputs) c.max_outputs = max_outputs;
    xf_enum_options o;
    xf_enum_options_init(&o);
    o.threads = threads;
    o.user = out;
    o.on_candidate = on_candidate;
    memset(out, 0, sizeof *out);
    ck_assert_msg(xf_enum_run(&c, &o, stats, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(stats->stopped, 0);
    ck_assert_int_eq(stats->levels_done, max_ops);
    ck_assert_uint_eq(stats->candidates, (uint64_t)out->n);
    ck_assert_uint_ge(stats->collisions, stats->candidates);
    ck_assert_uint_gt(stats->classes, 0);
    xf_enum_config_free(&c);
}

static void enumerate(const char *vocab, const char *inputs, int max_ops, int threads,
                      collected *out, xf_enum_stats *stats)
{
    enumerate_outs(vocab, inputs, max_ops, 0, threads, out, stats);
}

/* Histogram with the given counts of up to three ops, nothing else. */
static int hist_is(const int *h, xf_op a, int na, xf_op b, int nb, xf_op c, int nc)
{
    for (int op = 0; op < XF_OP_COUNT; op++) {
        int want = (op == (int)a ? na : 0) + (op == (int)b ? nb : 0) + (op == (int)c ? nc : 0);
        if (h[op] != want) return 0;
    }
    return 1;
}

#define NONE XF_OP_OPAQUE

/* Index of a candidate whose sides have the two histograms (either way). */
static int find_pair(const collected *c, xf_op a1, int n1, xf_op b1, int m1, xf_op c1, int k1,
                     xf_op a2, int n2, xf_op b2, int m2, xf_op c2, int k2)
{
    for (int i = 0; i < c->n; i++) {
        const cand *k = &c->v[i];
        if ((hist_is(k->hs, a1, n1, b1, m1, c1, k1) && hist_is(k->hd, a2, n2, b2, m2, c2, k2)) ||
            (hist_is(k->hd, a1, n1, b1, m1, c1, k1) && hist_is(k->hs, a2, n2, b2, m2, c2, k2)))
            return i;
    }
    return -1;
}

START_TEST(finds_matmul_associativity)
{
    collected c;
    xf_enum_stats st;
    enumerate("matmul\n", "a:2x3,b:3x4,c:4x2", 2, 1, &c, &st);
    /* (ab)c = a(bc), (bc)a = b(ca), (ca)b = c(ab) */
    ck_assert_int_eq(c.n, 3);
    int found = 0;
    for (int i = 0; i < c.n; i++)
        found |= strcmp(c.v[i].text, "matmul(a, matmul(b, c))  =>  matmul(matmul(a, b), c)") == 0 ||
                 strcmp(c.v[i].text, "matmul(matmul(a, b), c)  =>  matmul(a, matmul(b, c))") == 0;
    ck_assert(found);
    ck_assert_uint_eq(st.graphs_level[1], 3); /* ab, bc, ca */
    collected_free(&c);
}
END_TEST

/* The views of issue 28: flatten and unflatten cancel, relu and a bias add
 * commute with an unflatten, a slice of one position commutes with a
 * matmul by a 2-D weight; every reshape made is of its variant's kind. */
START_TEST(finds_view_rules)
{
    collected c;
    xf_enum_stats st;
    enumerate("reshape view=flatten rank=3\nreshape view=unflatten lead=2 rank=2\nrelu\n"
              "ewadd broadcast=1 rank=2|3,1\nslice axis=1 start=0 end=1 rank=3\nmatmul rank=3,2\n",
              "b:2x4x4,m:4x4,g:4", 2, 1, &c, &st);
    int cancel = 0, relu = 0, bias = 0, slice = 0;
    for (int i = 0; i < c.n; i++) {
        const char *t = c.v[i].text;
        cancel |= strcmp(t, "reshape[shape=2x4x4](reshape[shape=8x4](b))  =>  b") == 0;
        relu |= strcmp(t, "reshape[shape=2x2x4](relu(m))  =>  relu(reshape[shape=2x2x4](m))") == 0;
        bias |= strstr(t, "ewadd(reshape[shape=2x2x4](m), g)") != NULL;
        slice |= strcmp(t, "slice[axis1=0:1:1](matmul(b, m))  =>  matmul(slice[axis1=0:1:1](b), m)") == 0;
    }
    ck_assert_msg(cancel && relu && bias && slice, "cancel %d relu %d bias %d slice %d", cancel, relu,
                  bias, slice);
    collected_free(&c);
}
END_TEST

START_TEST(finds_matmul_distributivity)
{
    collected c;
    xf_enum_stats st;
    enumerate("matmul\newadd\n", "a:2x3,b:3x4,c:3x4", 3, 1, &c, &st);
    int i = find_pair(&c, XF_OP_MATMUL, 2, XF_OP_ADD, 1, NONE, 0, XF_OP_MATMUL, 1, XF_OP_ADD, 1,
                      NONE, 0);
    ck_assert_msg(i >= 0, "no ewadd(matmul(a,b), matmul(a,c)) => matmul(a, ewadd(b,c))");
    ck_assert_ptr_nonnull(strstr(c.v[i].text, "matmul(a, ewadd("));
    collected_free(&c);
}
END_TEST

START_TEST(finds_concat_split_merge)
{
    collected c;
    xf_enum_stats st;
    enumerate("matmul\nconcat axis=1\nsplit axis=1\n", "a:3x4,b:4x4,c:4x4", 3, 1, &c, &st);
    int i = find_pair(&c, XF_OP_MATMUL, 2, NONE, 0, NONE, 0, XF_OP_MATMUL, 1, XF_OP_CONCAT, 1,
                      XF_OP_SPLIT, 1);
    ck_assert_msg(i >= 0, "two matmuls sharing an input were not merged through concat/split");
    ck_assert_int_eq(c.v[i].n_out, 2);
    /* split(concat(b, c)) => b, c: a rule whose target has no operator */
    int j = find_pair(&c, XF_OP_CONCAT, 1, XF_OP_SPLIT, 1, NONE, 0, NONE, 0, NONE, 0, NONE, 0);
    ck_assert_int_ge(j, 0);
    collected_free(&c);
}
END_TEST

/* A split into three equal parts (`parts=3`; GPT's Q/K/V): relu and a
 * swap of two axes commute with it, the swap moving the split's axis, and
 * a three-way split of a concat of three gives them back (3 outputs). */
START_TEST(finds_three_way_split_rules)
{
    collected c;
    xf_enum_stats st;
    enumerate_outs("relu\nsplit axis=-2 parts=3 rank=4\nsplit axis=-3 parts=3 rank=4\n"
                   "transpose perm=0,2,1,3\n",
                   "q:2x2x6x2", 4, 3, 1, &c, &st);
    int relu = find_pair(&c, XF_OP_RELU, 3, XF_OP_SPLIT, 1, NONE, 0, XF_OP_RELU, 1, XF_OP_SPLIT, 1,
                         NONE, 0);
    int swap = find_pair(&c, XF_OP_TRANSPOSE, 3, XF_OP_SPLIT, 1, NONE, 0, XF_OP_TRANSPOSE, 1,
                         XF_OP_SPLIT, 1, NONE, 0);
    ck_assert_msg(relu >= 0 && swap >= 0, "relu %d swap %d", relu, swap);
    ck_assert_int_eq(c.v[relu].n_out, 3);
    ck_assert_int_eq(c.v[swap].n_out, 3);
    /* the parts are q's thirds along the swapped axes: sizes 2 of 6 */
    ck_assert_msg(strstr(c.v[swap].text, "split0[axis=-2,sizes=2/2/2](q)") &&
                      strstr(c.v[swap].text, "split0[axis=-3,sizes=2/2/2](transpose"),
                  "%s", c.v[swap].text);
    collected_free(&c);
    /* with two outputs at most no rule over a three-way split has all its parts */
    enumerate_outs("relu\nsplit axis=-2 parts=3 rank=4\n", "q:2x2x6x2", 4, 2, 1, &c, &st);
    ck_assert_int_lt(find_pair(&c, XF_OP_RELU, 3, XF_OP_SPLIT, 1, NONE, 0, XF_OP_RELU, 1,
                               XF_OP_SPLIT, 1, NONE, 0), 0);
    collected_free(&c);
}
END_TEST

START_TEST(finds_conv_relu_fusion)
{
    collected c;
    xf_enum_stats st;
    enumerate("conv2d kernel=3x3 pad=same\nconv2d kernel=3x3 pad=same act=relu\nrelu\n",
              "x:1x2x4x4,w:2x2x3x3", 2, 1, &c, &st);
    int found = 0;
    for (int i = 0; i < c.n; i++) {
        const cand *k = &c.v[i];
        if (hist_is(k->hs, XF_OP_CONV, 1, XF_OP_RELU, 1, NONE, 0) &&
            hist_is(k->hd, XF_OP_CONV, 1, NONE, 0, NONE, 0) && k->dst_act == XF_ACT_RELU &&
            strstr(k->text, "(x, w)"))
            found = 1;
    }
    ck_assert_msg(found, "relu(conv(x, w)) => conv_relu(x, w) not found");
    collected_free(&c);
}
END_TEST

START_TEST(finds_avgpool_as_conv)
{
    collected c;
    xf_enum_stats st;
    enumerate("avgpool kernel=3x3 pad=same count_include_pad=1\n"
              "conv2d kernel=3x3 pad=same group=depthwise\n"
              "const_pool shape=2x1x3x3\n",
              "x:1x2x4x4", 2, 1, &c, &st);
    int i = find_pair(&c, XF_OP_AVGPOOL, 1, NONE, 0, NONE, 0, XF_OP_CONV, 1, XF_OP_CONST_POOL, 1,
                      NONE, 0);
    ck_assert_msg(i >= 0, "avgpool(x) => conv(x, const_pool) not found");
    collected_free(&c);
    /* without count_include_pad the border windows average fewer taps: not equal */
    enumerate("avgpool kernel=3x3 pad=same\n"
              "conv2d kernel=3x3 pad=same group=depthwise\n"
              "const_pool shape=2x1x3x3\n",
              "x:1x2x4x4", 2, 1, &c, &st);
    ck_assert_int_lt(find_pair(&c, XF_OP_AVGPOOL, 1, NONE, 0, NONE, 0, XF_OP_CONV, 1,
                               XF_OP_CONST_POOL, 1, NONE, 0), 0);
    collected_free(&c);
}
END_TEST

START_TEST(relu_commutes_with_transpose)
{
    collected c;
    xf_enum_stats st;
    enumerate("relu\ntranspose\n", "a:3x4", 2, 1, &c, &st);
    int i = find_pair(&c, XF_OP_RELU, 1, XF_OP_TRANSPOSE, 1, NONE, 0, XF_OP_RELU, 1,
                      XF_OP_TRANSPOSE, 1, NONE, 0);
    ck_assert_int_ge(i, 0);
    /* transpose(transpose(a)) => a */
    ck_assert_int_ge(find_pair(&c, XF_OP_TRANSPOSE, 2, NONE, 0, NONE, 0, NONE, 0, NONE, 0, NONE, 0),
                     0);
    collected_free(&c);
}
END_TEST

START_TEST(false_pair_never_candidate)
{
    collected c;
    xf_enum_stats st;
    enumerate("ewadd\nrelu\n", "a:4x4,b:4x4", 3, 1, &c, &st);
    /* relu(ewadd(a, b)) vs ewadd(relu(a), relu(b)) */
    ck_assert_int_lt(find_pair(&c, XF_OP_RELU, 1, XF_OP_ADD, 1, NONE, 0, XF_OP_RELU, 2, XF_OP_ADD, 1,
                               NONE, 0),
                     0);
    ck_assert_int_gt(c.n, 0); /* commutativity of ewadd at least */
    ck_assert_uint_eq(st.rejected_float, 0);
    collected_free(&c);
}
END_TEST

START_TEST(deterministic_across_threads)
{
    collected a, b;
    xf_enum_stats sa, sb;
    const char *vocab = "matmul\newadd\nrelu\nconcat axis=1\nsplit axis=1\ntranspose\n";
    enumerate(vocab, "a:4x4,b:4x4,c:4x4", 3, 1, &a, &sa);
    enumerate(vocab, "a:4x4,b:4x4,c:4x4", 3, 2, &b, &sb);
    ck_assert_int_gt(a.n, 10);
    ck_assert_int_eq(a.n, b.n);
    for (int i = 0; i < a.n; i++) ck_assert_str_eq(a.v[i].text, b.v[i].text);
    ck_assert_uint_eq(sa.graphs, sb.graphs);
    ck_assert_uint_eq(sa.classes, sb.classes);
    ck_assert_uint_eq(sa.reducible, sb.reducible);
    collected_free(&a);
    collected_free(&b);
}
END_TEST

/* A reducible child is dropped before its new node is evaluated: every
 * node the memo answered or a kernel computed belongs to a kept graph. */
START_TEST(reducible_children_not_evaluated)
{
    collected a;
    xf_enum_stats st;
    enumerate("matmul\newadd\nrelu\nconcat axis=1\nsplit axis=1\ntranspose\n", "a:4x4,b:4x4,c:4x4",
              3, 2, &a, &st);
    ck_assert_uint_gt(st.reducible, 0);
    ck_assert_uint_eq(st.memo_hits + st.memo_misses, st.graphs);
    collected_free(&a);
}
END_TEST

static uint64_t le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* A candidate handed over as a record (xfergen's candidate list: u64
 * fingerprint, u32 input count, per input u16 length + name, per side u32
 * length + serialized graph), rebuilt into its rule and collected. */
static xf_status on_record(void *user, xf_enum_candidate *c, xf_error *err)
{
    ck_assert_ptr_nonnull(c->record);
    ck_assert_int_eq(c->rule.src.n_nodes, 0); /* the record is all there is */
    const uint8_t *p = c->record, *end = c->record + c->record_len;
    xf_enum_candidate k = *c;
    xf_rule_init(&k.rule);
    k.rule.fingerprint = le(p, 8);
    uint32_t n_in = (uint32_t)le(p + 8, 4);
    p += 12;
    char names[16][64];
    const char *name_ptrs[17] = {NULL};
    ck_assert_uint_le(n_in, 16);
    for (uint32_t i = 0; i < n_in; i++) {
        size_t n = (size_t)le(p, 2);
        ck_assert_uint_lt(n, sizeof names[i]);
        memcpy(names[i], p + 2, n);
        names[i][n] = '\0';
        name_ptrs[i] = names[i];
        p += 2 + n;
    }
    for (int side = 0; side < 2; side++) {
        size_t n = (size_t)le(p, 4);
        ck_assert_int_eq(xf_rulesdb_graph_deserialize(p + 4, n, name_ptrs,
                                                      side ? &k.rule.dst : &k.rule.src, err),
                         XF_OK);
        p += 4 + n;
    }
    ck_assert_ptr_eq(p, end);
    xf_status st = on_candidate(user, &k, err);
    xf_rule_free(&k.rule);
    return st;
}

/* Taking records, the confirming threads serialize each candidate (not
 * the serial hand-out): the same candidates, in the same order. */
START_TEST(records_from_threads)
{
    const char *vocab = "matmul\newadd\nrelu\nconcat axis=1\nsplit axis=1\ntranspose\n";
    collected a, b;
    xf_enum_stats sa, sb;
    enumerate(vocab, "a:4x4,b:4x4,c:4x4", 3, 2, &a, &sa);
    xf_enum_config c;
    xf_enum_config_init(&c);
    xf_error err;
    ck_assert_int_eq(xf_enum_vocab_parse(&c, vocab, "test", &err), XF_OK);
    ck_assert_int_eq(xf_enum_inputs_parse(&c, "a:4x4,b:4x4,c:4x4", &err), XF_OK);
    c.max_ops = 3;
    xf_enum_options o;
    xf_enum_options_init(&o);
    o.threads = 2;
    o.take_records = 1;
    o.user = &b;
    o.on_candidate = on_record;
    memset(&b, 0, sizeof b);
    ck_assert_msg(xf_enum_run(&c, &o, &sb, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_gt(a.n, 10);
    ck_assert_int_eq(b.n, a.n);
    for (int i = 0; i < a.n; i++) ck_assert_str_eq(b.v[i].text, a.v[i].text);
    ck_assert_uint_eq(sb.candidates, sa.candidates);
    xf_enum_config_free(&c);
    collected_free(&a);
    collected_free(&b);
}
END_TEST

/* A run to stop and resume: configuration, checkpoint `name` (removed),
 * options with the stop flag, candidates into *part. */
static void resumable(xf_enum_config *c, const char *vocab, const char *inputs, int max_ops,
                      const char *name, char *path, size_t n, xf_enum_options *o,
                      volatile sig_atomic_t *stop, collected *part)
{
    xf_enum_config_init(c);
    xf_error err;
    ck_assert_int_eq(xf_enum_vocab_parse(c, vocab, "test", &err), XF_OK);
    ck_assert_int_eq(xf_enum_inputs_parse(c, inputs, &err), XF_OK);
    c->max_ops = max_ops;
    snprintf(path, n, "%s", xf_test_tmp(name));
    remove(path);
    xf_enum_options_init(o);
    o->checkpoint = path;
    o->resume = 1;
    o->stop = stop;
    o->user = part;
    o->on_candidate = on_candidate;
    memset(part, 0, sizeof *part);
    part->stop = stop;
}

/* The resumed run's candidates and counts are the uninterrupted run's. */
static void same_run(const collected *full, const xf_enum_stats *sf, const collected *part,
                     const xf_enum_stats *sp)
{
    ck_assert_int_eq(sp->stopped, 0);
    ck_assert_int_eq(part->n, full->n);
    for (int i = 0; i < full->n; i++) ck_assert_str_eq(part->v[i].text, full->v[i].text);
    ck_assert_uint_eq(sp->graphs, sf->graphs);
    ck_assert_uint_eq(sp->classes, sf->classes);
    ck_assert_uint_eq(sp->collisions, sf->collisions);
    ck_assert_uint_eq(sp->candidates, sf->candidates);
}

START_TEST(stop_and_resume)
{
    const char *vocab = "matmul\newadd\nconcat axis=1\nsplit axis=1\n";
    const char *inputs = "a:4x4,b:4x4,c:4x4";
    collected full, part;
    xf_enum_stats sf, sp;
    enumerate(vocab, inputs, 3, 1, &full, &sf);
    ck_assert_int_gt(full.n, 2);

    xf_enum_config c;
    xf_error err;
    char path[512];
    volatile sig_atomic_t stop = 0;
    xf_enum_options o;
    resumable(&c, vocab, inputs, 3, "enumerate_resume.ckpt", path, sizeof path, &o, &stop, &part);
    part.stop_after = 1; /* stop at the first batch boundary after a candidate */
    xf_status st = xf_enum_run(&c, &o, &sp, &err);
    ck_assert_msg(st == XF_OK, "%s", err.msg);
    ck_assert_int_eq(sp.stopped, 1);
    ck_assert_int_lt(sp.levels_done, c.max_ops);
    int first = part.n;
    ck_assert_int_gt(first, 0);
    ck_assert_int_lt(first, full.n);
    stop = 0;
    part.stop_after = 0;
    ck_assert_int_eq(xf_enum_run(&c, &o, &sp, &err), XF_OK);
    same_run(&full, &sf, &part, &sp);

    /* a checkpoint of another configuration is refused with a clear message */
    c.seed = 99;
    ck_assert_int_eq(xf_enum_run(&c, &o, &sp, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "different configuration"));
    xf_enum_config_free(&c);
    collected_free(&full);
    collected_free(&part);
}
END_TEST

static xf_status stop_in_level(void *user, const xf_enum_progress *p, xf_error *err)
{
    (void)err;
    collected *col = user;
    ck_assert_uint_le(p->confirmed, p->to_confirm);
    if (p->to_confirm > col->to_confirm) col->to_confirm = p->to_confirm;
    if (col->stop_confirming && p->confirmed > 0 && !col->stopped_at) {
        *col->stop = 1; /* while the last level's collisions are confirmed */
        col->stopped_at = p->confirmed;
        ck_assert_uint_lt(p->confirmed, p->to_confirm);
    }
    if (p->level == col->stop_level && p->parents_done > 0 && !col->stopped_at) {
        *col->stop = 1;
        col->stopped_at = p->parents_done;
        ck_assert_uint_lt(p->parents_done, p->parents_total);
    }
    return XF_OK;
}

/* Stopped inside the last level, whose fingerprints go to disk next to the
 * checkpoint: the spill files stay, and a resumed run (even after bytes were
 * appended to them past the checkpoint, as by a process killed later) gives
 * the uninterrupted run's candidates, in order, and its counts. */
START_TEST(stop_in_last_level_and_resume)
{
    const char *vocab = "matmul\newadd\nrelu\n";
    const char *inputs = "a:4x4,b:4x4,c:4x4";
    collected full, part;
    xf_enum_stats sf, sp;
    enumerate(vocab, inputs, 4, 2, &full, &sf); /* > 2048 parents at level 3 */
    ck_assert_int_gt(full.n, 2);
    ck_assert_uint_gt(sf.spill_bytes, 0);
    /* most new nodes repeat one already evaluated on the same values */
    ck_assert_uint_gt(sf.memo_hits, sf.memo_misses);

    xf_enum_config c;
    xf_error err;
    char path[512], spill0[600];
    volatile sig_atomic_t stop = 0;
    xf_enum_options o;
    resumable(&c, vocab, inputs, 4, "enumerate_last.ckpt", path, sizeof path, &o, &stop, &part);
    snprintf(spill0, sizeof spill0, "%s.spill.00", path);
    o.threads = 2;
    o.on_progress = stop_in_level;
    o.progress_every_s = 0;
    part.stop_level = 4;
    ck_assert_msg(xf_enum_run(&c, &o, &sp, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(sp.stopped, 1);
    ck_assert_int_eq(sp.levels_done, 3);
    ck_assert_uint_gt(part.stopped_at, 0);
    int first = part.n;
    ck_assert_int_lt(first, full.n);
    /* bytes past the checkpoint, as a process killed after more appends leaves */
    FILE *f = fopen(spill0, "ab");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 48; i++) fputc(0x5A, f);
    fclose(f);
    stop = 0;
    ck_assert_msg(xf_enum_run(&c, &o, &sp, &err) == XF_OK, "%s", err.msg);
    same_run(&full, &sf, &part, &sp);
    ck_assert_uint_eq(sp.spill_bytes, sf.spill_bytes);
    /* the last level's collisions were reported while being confirmed */
    ck_assert_uint_gt(part.to_confirm, 0);
    ck_assert_uint_le(part.to_confirm, sf.collisions);
    /* stopped again while the last level's collisions are confirmed (every
     * parent done): resumed, still the uninterrupted run */
    collected again;
    memset(&again, 0, sizeof again);
    again.stop = &stop;
    again.stop_confirming = 1;
    ck_assert_int_eq(xf_enum_checkpoint_remove(path, &err), XF_OK);
    o.user = &again;
    stop = 0;
    ck_assert_msg(xf_enum_run(&c, &o, &sp, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(sp.stopped, 1);
    ck_assert_int_eq(sp.levels_done, 3);
    ck_assert_uint_gt(again.stopped_at, 0);
    ck_assert_int_lt(again.n, full.n);
    stop = 0;
    again.stop_confirming = 0;
    ck_assert_msg(xf_enum_run(&c, &o, &sp, &err) == XF_OK, "%s", err.msg);
    same_run(&full, &sf, &again, &sp);
    ck_assert_uint_eq(sp.spill_bytes, sf.spill_bytes);
    collected_free(&again);
    /* checkpoint and spill stay until removed */
    ck_assert_int_eq(access(spill0, F_OK), 0);
    ck_assert_int_eq(xf_enum_checkpoint_remove(path, &err), XF_OK);
    ck_assert_int_ne(access(spill0, F_OK), 0);
    ck_assert_int_ne(access(path, F_OK), 0);
    xf_enum_config_free(&c);
    collected_free(&full);
    collected_free(&part);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("enumerate");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, field_arithmetic);
    tcase_add_test(tc, vocab_round_trip);
    tcase_add_test(tc, config_errors);
    tcase_add_test(tc, vocab_file_size_is_capped);
    tcase_add_test(tc, finds_matmul_associativity);
    tcase_add_test(tc, finds_matmul_distributivity);
    tcase_add_test(tc, finds_view_rules);
    tcase_add_test(tc, finds_concat_split_merge);
    tcase_add_test(tc, finds_three_way_split_rules);
    tcase_add_test(tc, finds_conv_relu_fusion);
    tcase_add_test(tc, finds_avgpool_as_conv);
    tcase_add_test(tc, relu_commutes_with_transpose);
    tcase_add_test(tc, false_pair_never_candidate);
    tcase_add_test(tc, deterministic_across_threads);
    tcase_add_test(tc, reducible_children_not_evaluated);
    tcase_add_test(tc, records_from_threads);
    tcase_add_test(tc, stop_and_resume);
    tcase_add_test(tc, stop_in_last_level_and_resume);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
