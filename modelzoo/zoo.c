/*
 * zoo.c — the registry behind modelzoo.h: one row per model with its
 * summary, the options it takes and their defaults, and one row per option;
 * building a model from its row.
 * Defaults follow the reference architectures (torchvision resnet and
 * squeezenet1_1 at 224x224 with 1000 classes, a small BERT encoder, a
 * ViT the size of ../shared/models/vit_tiny, and a GPT-2-style decoder the
 * size of the BERT).
 */
#include "modelzoo/modelzoo.h"

#include <string.h>

#include "builder_internal.h"

/* Node count grows with --layers; every other size is bounded in practice
 * by the parameter budget. */
#define MAX_LAYERS 1000
#define MAX_SIZE 1000000

static const xf_zoo_option options[XF_ZOO_OPT_COUNT] = {
    [XF_ZOO_BATCH] = {"--batch", "batch size", MAX_SIZE},
    [XF_ZOO_IMAGE] = {"--image", "input image height and width", MAX_SIZE},
    [XF_ZOO_CLASSES] = {"--classes", "number of classes of the classifier", MAX_SIZE},
    [XF_ZOO_WIDTH] = {"--width", "base channel count (torchvision: 64)", MAX_SIZE},
    [XF_ZOO_LAYERS] = {"--layers", "number of transformer blocks", MAX_LAYERS},
    [XF_ZOO_HIDDEN] = {"--hidden", "hidden size (a multiple of --heads)", MAX_SIZE},
    [XF_ZOO_HEADS] = {"--heads", "number of attention heads", MAX_SIZE},
    [XF_ZOO_SEQ] = {"--seq", "sequence length", MAX_SIZE},
    [XF_ZOO_VOCAB] = {"--vocab", "vocabulary size", MAX_SIZE},
    [XF_ZOO_PATCH] = {"--patch", "patch size (divides --image)", MAX_SIZE},
};

#define CNN_DEFAULTS [XF_ZOO_BATCH] = 1, [XF_ZOO_IMAGE] = 224, [XF_ZOO_CLASSES] = 1000

static const xf_zoo_model models[] = {
    {"resnet18", "ResNet-18 (torchvision; basic blocks, BatchNormalization kept)",
     {CNN_DEFAULTS, [XF_ZOO_WIDTH] = 64}, zoo_build_resnet18},
    {"resnet34", "ResNet-34 (torchvision; basic blocks, BatchNormalization kept)",
     {CNN_DEFAULTS, [XF_ZOO_WIDTH] = 64}, zoo_build_resnet34},
    {"resnet50", "ResNet-50 (torchvision; bottleneck blocks, BatchNormalization kept)",
     {CNN_DEFAULTS, [XF_ZOO_WIDTH] = 64}, zoo_build_resnet50},
    {"squeezenet", "SqueezeNet 1.1 (torchvision; fire modules, ceil-mode max pooling)",
     {CNN_DEFAULTS}, zoo_build_squeezenet},
    {"bert", "BERT encoder as exported from HuggingFace (decomposed LayerNorm and GELU, pooler)",
     {[XF_ZOO_BATCH] = 1, [XF_ZOO_LAYERS] = 2, [XF_ZOO_HIDDEN] = 128, [XF_ZOO_HEADS] = 2,
      [XF_ZOO_SEQ] = 32, [XF_ZOO_VOCAB] = 1000},
     zoo_build_bert},
    {"vit", "Vision Transformer (torchvision layout; pre-LN blocks with LayerNormalization)",
     {CNN_DEFAULTS, [XF_ZOO_LAYERS] = 4, [XF_ZOO_HIDDEN] = 192, [XF_ZOO_HEADS] = 3,
      [XF_ZOO_PATCH] = 16},
     zoo_build_vit},
    {"gpt", "GPT-2-style decoder as exported from HuggingFace (merged Q/K/V, causal mask, tanh GELU)",
     {[XF_ZOO_BATCH] = 1, [XF_ZOO_LAYERS] = 2, [XF_ZOO_HIDDEN] = 128, [XF_ZOO_HEADS] = 2,
      [XF_ZOO_SEQ] = 32, [XF_ZOO_VOCAB] = 1000},
     zoo_build_gpt},
    {"gpt-tied", "GPT-2-style decoder whose LM head is the token embedding (tied, as GPT-2's)",
     {[XF_ZOO_BATCH] = 1, [XF_ZOO_LAYERS] = 2, [XF_ZOO_HIDDEN] = 128, [XF_ZOO_HEADS] = 2,
      [XF_ZOO_SEQ] = 32, [XF_ZOO_VOCAB] = 1000},
     zoo_build_gpt_tied},
    {"lookahead-transpose", "look-ahead case: transpose(a0*b0 + a1*b1 + ...), --layers products of "
     "[hidden, width] by [width, hidden] (bench_lookahead)",
     {[XF_ZOO_LAYERS] = 2, [XF_ZOO_HIDDEN] = 256, [XF_ZOO_WIDTH] = 4},
     zoo_build_lookahead_transpose},
};

const xf_zoo_option *xf_modelzoo_option(xf_zoo_opt o)
{
    return (int)o >= 0 && o < XF_ZOO_OPT_COUNT ? &options[o] : NULL;
}

xf_zoo_opt xf_modelzoo_option_find(const char *flag)
{
    for (int i = 0; i < XF_ZOO_OPT_COUNT; i++)
        if (strcmp(options[i].flag, flag) == 0) return (xf_zoo_opt)i;
    return XF_ZOO_OPT_COUNT;
}

int xf_modelzoo_model_count(void)
{
    return (int)(sizeof models / sizeof models[0]);
}

const xf_zoo_model *xf_modelzoo_model_at(int i)
{
    return i >= 0 && i < xf_modelzoo_model_count() ? &models[i] : NULL;
}

const xf_zoo_model *xf_modelzoo_model_find(const char *name)
{
    for (int i = 0; i < xf_modelzoo_model_count(); i++)
        if (strcmp(models[i].name, name) == 0) return &models[i];
    return NULL;
}

void xf_modelzoo_config_init(xf_zoo_config *c, const xf_zoo_model *m)
{
    memset(c, 0, sizeof *c);
    memcpy(c->v, m->defaults, sizeof c->v);
}

xf_status xf_modelzoo_build(const xf_zoo_model *m, const xf_zoo_config *c, xf_graph *g,
                            xf_error *err)
{
    xf_graph_init(g);
    xf_status st = m->build(c, g, err);
    if (st != XF_OK) xf_graph_free(g);
    return st;
}

long long xf_modelzoo_param_count(const xf_graph *g)
{
    long long n = 0;
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i].kind == XF_VALUE_CONST && g->values[i].dtype == XF_F32)
            n += xf_shape_numel(&g->values[i].shape);
    return n;
}
