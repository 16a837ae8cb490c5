/*
 * env.c — the optimisation environment: a working graph, the locations of
 * every rule in it (the masks), its cost, and steps that apply one
 * (rule, location) at a time.
 *
 * State after every step: the graph, its xf_graph_index, the match list
 * (xf_match_all, capped at max_locations per rule), per-node costs through
 * the cost memo (xf_costmemo in search.h: a step re-costs only configurations it has not
 * seen, from memory), the total cost and the structural hash. A new state is
 * built beside the current one and swapped in only when complete, so a
 * failed step leaves the environment as it was. A step's state takes the
 * matching keys and costs of the nodes the rewrite left alone over from the
 * current state (xf_match_apply_from); matching itself runs in full.
 *
 * Reward of a valid step, in percent of the prepared model's cost:
 *   reward = α·(prev_ms − new_ms)/initial_ms·100 + β·(prev_bytes − new_bytes)/initial_bytes·100
 * with α = reward_runtime and β = reward_memory. The no-op ends the episode
 * with reward 0; an invalid action (out of range, masked off, or a rewrite
 * that fails) gets invalid_penalty and leaves the graph unchanged. Every
 * call to step counts towards max_steps, valid or not.
 *
 * With a target runtime (opt.target, every opt.target_every valid steps)
 * the reward also gets a sparse term from real latency: the current graph
 * is finished as it would be written and timed there (a short alternating
 * run, see TARGET_ROUNDS), and the step gains
 *   reward_target·(last_ms − new_ms)/initial_ms·100,
 * last_ms being the episode's previous measurement (the prepared model's
 * latency after a reset). A graph the runtime refuses gets no such term.
 */
#include "agent/search/search.h"
#include "agent/search/env_internal.h"

#include <stdlib.h>
#include <string.h>

struct xf_env {
    const xf_ruleset *rs;
    xf_cost_model *cm;
    xf_env_options opt;
    int n_xfers;
    xf_costmemo *memo;
    xf_graph prepared;
    xf_prepare_stats prep; /* what preparing the model changed */
    xf_op_cost initial;
    int steps;
    double target_initial_ms, target_last_ms; /* sparse reward from the target */
    int64_t target_valid_steps;

    /* Two state slots: `cur` is the current one, the other is where the next
     * state is built (its buffers are reused from step to step). The index
     * points at its slot's graph, so graphs never move between slots. */
    int cur;
    struct env_state {
        xf_graph g;
        xf_graph_index *ix;
        xf_match_list ml;
        xf_op_cost *node_cost;
        uint8_t *gelu_zone; /* xf_costmemo_gelu_zone's marks, node_cap long */
        int *zone_queue;    /* its scratch, node_cap long */
        int node_cap, zone_marked;
        xf_op_cost cost;
        uint64_t hash;
    } slot[2];
    int *from;        /* xf_match_apply_from's node origins for the next state */
    int from_cap;
    uint8_t *mask; /* n_xfers + 1 */
    xf_env_profile prof;
};

typedef struct env_state env_state;

/* Short timing for the sparse reward: a few rounds of a few ms each. */
#define TARGET_ROUNDS 5
#define TARGET_ROUND_MS 10.0

/* Latency of graph g in the target, finished as written. XF_OK with
 * *ms = 0 when the runtime refuses the graph (logged). */
static xf_status target_latency(xf_env *e, const xf_graph *g, double *ms, xf_error *err)
{
    double t0 = xf_clock_now();
    xf_graph fin;
    xf_finish_stats fs;
    xf_error lerr;
    xf_error_clear(&lerr);
    *ms = 0;
    xf_status st = xf_agent_finish(g, &fin, &fs, &lerr);
    if (!st) {
        xf_target_timing_options to;
        memset(&to, 0, sizeof to);
        to.rounds = TARGET_ROUNDS;
        to.round_ms = TARGET_ROUND_MS;
        double noise = 0;
        st = xf_target_latency(e->opt.target, &fin, &to, ms, &noise, &lerr);
        xf_graph_free(&fin);
    }
    e->prof.target += xf_clock_now() - t0;
    e->prof.target_runs++;
    if (st == XF_ERR_NOMEM) {
        if (err) *err = lerr;
        return st;
    }
    if (st) xf_log(XF_LOG_WARN, "environment: the target could not time a graph: %s", lerr.msg);
    return XF_OK;
}


static env_state *cur_state(xf_env *e)
{
    return &e->slot[e->cur];
}

static const env_state *cur_state_c(const xf_env *e)
{
    return &e->slot[e->cur];
}

/* Builds the state for graph *ng in the spare slot (taking *ng over, which
 * is left empty) and makes it current. from (NULL: none) says which node of
 * the current graph each node of *ng copies (xf_match_apply_from): their
 * keys and costs are taken over. hash (NULL: compute it) is *ng's
 * xf_graph_hash_mode(XF_HASH_IDENTITY) when the caller has it. On failure the current state
 * is untouched and the spare slot's graph is freed. */
static xf_status load_state(xf_env *e, xf_graph *ng, const int *from, const uint64_t *hash,
                            xf_error *err)
{
    const env_state *p = &e->slot[e->cur];
    env_state *s = &e->slot[1 - e->cur];
    double t_free = xf_clock_now();
    xf_graph_free(&s->g);
    xf_graph_index_free(s->ix);
    s->ix = NULL;
    s->g = *ng;
    xf_graph_init(ng);

    double t0 = xf_clock_now();
    e->prof.release += t0 - t_free;
    xf_status st = xf_graph_index_build_from(&s->g, p->ix, from, &s->ix, err);
    if (!st && s->node_cap < s->g.n_nodes) {
        int cap = s->g.n_nodes + s->g.n_nodes / 2 + 16;
        xf_op_cost *nc = xf_realloc(s->node_cost, (size_t)cap * sizeof *nc);
        if (nc) s->node_cost = nc;
        uint8_t *zone = nc ? xf_realloc(s->gelu_zone, (size_t)cap) : NULL;
        if (zone) s->gelu_zone = zone;
        int *queue = zone ? xf_realloc(s->zone_queue, (size_t)cap * sizeof *queue) : NULL;
        if (queue) s->zone_queue = queue;
        if (!queue) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory costing a graph");
        else s->node_cap = cap;
    }
    double t1 = xf_clock_now();
    if (!st)
        st = xf_costmemo_graph_from(e->memo, &s->g, s->ix, &p->g, p->ix, p->node_cost, from,
                                    s->node_cost, &s->cost, err);
    if (!st) s->zone_marked = xf_costmemo_gelu_zone(e->memo, &s->g, s->ix, s->gelu_zone, s->zone_queue);
    double t2 = xf_clock_now();
    if (!st) st = xf_match_all(e->rs, &s->g, s->ix, e->opt.max_locations, &s->ml, err);
    if (!st && s->ml.n_rules != e->n_xfers)
        st = XF_FAIL(err, XF_ERR_INTERNAL, "match list has %d rules, the rule set %d",
                     s->ml.n_rules, e->n_xfers);
    double t3 = xf_clock_now();
    if (!st && hash) s->hash = *hash;
    else if (!st) st = xf_graph_hash_checked(&s->g, XF_HASH_IDENTITY, &s->hash, err);
    double t4 = xf_clock_now();
    if (st) {
        xf_graph_index_free(s->ix);
        s->ix = NULL;
        xf_graph_free(&s->g);
        return st;
    }
    e->prof.index += t1 - t0;
    e->prof.cost += t2 - t1;
    e->prof.match += t3 - t2;
    e->prof.hash += t4 - t3;
    e->prof.loads++;
    e->cur = 1 - e->cur;
    for (int r = 0; r < e->n_xfers; r++)
        e->mask[r] = (uint8_t)(s->ml.start[r + 1] > s->ml.start[r]);
    e->mask[e->n_xfers] = 1;
    return XF_OK;
}

/* xf_env_create when model is set (it is prepared here), else
 * xf_env_create_prepared (*prepared taken over, stats copied). */
static xf_status env_create(const xf_ruleset *rs, xf_cost_model *cm, const xf_graph *model,
                            xf_graph *prepared, const xf_prepare_stats *stats,
                            const xf_env_options *opt, xf_env **out, xf_error *err)
{
    *out = NULL;
    if (!rs || !cm || (!model && !prepared)) {
        if (prepared) xf_graph_free(prepared);
        return XF_FAIL(err, XF_ERR_INVALID, "environment: rule set, cost model and model are "
                                            "all required");
    }
    xf_env_options o = opt ? *opt : xf_env_options_default();
    if (o.max_locations < 1 || o.max_steps < 1) {
        if (prepared) xf_graph_free(prepared);
        return XF_FAIL(err, XF_ERR_INVALID,
                       "environment: max_locations (%d) and max_steps (%d) must be >= 1",
                       o.max_locations, o.max_steps);
    }
    xf_env *e = xf_calloc(1, sizeof *e);
    if (!e) {
        if (prepared) xf_graph_free(prepared);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating the environment");
    }
    e->rs = rs;
    e->cm = cm;
    e->opt = o;
    e->n_xfers = xf_ruleset_count(rs);
    xf_graph_init(&e->prepared);
    if (!model) {
        e->prepared = *prepared;
        xf_graph_init(prepared);
        if (stats) e->prep = *stats;
    }
    for (int i = 0; i < 2; i++) {
        xf_graph_init(&e->slot[i].g);
        xf_match_list_init(&e->slot[i].ml);
    }
    xf_status st = XF_OK;
    e->mask = xf_calloc((size_t)e->n_xfers + 1, 1);
    if (!e->mask) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating the environment");
    if (!st) st = xf_costmemo_create(cm, &e->memo, err);
    if (!st) xf_costmemo_use_fused(e->memo, o.fused);
    if (!st) xf_costmemo_set_layout(e->memo, o.layout_view_ms, o.layout_gbps);
    if (!st && model) st = xf_agent_prepare(model, &o.prepare, &e->prepared, &e->prep, err);
    if (!st) st = xf_env_reset(e, err);
    if (st) {
        xf_error_prefix(err, "creating the environment");
        xf_env_free(e);
        return st;
    }
    e->initial = cur_state(e)->cost;
    if (e->opt.target && e->opt.target_every > 0) {
        st = target_latency(e, &cur_state(e)->g, &e->target_initial_ms, err);
        if (st) {
            xf_error_prefix(err, "creating the environment");
            xf_env_free(e);
            return st;
        }
        e->target_last_ms = e->target_initial_ms;
    }
    *out = e;
    return XF_OK;
}

xf_status xf_env_create(const xf_ruleset *rs, xf_cost_model *cm, const xf_graph *model,
                        const xf_env_options *opt, xf_env **out, xf_error *err)
{
    return env_create(rs, cm, model, NULL, NULL, opt, out, err);
}

xf_status xf_env_create_prepared(const xf_ruleset *rs, xf_cost_model *cm, xf_graph *prepared,
                                 const xf_prepare_stats *stats, const xf_env_options *opt,
                                 xf_env **out, xf_error *err)
{
    return env_create(rs, cm, NULL, prepared, stats, opt, out, err);
}

void xf_env_free(xf_env *e)
{
    if (!e) return;
    for (int i = 0; i < 2; i++) {
        xf_graph_index_free(e->slot[i].ix);
        xf_graph_free(&e->slot[i].g);
        xf_match_list_free(&e->slot[i].ml);
        xf_free(e->slot[i].node_cost);
        xf_free(e->slot[i].gelu_zone);
        xf_free(e->slot[i].zone_queue);
    }
    xf_graph_free(&e->prepared);
    xf_costmemo_free(e->memo);
    xf_free(e->from);
    xf_free(e->mask);
    xf_free(e);
}

xf_status xf_env_cost_graph(xf_env *e, const xf_graph *g, double *ms, xf_error *err)
{
    xf_graph_index *ix = NULL;
    xf_op_cost c;
    *ms = 0;
    xf_status st = xf_graph_index_build(g, &ix, err);
    if (!st) st = xf_costmemo_graph(e->memo, g, ix, NULL, &c, err);
    if (!st) *ms = c.ms;
    xf_graph_index_free(ix);
    return st;
}

xf_status xf_env_reset(xf_env *e, xf_error *err)
{
    xf_graph g;
    xf_status st = xf_graph_clone_shared(&e->prepared, &g, err);
    if (!st) st = load_state(e, &g, NULL, NULL, err);
    if (!st) {
        e->steps = 0;
        e->target_last_ms = e->target_initial_ms;
    }
    return st;
}

xf_status search_env_adopt_graph(xf_env *e, xf_graph *g, const uint64_t *hash, xf_error *err)
{
    return load_state(e, g, NULL, hash, err);
}

xf_status xf_env_set_graph(xf_env *e, const xf_graph *g, xf_error *err)
{
    xf_graph copy;
    xf_status st = xf_graph_clone_shared(g, &copy, err);
    if (!st) st = load_state(e, &copy, NULL, NULL, err);
    return st;
}

int xf_action_skippable(xf_status st)
{
    return st != XF_ERR_NOMEM && st != XF_ERR_IO && st != XF_ERR_INTERNAL;
}

static void describe_current(const xf_env *e, xf_env_step_result *r)
{
    const env_state *s = cur_state_c(e);
    r->cost_ms = s->cost.ms;
    r->bytes = s->cost.bytes;
    r->hash = s->hash;
    r->done = e->steps >= e->opt.max_steps || s->ml.n == 0; /* no rule has a location */
}

static xf_status invalid_step(xf_env *e, int xfer, int location, const char *why,
                              xf_env_step_result *r)
{
    xf_log(XF_LOG_DEBUG, "environment: action (%d, %d) invalid: %s", xfer, location, why);
    r->valid = 0;
    r->reward = e->opt.invalid_penalty;
    describe_current(e, r);
    return XF_OK;
}

xf_status xf_env_step(xf_env *e, int xfer, int location, xf_env_step_result *r, xf_error *err)
{
    memset(r, 0, sizeof *r);
    e->steps++;
    if (xfer == e->n_xfers) {
        r->valid = 1;
        describe_current(e, r);
        r->done = 1;
        return XF_OK;
    }
    const xf_match *m = xf_env_location(e, xfer, location);
    if (!m) return invalid_step(e, xfer, location, "not in the masks", r);

    const env_state *s = cur_state(e);
    double prev_ms = s->cost.ms, prev_bytes = s->cost.bytes;
    xf_graph ng;
    xf_error aerr;
    xf_error_clear(&aerr);
    xf_status st = XF_OK;
    if (e->from_cap < s->g.n_nodes + XF_MATCH_MAX_NODES) {
        int cap = s->g.n_nodes + s->g.n_nodes / 2 + XF_MATCH_MAX_NODES;
        int *f = xf_realloc(e->from, sizeof *f * (size_t)cap);
        if (!f) st = XF_FAIL(&aerr, XF_ERR_NOMEM, "out of memory applying a rule");
        else {
            e->from = f;
            e->from_cap = cap;
        }
    }
    double t0 = xf_clock_now();
    if (!st) st = xf_match_apply_from(e->rs, &s->g, s->ix, m, &ng, e->from, &aerr);
    e->prof.apply += xf_clock_now() - t0;
    if (!st) st = load_state(e, &ng, e->from, NULL, &aerr);
    if (st && xf_action_skippable(st)) {
        xf_log(XF_LOG_WARN, "environment: rule %d at location %d could not be applied: %s",
               xfer, location, aerr.msg);
        return invalid_step(e, xfer, location, aerr.msg, r);
    }
    if (st) {
        e->steps--;
        if (err) *err = aerr;
        return st;
    }
    const env_state *n = cur_state(e);
    r->valid = 1;
    r->reward = 0;
    if (e->initial.ms > 0)
        r->reward += e->opt.reward_runtime * (prev_ms - n->cost.ms) / e->initial.ms * 100.0;
    if (e->initial.bytes > 0)
        r->reward +=
            e->opt.reward_memory * (prev_bytes - n->cost.bytes) / e->initial.bytes * 100.0;
    describe_current(e, r);
    if (e->opt.target && e->opt.target_every > 0 &&
        ++e->target_valid_steps % e->opt.target_every == 0) {
        double ms = 0;
        st = target_latency(e, &n->g, &ms, err);
        if (st) return st;
        r->target_ms = ms;
        if (ms > 0 && e->target_initial_ms > 0) {
            r->reward += e->opt.reward_target * (e->target_last_ms - ms) / e->target_initial_ms *
                         100.0;
            e->target_last_ms = ms;
        }
    }
    return XF_OK;
}

double xf_env_target_initial_ms(const xf_env *e)
{
    return e->target_initial_ms;
}

/* xf_env_peek's cost when the rewrite makes a transpose whose cost depends
 * on its readers (xf_costmemo_may_fold) or touches a node near a tanh,
 * where it may make or break a fused GELU (xf_costmemo_gelu_zone): the
 * graph after it is built, indexed and costed whole. */
static xf_status peek_whole(xf_env *e, const env_state *s, const xf_match *m, double *cost_ms,
                            double *bytes, xf_error *err)
{
    xf_graph ng;
    xf_graph_index *ix = NULL;
    xf_op_cost c;
    xf_status st = xf_match_apply(e->rs, &s->g, s->ix, m, &ng, err);
    if (st) return st;
    st = xf_graph_index_build(&ng, &ix, err);
    if (!st) st = xf_costmemo_graph(e->memo, &ng, ix, NULL, &c, err);
    if (!st) *cost_ms = c.ms, *bytes = c.bytes;
    xf_graph_index_free(ix);
    xf_graph_free(&ng);
    return st;
}

/* xf_env_peek's cost with the fusion-aware cost: regions span the nodes
 * around a rewrite, so the graph after it is built, indexed and costed (the
 * bytes stay the current graph's). */
static xf_status peek_fused(xf_env *e, const env_state *s, const xf_match *m, double *cost_ms,
                            xf_error *err)
{
    xf_graph ng;
    xf_graph_index *ix = NULL;
    xf_status st = xf_match_apply(e->rs, &s->g, s->ix, m, &ng, err);
    if (st) return st;
    st = xf_graph_index_build(&ng, &ix, err);
    if (!st) st = xf_fused_cost_graph(e->opt.fused, &ng, ix, cost_ms, err);
    xf_graph_index_free(ix);
    xf_graph_free(&ng);
    return st;
}

/* 1 when a node of match m reads the output of a matmul whose layout cost
 * depends on its readers (xf_costmemo_wrapped_matmul, a graph output): the
 * rewrite may change whether an add alone reads it. */
static int reads_wrapped_matmul(const xf_env *e, const env_state *s, const xf_match *m)
{
    for (int j = 0; j < m->n_nodes; j++) {
        const xf_node *nd = &s->g.nodes[m->nodes[j]];
        for (int k = 0; k < nd->n_inputs; k++) {
            int v = nd->inputs[k];
            if (v < 0 || s->g.values[v].kind != XF_VALUE_NODE || s->g.values[v].producer < 0)
                continue;
            const xf_node *p = &s->g.nodes[s->g.values[v].producer];
            if (p->n_inputs != 2 || p->inputs[0] < 0 || p->inputs[1] < 0) continue;
            xf_shape sh[2] = {s->g.values[p->inputs[0]].shape, s->g.values[p->inputs[1]].shape};
            if (xf_costmemo_wrapped_matmul(e->memo, p->op, 2, sh) && xf_graph_is_output(&s->g, v)) return 1;
        }
    }
    return 0;
}

/* 1 when a node of match m makes a graph output: with the layout costs a
 * view there costs a copy (xf_costmemo_set_layout), and a matmul there
 * pays its layout cost by its readers, decided on the graph. */
static int writes_output(const env_state *s, const xf_match *m)
{
    for (int j = 0; j < m->n_nodes; j++) {
        const xf_node *nd = &s->g.nodes[m->nodes[j]];
        for (int k = 0; k < nd->n_outputs; k++)
            if (xf_graph_is_output(&s->g, nd->outputs[k])) return 1;
    }
    return 0;
}

xf_status xf_env_peek(xf_env *e, int xfer, int location, double *cost_ms, double *bytes,
                      xf_error *err)
{
    const env_state *s = cur_state(e);
    *cost_ms = s->cost.ms;
    *bytes = s->cost.bytes;
    if (xfer == e->n_xfers) return XF_OK;
    const xf_match *m = xf_env_location(e, xfer, location);
    if (!m)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "action (%d, %d) is not offered: rule out of range [0, %d] or masked "
                       "off, or location out of range",
                       xfer, location, e->n_xfers);
    if (e->opt.fused) return peek_fused(e, s, m, cost_ms, err);
    xf_match_target t;
    xf_status st = xf_match_instantiate(e->rs, &s->g, s->ix, m, &t, err);
    if (st) return st;
    for (int i = 0; i < t.n_nodes; i++)
        if (!t.weight_only[i] && xf_costmemo_may_fold(e->memo, t.op[i], &t.params[i], t.in_shape[i][0].rank))
            return peek_whole(e, s, m, cost_ms, bytes, err);
    for (int j = 0; s->zone_marked && j < m->n_nodes; j++)
        if (s->gelu_zone[m->nodes[j]]) return peek_whole(e, s, m, cost_ms, bytes, err);
    /* a matmul the rewrite makes pays its layout cost by its readers only
     * where it makes a graph output (writes_output) */
    if (reads_wrapped_matmul(e, s, m) || (e->opt.layout_view_ms > 0 && writes_output(s, m)))
        return peek_whole(e, s, m, cost_ms, bytes, err);
    double d_ms = 0, d_bytes = 0;
    for (int i = 0; i < t.n_nodes; i++) {
        if (t.weight_only[i]) continue;
        xf_op_cost c;
        st = xf_costmemo_op(e->memo, t.op[i], &t.params[i], t.n_in[i], t.in_dtype[i],
                            t.in_shape[i], &c, err);
        if (st) {
            xf_error_prefix(err, "costing target node %d of rule %d", i, xfer);
            return st;
        }
        d_ms += c.ms;
        d_bytes += c.bytes;
    }
    for (int j = 0; j < m->n_nodes; j++) {
        d_ms -= s->node_cost[m->nodes[j]].ms;
        d_bytes -= s->node_cost[m->nodes[j]].bytes;
    }
    *cost_ms = s->cost.ms + d_ms;
    *bytes = s->cost.bytes + d_bytes;
    return XF_OK;
}

int xf_env_num_xfers(const xf_env *e)
{
    return e->n_xfers;
}

const uint8_t *xf_env_xfer_mask(const xf_env *e)
{
    return e->mask;
}

int xf_env_num_locations(const xf_env *e, int xfer)
{
    if (xfer < 0 || xfer >= e->n_xfers) return 0;
    const xf_match_list *ml = &cur_state_c(e)->ml;
    return ml->start[xfer + 1] - ml->start[xfer];
}

const xf_match *xf_env_location(const xf_env *e, int xfer, int location)
{
    if (location < 0 || location >= xf_env_num_locations(e, xfer)) return NULL;
    const xf_match_list *ml = &cur_state_c(e)->ml;
    return &ml->m[ml->start[xfer] + location];
}

const xf_graph *xf_env_graph(const xf_env *e)
{
    return &cur_state_c(e)->g;
}

const xf_prepare_stats *xf_env_prepare_stats(const xf_env *e)
{
    return &e->prep;
}

const xf_graph_index *xf_env_index(const xf_env *e)
{
    return cur_state_c(e)->ix;
}

const xf_op_cost *xf_env_node_costs(const xf_env *e)
{
    return cur_state_c(e)->node_cost;
}

xf_cost_model *xf_env_cost_model(const xf_env *e)
{
    return e->cm;
}

double xf_env_cost(const xf_env *e)
{
    return cur_state_c(e)->cost.ms;
}

double xf_env_initial_cost(const xf_env *e)
{
    return e->initial.ms;
}

int xf_env_steps(const xf_env *e)
{
    return e->steps;
}

const xf_ruleset *xf_env_ruleset(const xf_env *e)
{
    return e->rs;
}

uint64_t xf_env_hash(const xf_env *e)
{
    return cur_state_c(e)->hash;
}

void xf_env_profile_get(const xf_env *e, xf_env_profile *p)
{
    *p = e->prof;
}
