/*
 * fake_ort.c — a shared library that looks like ONNX Runtime to the loader
 * (it exports OrtGetApiBase) but whose C API table has every entry NULL:
 * test_target.c checks that loading it is refused with a message instead
 * of crashing at the first call, and that a truncated copy of it is refused
 * before dlopen maps it.
 */
#include <stdint.h>

static const void *table[256];

static const void *get_api(uint32_t version)
{
    (void)version;
    return table;
}

static const char *version_string(void)
{
    return "0.0-fake";
}

static const struct {
    const void *(*GetApi)(uint32_t);
    const char *(*GetVersionString)(void);
} base = {get_api, version_string};

const void *OrtGetApiBase(void);
const void *OrtGetApiBase(void)
{
    return &base;
}
