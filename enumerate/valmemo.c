/*
 * valmemo.c — the per-worker memo of node output hashes (valmemo_internal.h): a
 * direct-mapped table indexed by a mix of the variant and the input
 * value hashes.
 */
#include "valmemo_internal.h"

#include "fpeval_internal.h"

#include <string.h>

xf_status en_valmemo_init(valmemo *m, int log2_slots, xf_error *err)
{
    memset(m, 0, sizeof *m);
    size_t n = (size_t)1 << log2_slots;
    m->slots = xf_calloc(n, sizeof *m->slots);
    if (!m->slots) return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for a memo of %zu", n);
    en_advise_huge(m->slots, n * sizeof *m->slots); /* probed at random */
    m->mask = n - 1;
    return XF_OK;
}

void en_valmemo_free(valmemo *m)
{
    xf_free(m->slots);
    memset(m, 0, sizeof *m);
}

static vm_entry *slot(const valmemo *m, int var, int n_in, const uint64_t *in)
{
    uint64_t h = en_fp_mix(0x5A1A3Eu, (uint64_t)var);
    for (int i = 0; i < n_in; i++) h = en_fp_mix(h, in[i]);
    return &m->slots[h & m->mask];
}

void en_valmemo_prefetch(const valmemo *m, int var, int n_in, const uint64_t *in)
{
    __builtin_prefetch(slot(m, var, n_in, in));
}

int en_valmemo_get(valmemo *m, int var, int n_in, const uint64_t *in, uint64_t *out)
{
    const vm_entry *e = slot(m, var, n_in, in);
    int hit = e->var == (uint32_t)var + 1 && e->n_in == (uint32_t)n_in;
    for (int i = 0; hit && i < n_in; i++) hit = e->in[i] == in[i];
    if (!hit) {
        m->misses++;
        return 0;
    }
    m->hits++;
    for (int k = 0; k < NODE_OUTS; k++) out[k] = e->out[k];
    return 1;
}

void en_valmemo_put(valmemo *m, int var, int n_in, const uint64_t *in, const uint64_t *out)
{
    vm_entry *e = slot(m, var, n_in, in);
    memset(e, 0, sizeof *e);
    for (int i = 0; i < n_in; i++) e->in[i] = in[i];
    for (int k = 0; k < NODE_OUTS; k++) e->out[k] = out[k];
    e->var = (uint32_t)var + 1;
    e->n_in = (uint32_t)n_in;
}
