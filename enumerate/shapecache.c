/*
 * shapecache.c — interned shapes and the memo of variant applicability
 * (see shapecache.h). Each worker owns one, so there is no locking; the
 * memo only grows, and when it is full it is cleared and refilled.
 */
#include "shapecache.h"

#include <stdlib.h>
#include <string.h>

#define INDEX_SLOTS (SC_MAX_SHAPES * 2)

static uint64_t hash_shape(const xf_shape *s)
{
    uint64_t h = fp_mix(0x5A9Eu, (uint64_t)s->rank);
    for (int i = 0; i < s->rank; i++) h = fp_mix(h, (uint64_t)s->dims[i]);
    return h;
}

xf_status shapecache_init(shapecache *sc, const xf_enum_config *cfg, xf_error *err)
{
    memset(sc, 0, sizeof *sc);
    sc->cfg = cfg;
    sc->index = xf_malloc(sizeof(int16_t) * INDEX_SLOTS);
    sc->memo_cap = 1 << 16;
    sc->memo = xf_calloc(sc->memo_cap, sizeof *sc->memo);
    if (!sc->index || !sc->memo) {
        shapecache_free(sc);
        return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for the shape cache");
    }
    for (int i = 0; i < INDEX_SLOTS; i++) sc->index[i] = -1;
    return XF_OK;
}

void shapecache_free(shapecache *sc)
{
    xf_free(sc->index);
    xf_free(sc->memo);
    sc->index = NULL;
    sc->memo = NULL;
}

int sc_intern(shapecache *sc, const xf_shape *s)
{
    uint64_t h = hash_shape(s);
    for (size_t i = (size_t)h & (INDEX_SLOTS - 1);; i = (i + 1) & (INDEX_SLOTS - 1)) {
        int id = sc->index[i];
        if (id < 0) {
            if (sc->n_shapes == SC_MAX_SHAPES) return -1;
            id = sc->n_shapes++;
            sc->shapes[id] = *s;
            sc->shape_hash[id] = h;
            sc->index[i] = (int16_t)id;
            return id;
        }
        if (sc->shape_hash[id] == h && xf_shape_equal(&sc->shapes[id], s)) return id;
    }
}

static sc_entry *memo_slot(shapecache *sc, uint64_t key)
{
    for (size_t i = (size_t)(key >> 17) & (sc->memo_cap - 1);; i = (i + 1) & (sc->memo_cap - 1))
        if (sc->memo[i].key == key || sc->memo[i].key == 0) return &sc->memo[i];
}

int sc_apply(shapecache *sc, int var, int n_in, const int *in_ids, int *n_out, int *out_ids)
{
    uint64_t key = fp_mix(0xA991u, (uint64_t)var);
    for (int i = 0; i < n_in; i++) key = fp_mix(key, (uint64_t)in_ids[i]);
    key = key ? key : 1;
    sc_entry *e = memo_slot(sc, key);
    if (e->key == 0) {
        if ((sc->memo_n + 1) * 2 > sc->memo_cap) {
            memset(sc->memo, 0, sc->memo_cap * sizeof *sc->memo);
            sc->memo_n = 0;
            e = memo_slot(sc, key);
        }
        xf_shape in_sh[MAX_NODE_INPUTS], out_sh[2];
        for (int i = 0; i < n_in; i++) in_sh[i] = sc->shapes[in_ids[i]];
        xf_params p;
        int no = 0;
        e->key = key;
        e->valid = (int8_t)enum_instantiate(sc->cfg, &sc->cfg->ops[var], n_in, in_sh, &p, &no,
                                            out_sh);
        e->n_out = (int8_t)no;
        for (int k = 0; e->valid && k < no; k++) {
            int id = sc_intern(sc, &out_sh[k]);
            if (id < 0) e->valid = 0;
            e->out[k] = (int16_t)id;
        }
        sc->memo_n++;
    }
    if (!e->valid) return 0;
    *n_out = e->n_out;
    for (int k = 0; k < e->n_out; k++) out_ids[k] = e->out[k];
    return 1;
}
