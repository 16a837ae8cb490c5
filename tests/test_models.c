/*
 * test_models.c — whole models end to end.
 * (a) Every ../shared/models/<name>/model.onnx: the interpreter reproduces
 *     PyTorch's outputs in test_data_set_0 within 1e-4 relative (+1e-5
 *     absolute for values near zero).
 * (b) Round trip for those and for every modelzoo model: import -> export ->
 *     import gives the same canonical hash and bit-identical outputs on the
 *     same random inputs.
 * (a) is skipped (XF_SKIP) when ../shared is absent.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static void free_list(xf_tensor *t, int n)
{
    for (int i = 0; i < n; i++) xf_tensor_free(&t[i]);
    free(t);
}

/* Export g, re-import, compare hash and outputs on random inputs. */
static void check_round_trip(const xf_graph *g, const char *label)
{
    xf_error err;
    char path[4096];
    snprintf(path, sizeof path, "%s", xf_test_tmp(label));
    strncat(path, ".rt.onnx", sizeof path - strlen(path) - 1);
    ck_assert_msg(xf_onnx_save(g, path, &err) == XF_OK, "%s: export: %s", label, err.msg);
    xf_graph b;
    ck_assert_msg(xf_onnx_load(path, NULL, &b, &err) == XF_OK, "%s: re-import: %s", label, err.msg);
    ck_assert_msg(xf_graph_hash(g) == xf_graph_hash(&b), "%s: canonical hash changed", label);
    xf_tensor *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    xf_tensor *oa = calloc((size_t)g->n_outputs + 1, sizeof *oa);
    xf_tensor *ob = calloc((size_t)g->n_outputs + 1, sizeof *ob);
    ck_assert_int_eq(xf_graph_random_inputs(g, 7, in, &err), XF_OK);
    ck_assert_msg(xf_interp_run(g, in, g->n_inputs, oa, &err) == XF_OK, "%s: %s", label, err.msg);
    ck_assert_msg(xf_interp_run(&b, in, b.n_inputs, ob, &err) == XF_OK, "%s: %s", label, err.msg);
    for (int i = 0; i < g->n_outputs; i++)
        ck_assert_msg(xf_tensor_close(&oa[i], &ob[i], 0, 0), "%s: output %d differs after round trip",
                      label, i);
    fprintf(stderr, "round trip %-14s %5d nodes  hash %016llx  outputs identical\n", label,
            g->n_nodes, (unsigned long long)xf_graph_hash(g));
    free_list(in, g->n_inputs);
    free_list(oa, g->n_outputs);
    free_list(ob, g->n_outputs);
    xf_graph_free(&b);
    remove(path);
}

static int is_model_dir(const char *dir, const char *name, char *model, size_t n)
{
    snprintf(model, n, "%s/%s/model.onnx", dir, name);
    FILE *f = fopen(model, "rb");
    if (!f) return 0;
    fclose(f);
    return 1;
}

/* The sizes of the symbolic dims the test data of a shared model was
 * made at (models/README.md): PyTorch's dynamic-axes exports. */
static xf_onnx_options data_sizes(const char *model)
{
    static const char *const names[] = {"batch", "sequence"};
    static const int64_t values[] = {2, 64};
    xf_onnx_options o = xf_onnx_default_options();
    if (strcmp(model, "bert_small_dynamic") == 0) {
        o.n_dim_overrides = 2;
        o.dim_names = names;
        o.dim_values = values;
    }
    return o;
}

START_TEST(shared_models_match_pytorch)
{
    const char *dir = xf_test_models_dir();
    if (!dir) XF_SKIP("shared models not found (XF_SHARED_DIR)");
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    int n_models = 0;
    while ((e = readdir(d))) {
        char model[4096];
        if (e->d_name[0] == '.' || !is_model_dir(dir, e->d_name, model, sizeof model)) continue;
        xf_graph g;
        xf_error err;
        xf_onnx_options o = data_sizes(e->d_name);
        ck_assert_msg(xf_onnx_load(model, &o, &g, &err) == XF_OK, "%s", err.msg);
        xf_tensor *in = calloc((size_t)g.n_inputs + 1, sizeof *in);
        xf_tensor *want = calloc((size_t)g.n_outputs + 1, sizeof *want);
        xf_tensor *got = calloc((size_t)g.n_outputs + 1, sizeof *got);
        char path[4096];
        for (int i = 0; i < g.n_inputs; i++) {
            snprintf(path, sizeof path, "%s/%s/test_data_set_0/input_%d.pb", dir, e->d_name, i);
            ck_assert_msg(xf_onnx_load_tensor(path, &in[i], NULL, &err) == XF_OK, "%s", err.msg);
        }
        for (int i = 0; i < g.n_outputs; i++) {
            snprintf(path, sizeof path, "%s/%s/test_data_set_0/output_%d.pb", dir, e->d_name, i);
            ck_assert_msg(xf_onnx_load_tensor(path, &want[i], NULL, &err) == XF_OK, "%s", err.msg);
        }
        ck_assert_msg(xf_interp_run(&g, in, g.n_inputs, got, &err) == XF_OK, "%s: %s", e->d_name,
                      err.msg);
        for (int i = 0; i < g.n_outputs; i++) {
            double ma, mr;
            ck_assert_int_eq(xf_tensor_compare(&got[i], &want[i], &ma, &mr, &err), XF_OK);
            fprintf(stderr, "pytorch oracle %-14s output %d: max abs err %.3g, max rel err %.3g\n",
                    e->d_name, i, ma, mr);
            ck_assert_msg(xf_tensor_close(&got[i], &want[i], 1e-4, 1e-5),
                          "%s output %d: max abs err %g, max rel err %g", e->d_name, i, ma, mr);
        }
        free_list(in, g.n_inputs);
        free_list(want, g.n_outputs);
        free_list(got, g.n_outputs);
        check_round_trip(&g, e->d_name);
        xf_graph_free(&g);
        n_models++;
    }
    closedir(d);
    ck_assert_int_ge(n_models, 1);
}
END_TEST

/* modelzoo models at small sizes (fast under sanitizers) */
static const char *zoo_models[][2] = {
    {"resnet18", "--image 64"},
    {"resnet50", "--image 64"},
    {"squeezenet", "--image 64"},
    {"bert", "--layers 2 --hidden 64 --heads 4 --seq 16"},
    {"vit", "--layers 2 --hidden 64 --heads 2 --image 32 --patch 8"},
};

START_TEST(modelzoo_round_trip)
{
    const char *name = zoo_models[_i][0];
    xf_graph g;
    xf_error err;
    xf_test_modelzoo(name, zoo_models[_i][1], name, &g);
    ck_assert_int_eq(xf_graph_validate(&g, &err), XF_OK);
    check_round_trip(&g, name);
    xf_graph_free(&g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("models");
    TCase *t = tcase_create("models");
    tcase_set_timeout(t, 900);
    tcase_add_test(t, shared_models_match_pytorch);
    tcase_add_loop_test(t, modelzoo_round_trip, 0, (int)(sizeof zoo_models / sizeof zoo_models[0]));
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
