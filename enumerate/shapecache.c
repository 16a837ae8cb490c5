/*
 * shapecache.c — interned shapes and the memo of variant applicability
 * (see shapecache_internal.h), two xf_htab tables, and the masks of the
 * variants that apply to a pair of shapes. Each worker owns one, so there
 * is no locking; the memo only grows, and when it is full it is cleared and
 * refilled.
 */
#include "shapecache_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_shape(const xf_shape *s)
{
    uint64_t h = en_fp_mix(0x5A9Eu, (uint64_t)s->rank);
    for (int i = 0; i < s->rank; i++) h = en_fp_mix(h, (uint64_t)s->dims[i]);
    return h;
}

xf_status en_shapecache_init(shapecache *sc, const xf_enum_config *cfg, xf_error *err)
{
    memset(sc, 0, sizeof *sc);
    sc->cfg = cfg;
    sc->fast = xf_calloc((size_t)cfg->n_ops * SC_FAST_IDS * SC_FAST_IDS, sizeof *sc->fast);
    size_t words = (size_t)en_sc_var_words(sc);
    sc->one_masks = xf_calloc(SC_FAST_IDS * words, sizeof *sc->one_masks);
    sc->two_masks = xf_calloc(SC_FAST_IDS * SC_FAST_IDS * words, sizeof *sc->two_masks);
    sc->one_known = xf_calloc(SC_FAST_IDS, 1);
    sc->two_known = xf_calloc(SC_FAST_IDS * SC_FAST_IDS, 1);
    if (!sc->fast || !sc->one_masks || !sc->two_masks || !sc->one_known || !sc->two_known ||
        xf_htab_reserve(&sc->index, SC_MAX_SHAPES, NULL) != XF_OK ||
        xf_htab_reserve(&sc->memo, SC_MEMO_MAX, NULL) != XF_OK) {
        en_shapecache_free(sc);
        return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for the shape cache");
    }
    return XF_OK;
}

void en_shapecache_free(shapecache *sc)
{
    xf_htab_free(&sc->index);
    xf_htab_free(&sc->memo);
    xf_free(sc->fast);
    xf_free(sc->one_masks);
    xf_free(sc->two_masks);
    xf_free(sc->one_known);
    xf_free(sc->two_known);
    sc->fast = NULL;
    sc->one_masks = sc->two_masks = NULL;
    sc->one_known = sc->two_known = NULL;
}

/* Both tables were reserved at their largest, so adding never allocates. */
int en_sc_intern(shapecache *sc, const xf_shape *s)
{
    uint64_t h = hash_shape(s);
    size_t pos = XF_HTAB_START;
    for (const uint64_t *id; (id = xf_htab_next(&sc->index, xf_htab_key(h), &pos));)
        if (sc->shape_hash[*id] == h && xf_shape_equal(&sc->shapes[*id], s)) return (int)*id;
    if (sc->n_shapes == SC_MAX_SHAPES) return -1;
    int id = sc->n_shapes++;
    sc->shapes[id] = *s;
    sc->shape_hash[id] = h;
    xf_htab_add(&sc->index, xf_htab_key(h), (uint64_t)id, NULL);
    return id;
}

static int apply_memo(shapecache *sc, int var, int n_in, const int *in_ids, int *n_out,
                      int *out_ids);

/* The slot of (var, in_ids) in the direct table; NULL when an id is too large. */
static uint32_t *fast_slot(const shapecache *sc, int var, int n_in, const int *in_ids)
{
    int a = n_in > 0 ? in_ids[0] : 0, b = n_in > 1 ? in_ids[1] : 0;
    if (a >= SC_FAST_IDS || b >= SC_FAST_IDS) return NULL;
    return &sc->fast[((size_t)var * SC_FAST_IDS + (size_t)a) * SC_FAST_IDS + (size_t)b];
}

int en_sc_apply(shapecache *sc, int var, int n_in, const int *in_ids, int *n_out, int *out_ids)
{
    /* the direct table packs at most two output ids; a three-way split's
     * results live in the memo only */
    uint32_t *fast = sc->cfg->ops[var].op == XF_OP_SPLIT && sc->cfg->ops[var].params.n_split > 2
                         ? NULL
                         : fast_slot(sc, var, n_in, in_ids);
    if (fast && *fast) {
        if (!(*fast & 2)) return 0;
        *n_out = (int)(*fast >> 2 & 3);
        for (int k = 0; k < *n_out; k++) out_ids[k] = (int)(*fast >> (4 + 12 * k) & 0xFFF);
        return 1;
    }
    int ok = apply_memo(sc, var, n_in, in_ids, n_out, out_ids);
    if (fast) {
        *fast = 1;
        if (ok) {
            *fast |= 2u | (uint32_t)*n_out << 2;
            for (int k = 0; k < *n_out; k++) *fast |= (uint32_t)out_ids[k] << (4 + 12 * k);
        }
    }
    return ok;
}

/* The hashed memo behind the direct table. */
static int apply_memo(shapecache *sc, int var, int n_in, const int *in_ids, int *n_out, int *out_ids)
{
    uint64_t key = en_fp_mix(0xA991u, (uint64_t)var);
    for (int i = 0; i < n_in; i++) key = en_fp_mix(key, (uint64_t)in_ids[i]);
    key = key ? key : 1;
    const uint64_t *hit = xf_htab_get(&sc->memo, key);
    uint64_t e;
    if (hit) {
        e = *hit;
    } else {
        if (sc->memo.n + 1 > SC_MEMO_MAX) xf_htab_clear(&sc->memo);
        xf_shape in_sh[MAX_NODE_INPUTS], out_sh[NODE_OUTS];
        for (int i = 0; i < n_in; i++) in_sh[i] = sc->shapes[in_ids[i]];
        xf_params p;
        int no = 0;
        e = en_instantiate(sc->cfg, &sc->cfg->ops[var], n_in, in_sh, &p, &no, out_sh) ? 1 : 0;
        e |= (uint64_t)no << 8;
        for (int k = 0; (e & 1) && k < no; k++) {
            int id = en_sc_intern(sc, &out_sh[k]);
            if (id < 0) e &= ~(uint64_t)1;
            e |= (uint64_t)(uint16_t)id << (16 + 16 * k);
        }
        xf_htab_add(&sc->memo, key, e, NULL);
    }
    if (!(e & 1)) return 0;
    *n_out = (int)(e >> 8 & 0xFF);
    for (int k = 0; k < *n_out; k++) out_ids[k] = (int)(int16_t)(e >> (16 + 16 * k));
    return 1;
}

int en_sc_var_words(const shapecache *sc)
{
    return (sc->cfg->n_ops + 63) / 64;
}

const uint64_t *en_sc_var_mask(shapecache *sc, int n_in, const int *in_ids)
{
    int words = en_sc_var_words(sc);
    int a = in_ids[0], b = n_in > 1 ? in_ids[1] : 0;
    uint64_t *m = sc->scratch;
    uint8_t *known = NULL;
    if (a < SC_FAST_IDS && b < SC_FAST_IDS) {
        size_t at = n_in > 1 ? (size_t)a * SC_FAST_IDS + (size_t)b : (size_t)a;
        m = (n_in > 1 ? sc->two_masks : sc->one_masks) + at * (size_t)words;
        known = (n_in > 1 ? sc->two_known : sc->one_known) + at;
        if (*known) return m;
    }
    memset(m, 0, sizeof *m * (size_t)words);
    for (int v = 0; v < sc->cfg->n_ops; v++) {
        int n_out, out_ids[NODE_OUTS];
        if (en_var_arity(&sc->cfg->ops[v]) == n_in && en_sc_apply(sc, v, n_in, in_ids, &n_out, out_ids))
            m[v / 64] |= 1ull << (v % 64);
    }
    if (known) *known = 1;
    return m;
}
