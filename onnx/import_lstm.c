/*
 * import_lstm.c — what the interpreter needs to run an opaque LSTM node:
 * hidden_size, direction, layout, input_forget and clip decoded into
 * xf_lstm_attrs (ir/ops_lstm.c runs it). activations may only spell out
 * the defaults (Sigmoid, Tanh, Tanh per direction); any other list leaves
 * the node without a kernel, which is logged: it still imports, exports
 * and is optimised around, only the interpreter cannot run it.
 */
#include "import_internal.h"

#include <string.h>

/* Whether the activations attribute, if any, is the default list. */
static int default_activations(const Onnx__AttributeProto *a, int dirs)
{
    if (!a) return 1;
    static const char *const want[3] = {"Sigmoid", "Tanh", "Tanh"};
    if (a->n_strings != (size_t)(3 * dirs)) return 0;
    for (size_t i = 0; i < a->n_strings; i++) {
        const char *w = want[i % 3];
        if (a->strings[i].len != strlen(w) || memcmp(a->strings[i].data, w, strlen(w)) != 0)
            return 0;
    }
    return 1;
}

xf_status ox_lstm_attrs(imp_state *st, xf_opaque *o, xf_error *err)
{
    int64_t hidden, layout, input_forget;
    float clip;
    const char *dir;
    if (ox_attr_int(st, "hidden_size", -1, &hidden, err) != XF_OK ||
        ox_attr_int(st, "layout", 0, &layout, err) != XF_OK ||
        ox_attr_int(st, "input_forget", 0, &input_forget, err) != XF_OK ||
        ox_attr_float(st, "clip", 0.0f, &clip, err) != XF_OK ||
        ox_attr_string(st, "direction", "forward", &dir, err) != XF_OK)
        return err->code;
    int direction = strcmp(dir, "forward") == 0   ? 0
                    : strcmp(dir, "reverse") == 0 ? 1
                    : strcmp(dir, "bidirectional") == 0 ? 2
                                                        : -1;
    const char *why = NULL;
    if (hidden < 1) why = "hidden_size is missing";
    else if (direction < 0) why = "direction is not forward, reverse or bidirectional";
    else if (layout != 0 && layout != 1) why = "layout is not 0 or 1";
    else if (!default_activations(ox_attr(st->node, "activations"), direction == 2 ? 2 : 1))
        why = "activations other than the defaults (Sigmoid, Tanh, Tanh)";
    if (why) return ox_no_kernel(st, o, why, err);
    o->lstm.hidden_size = hidden;
    o->lstm.direction = direction;
    o->lstm.layout = (int)layout;
    o->lstm.input_forget = input_forget != 0;
    o->lstm.clip = clip > 0.0f ? clip : 0.0f;
    o->kernel = XF_OPAQUE_LSTM;
    return XF_OK;
}
