/*
 * squeezenet.c — torchvision's squeezenet1_1: conv3x3/2 + ReLU, then fire
 * modules (squeeze conv1x1 + ReLU feeding expand conv1x1 and conv3x3, each
 * + ReLU, concatenated on channels) between three ceil-mode max pools
 * 3x3/2, and the classifier Dropout, conv1x1 to the classes, ReLU, global
 * average pooling and flatten. The Dropout node is kept (PyTorch's eval
 * export drops it) so imports see one. Names follow torchvision's
 * features.N / classifier.N modules.
 */
#include <stdio.h>

#include "builder_internal.h"

static int conv_relu(zb *b, int x, const char *conv, const char *relu, int64_t out_ch, int k,
                     int stride, int pad)
{
    int y = zoo_conv(b, x, conv, out_ch, k, stride, pad, 1);
    return zoo_unary(b, XF_OP_RELU, y, relu);
}

static int fire(zb *b, int x, int index, int64_t squeeze, int64_t expand)
{
    char m[32], conv[64], relu[64];
    snprintf(m, sizeof m, "features.%d", index);
    int s = conv_relu(b, x, ZB_SUB(conv, m, "squeeze"), ZB_SUB(relu, m, "squeeze_activation"),
                      squeeze, 1, 1, 0);
    int in[2];
    in[0] = conv_relu(b, s, ZB_SUB(conv, m, "expand1x1"), ZB_SUB(relu, m, "expand1x1_activation"),
                      expand, 1, 1, 0);
    in[1] = conv_relu(b, s, ZB_SUB(conv, m, "expand3x3"), ZB_SUB(relu, m, "expand3x3_activation"),
                      expand, 3, 1, 1);
    xf_params p = xf_params_default();
    p.axis = 1;
    return zoo_node(b, XF_OP_CONCAT, &p, in, 2, ZB_SUB(conv, m, "concat"));
}

xf_status zoo_build_squeezenet(const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    /* squeezenet1_1's fire modules by feature index: squeeze, expand width. */
    static const struct {
        int index;
        int64_t squeeze, expand;
    } fires[8] = {{3, 16, 64},  {4, 16, 64},  {6, 32, 128}, {7, 32, 128},
                  {9, 48, 192}, {10, 48, 192}, {11, 64, 256}, {12, 64, 256}};
    zb b;
    zoo_init(&b, g, "squeezenet1_1", c->seed, err);
    int64_t in_dims[4] = {c->v[XF_ZOO_BATCH], 3, c->v[XF_ZOO_IMAGE], c->v[XF_ZOO_IMAGE]};
    int x = zoo_input(&b, "input", XF_F32, 4, in_dims);
    x = conv_relu(&b, x, "features.0", "features.1", 64, 3, 2, 0);
    x = zoo_maxpool(&b, x, "features.2", 3, 2, 0, 1);
    for (int i = 0; i < 8; i++) {
        x = fire(&b, x, fires[i].index, fires[i].squeeze, fires[i].expand);
        if (fires[i].index == 4 || fires[i].index == 7) {
            char name[32];
            snprintf(name, sizeof name, "features.%d", fires[i].index + 1);
            x = zoo_maxpool(&b, x, name, 3, 2, 0, 1);
        }
    }
    x = zoo_unary(&b, XF_OP_DROPOUT, x, "classifier.0");
    x = conv_relu(&b, x, "classifier.1", "classifier.2", c->v[XF_ZOO_CLASSES], 1, 1, 0);
    x = zoo_unary(&b, XF_OP_GLOBAL_AVGPOOL, x, "classifier.3");
    x = zoo_flatten(&b, x, "flatten");
    zoo_output(&b, x, "logits");
    return zoo_finish(&b);
}
