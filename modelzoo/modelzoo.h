/*
 * modelzoo.h — public API of the modelzoo module: reference architectures
 * (torchvision ResNet and SqueezeNet, a HuggingFace-style BERT encoder, a
 * ViT, a HuggingFace-style GPT-2 decoder) built in-process as rlflow graphs with deterministic random weights,
 * for tests, benchmarks and the agent when no trained model is at hand. The
 * registry lists the models, the size options each one takes (with its
 * defaults) and the function that builds it; the `modelzoo` tool writes
 * them as ONNX files.
 *
 * A build returns XF_ERR_INVALID (or XF_ERR_SHAPE from shape inference)
 * when the sizes do not fit the architecture, with a message naming the
 * option or the node, so a caller can tell a usage error from a failure.
 */
#ifndef XF_MODELZOO_H
#define XF_MODELZOO_H

#include <stdint.h>

#include "ir/ir.h"

/* Size options, shared by every model that takes them. */
typedef enum xf_zoo_opt {
    XF_ZOO_BATCH = 0,
    XF_ZOO_IMAGE,   /* input height and width */
    XF_ZOO_CLASSES, /* classifier outputs */
    XF_ZOO_WIDTH,   /* base channel count (resnet) */
    XF_ZOO_LAYERS,  /* transformer blocks */
    XF_ZOO_HIDDEN,  /* transformer width */
    XF_ZOO_HEADS,   /* attention heads */
    XF_ZOO_SEQ,     /* sequence length (bert) */
    XF_ZOO_VOCAB,   /* token vocabulary (bert) */
    XF_ZOO_PATCH,   /* patch size (vit) */
    XF_ZOO_OPT_COUNT
} xf_zoo_opt;

/* Every size option takes an integer in [1, max]; the weights are further
 * bounded by what one ONNX file can hold (a build fails beyond that). */
typedef struct xf_zoo_option {
    const char *flag; /* "--batch" */
    const char *help; /* one line for LIST and --help */
    int64_t max;
} xf_zoo_option;

typedef struct xf_zoo_config {
    int64_t v[XF_ZOO_OPT_COUNT]; /* indexed by xf_zoo_opt; 0 for options the model does not take */
    uint64_t seed;               /* weights are a pure function of the config and the seed */
} xf_zoo_config;

typedef xf_status (*xf_zoo_build_fn)(const xf_zoo_config *c, xf_graph *g, xf_error *err);

typedef struct xf_zoo_model {
    const char *name;
    const char *summary;
    int64_t defaults[XF_ZOO_OPT_COUNT]; /* 0: the model does not take the option */
    xf_zoo_build_fn build;
} xf_zoo_model;

const xf_zoo_option *xf_modelzoo_option(xf_zoo_opt o);
/* The option spelled `flag` ("--image"), or XF_ZOO_OPT_COUNT when unknown. */
xf_zoo_opt xf_modelzoo_option_find(const char *flag);

int xf_modelzoo_model_count(void);
const xf_zoo_model *xf_modelzoo_model_at(int i);
/* NULL when no model has that name. */
const xf_zoo_model *xf_modelzoo_model_find(const char *name);

/* Fills c with m's defaults and seed 0. */
void xf_modelzoo_config_init(xf_zoo_config *c, const xf_zoo_model *m);
/* Builds m at the sizes of c into g (initialised here); on failure g is
 * left empty and the status says whether the sizes were at fault (see
 * above). The same config always gives the same graph. */
xf_status xf_modelzoo_build(const xf_zoo_model *m, const xf_zoo_config *c, xf_graph *g,
                            xf_error *err);
/* Number of float32 parameter elements (constants) of g. */
long long xf_modelzoo_param_count(const xf_graph *g);

#endif /* XF_MODELZOO_H */
