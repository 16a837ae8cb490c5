/*
 * resnet.c — torchvision's ResNet-18/34/50 (v1.5: the stride of a
 * bottleneck sits on its 3x3 conv). Stem conv7x7/2 + BN + ReLU + maxpool
 * 3x3/2 pad 1, four stages of basic or bottleneck blocks at widths W, 2W,
 * 4W, 8W (W = --width, 64 in torchvision) with a conv1x1 + BN downsample
 * where the shape changes, global average pooling, flatten and the fc
 * Gemm. Convolutions have no bias and every BatchNormalization is kept
 * (not folded into the conv as PyTorch's exporter does), so graph rewrites
 * have conv+BN pairs to work on. Names follow torchvision's modules.
 */
#include <stdio.h>

#include "builder_internal.h"


typedef struct resnet_spec {
    const char *name;
    int bottleneck;
    int blocks[4];
} resnet_spec;

static int conv_bn(zb *b, int x, const char *block, const char *conv, const char *bn,
                   int64_t out_ch, int k, int stride)
{
    char n[256];
    int y = zoo_conv(b, x, ZB_SUB(n, block, conv), out_ch, k, stride, k / 2, 0);
    return zoo_batchnorm(b, y, ZB_SUB(n, block, bn));
}

/* The identity, or conv1x1/stride + BN when the block changes the shape. */
static int shortcut(zb *b, int x, const char *block, int64_t out_ch, int stride)
{
    if (b->st != XF_OK) return -1;
    if (stride == 1 && zoo_shape(b, x)->dims[1] == out_ch) return x;
    return conv_bn(b, x, block, "downsample.0", "downsample.1", out_ch, 1, stride);
}

static int basic_block(zb *b, int x, const char *block, int64_t planes, int stride)
{
    char n[256];
    int y = conv_bn(b, x, block, "conv1", "bn1", planes, 3, stride);
    y = zoo_unary(b, XF_OP_RELU, y, ZB_SUB(n, block, "relu"));
    y = conv_bn(b, y, block, "conv2", "bn2", planes, 3, 1);
    y = zoo_binary(b, XF_OP_ADD, y, shortcut(b, x, block, planes, stride), ZB_SUB(n, block, "add"));
    return zoo_unary(b, XF_OP_RELU, y, ZB_SUB(n, block, "relu_1"));
}

static int bottleneck_block(zb *b, int x, const char *block, int64_t planes, int stride)
{
    char n[256];
    int y = conv_bn(b, x, block, "conv1", "bn1", planes, 1, 1);
    y = zoo_unary(b, XF_OP_RELU, y, ZB_SUB(n, block, "relu"));
    y = conv_bn(b, y, block, "conv2", "bn2", planes, 3, stride);
    y = zoo_unary(b, XF_OP_RELU, y, ZB_SUB(n, block, "relu_1"));
    y = conv_bn(b, y, block, "conv3", "bn3", 4 * planes, 1, 1);
    y = zoo_binary(b, XF_OP_ADD, y, shortcut(b, x, block, 4 * planes, stride),
                  ZB_SUB(n, block, "add"));
    return zoo_unary(b, XF_OP_RELU, y, ZB_SUB(n, block, "relu_2"));
}

static xf_status build(const resnet_spec *spec, const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    zb b;
    zoo_init(&b, g, spec->name, c->seed, err);
    int64_t width = c->v[XF_ZOO_WIDTH];
    int64_t in_dims[4] = {c->v[XF_ZOO_BATCH], 3, c->v[XF_ZOO_IMAGE], c->v[XF_ZOO_IMAGE]};
    int x = zoo_input(&b, "input", XF_F32, 4, in_dims);
    x = zoo_conv(&b, x, "conv1", width, 7, 2, 3, 0);
    x = zoo_batchnorm(&b, x, "bn1");
    x = zoo_unary(&b, XF_OP_RELU, x, "relu");
    x = zoo_maxpool(&b, x, "maxpool", 3, 2, 1, 0);
    for (int stage = 0; stage < 4; stage++) {
        int64_t planes = width << stage;
        for (int i = 0; i < spec->blocks[stage]; i++) {
            char block[64];
            snprintf(block, sizeof block, "layer%d.%d", stage + 1, i);
            int stride = stage > 0 && i == 0 ? 2 : 1;
            x = spec->bottleneck ? bottleneck_block(&b, x, block, planes, stride)
                                 : basic_block(&b, x, block, planes, stride);
        }
    }
    x = zoo_unary(&b, XF_OP_GLOBAL_AVGPOOL, x, "avgpool");
    x = zoo_flatten(&b, x, "flatten");
    x = zoo_gemm(&b, x, "fc", c->v[XF_ZOO_CLASSES]);
    zoo_output(&b, x, "logits");
    return zoo_finish(&b);
}

xf_status zoo_build_resnet18(const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    static const resnet_spec spec = {"resnet18", 0, {2, 2, 2, 2}};
    return build(&spec, c, g, err);
}

xf_status zoo_build_resnet34(const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    static const resnet_spec spec = {"resnet34", 0, {3, 4, 6, 3}};
    return build(&spec, c, g, err);
}

xf_status zoo_build_resnet50(const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    static const resnet_spec spec = {"resnet50", 1, {3, 4, 6, 3}};
    return build(&spec, c, g, err);
}
