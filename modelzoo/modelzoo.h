/*
 * zoo.h — the modelzoo registry: the models `modelzoo` can write, the
 * size options each one takes (with its defaults) and the function that
 * builds it as an rlflow graph with deterministic random weights.
 *
 * A model's builder fills an empty graph and returns XF_ERR_INVALID (or
 * XF_ERR_SHAPE from shape inference) when the sizes do not fit the
 * architecture, with a message naming the option or the node, so the CLI
 * can tell a usage error from a failure to write.
 */
#ifndef XF_MODELZOO_ZOO_H
#define XF_MODELZOO_ZOO_H

#include <stdint.h>

#include "ir/ir.h"

/* Size options, shared by every model that takes them. */
typedef enum zoo_opt {
    ZOO_BATCH = 0,
    ZOO_IMAGE,   /* input height and width */
    ZOO_CLASSES, /* classifier outputs */
    ZOO_WIDTH,   /* base channel count (resnet) */
    ZOO_LAYERS,  /* transformer blocks */
    ZOO_HIDDEN,  /* transformer width */
    ZOO_HEADS,   /* attention heads */
    ZOO_SEQ,     /* sequence length (bert) */
    ZOO_VOCAB,   /* token vocabulary (bert) */
    ZOO_PATCH,   /* patch size (vit) */
    ZOO_OPT_COUNT
} zoo_opt;

/* Every size option takes an integer in [1, max]; the weights are further
 * bounded by what one ONNX file can hold (see builder.h). */
typedef struct zoo_option {
    const char *flag; /* "--batch" */
    const char *help; /* one line for LIST and --help */
    int64_t max;
} zoo_option;

typedef struct zoo_config {
    int64_t v[ZOO_OPT_COUNT]; /* indexed by zoo_opt; 0 for options the model does not take */
    uint64_t seed;            /* weights are a pure function of the config and the seed */
} zoo_config;

typedef xf_status (*zoo_build_fn)(const zoo_config *c, xf_graph *g, xf_error *err);

typedef struct zoo_model {
    const char *name;
    const char *summary;
    int64_t defaults[ZOO_OPT_COUNT]; /* 0: the model does not take the option */
    zoo_build_fn build;
} zoo_model;

const zoo_option *zoo_option_get(zoo_opt o);
/* The option spelled `flag` ("--image"), or ZOO_OPT_COUNT when unknown. */
zoo_opt zoo_option_find(const char *flag);

int zoo_model_count(void);
const zoo_model *zoo_model_at(int i);
/* NULL when no model has that name. */
const zoo_model *zoo_model_find(const char *name);

/* Builders (resnet.c, squeezenet.c, bert.c, vit.c). */
xf_status zoo_build_resnet18(const zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_resnet34(const zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_resnet50(const zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_squeezenet(const zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_bert(const zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_vit(const zoo_config *c, xf_graph *g, xf_error *err);

#endif /* XF_MODELZOO_ZOO_H */
