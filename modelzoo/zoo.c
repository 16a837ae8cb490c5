/*
 * zoo.c — the registry behind zoo.h: one row per model with its summary,
 * the options it takes and their defaults, and one row per option.
 * Defaults follow the reference architectures (torchvision resnet and
 * squeezenet1_1 at 224x224 with 1000 classes, a small BERT encoder, and a
 * ViT the size of ../shared/models/vit_tiny).
 */
#include "modelzoo/modelzoo.h"

#include <string.h>

/* Node count grows with --layers; every other size is bounded in practice
 * by the parameter budget. */
#define MAX_LAYERS 1000
#define MAX_SIZE 1000000

static const zoo_option options[ZOO_OPT_COUNT] = {
    [ZOO_BATCH] = {"--batch", "batch size", MAX_SIZE},
    [ZOO_IMAGE] = {"--image", "input image height and width", MAX_SIZE},
    [ZOO_CLASSES] = {"--classes", "number of classes of the classifier", MAX_SIZE},
    [ZOO_WIDTH] = {"--width", "base channel count (torchvision: 64)", MAX_SIZE},
    [ZOO_LAYERS] = {"--layers", "number of transformer blocks", MAX_LAYERS},
    [ZOO_HIDDEN] = {"--hidden", "hidden size (a multiple of --heads)", MAX_SIZE},
    [ZOO_HEADS] = {"--heads", "number of attention heads", MAX_SIZE},
    [ZOO_SEQ] = {"--seq", "sequence length", MAX_SIZE},
    [ZOO_VOCAB] = {"--vocab", "vocabulary size", MAX_SIZE},
    [ZOO_PATCH] = {"--patch", "patch size (divides --image)", MAX_SIZE},
};

#define CNN_DEFAULTS [ZOO_BATCH] = 1, [ZOO_IMAGE] = 224, [ZOO_CLASSES] = 1000

static const zoo_model models[] = {
    {"resnet18", "ResNet-18 (torchvision; basic blocks, BatchNormalization kept)",
     {CNN_DEFAULTS, [ZOO_WIDTH] = 64}, zoo_build_resnet18},
    {"resnet34", "ResNet-34 (torchvision; basic blocks, BatchNormalization kept)",
     {CNN_DEFAULTS, [ZOO_WIDTH] = 64}, zoo_build_resnet34},
    {"resnet50", "ResNet-50 (torchvision; bottleneck blocks, BatchNormalization kept)",
     {CNN_DEFAULTS, [ZOO_WIDTH] = 64}, zoo_build_resnet50},
    {"squeezenet", "SqueezeNet 1.1 (torchvision; fire modules, ceil-mode max pooling)",
     {CNN_DEFAULTS}, zoo_build_squeezenet},
    {"bert", "BERT encoder as exported from HuggingFace (decomposed LayerNorm and GELU, pooler)",
     {[ZOO_BATCH] = 1, [ZOO_LAYERS] = 2, [ZOO_HIDDEN] = 128, [ZOO_HEADS] = 2, [ZOO_SEQ] = 32,
      [ZOO_VOCAB] = 1000},
     zoo_build_bert},
    {"vit", "Vision Transformer (torchvision layout; pre-LN blocks with LayerNormalization)",
     {CNN_DEFAULTS, [ZOO_LAYERS] = 4, [ZOO_HIDDEN] = 192, [ZOO_HEADS] = 3, [ZOO_PATCH] = 16},
     zoo_build_vit},
};

const zoo_option *zoo_option_get(zoo_opt o)
{
    return (int)o >= 0 && o < ZOO_OPT_COUNT ? &options[o] : NULL;
}

zoo_opt zoo_option_find(const char *flag)
{
    for (int i = 0; i < ZOO_OPT_COUNT; i++)
        if (strcmp(options[i].flag, flag) == 0) return (zoo_opt)i;
    return ZOO_OPT_COUNT;
}

int zoo_model_count(void)
{
    return (int)(sizeof models / sizeof models[0]);
}

const zoo_model *zoo_model_at(int i)
{
    return i >= 0 && i < zoo_model_count() ? &models[i] : NULL;
}

const zoo_model *zoo_model_find(const char *name)
{
    for (int i = 0; i < zoo_model_count(); i++)
        if (strcmp(models[i].name, name) == 0) return &models[i];
    return NULL;
}
