/*
 * bench_chain — one chain of proved rules, step by step (issue 28): the
 * view moves of a rule database applied to a transformer the way the
 * searches' look-ahead applies them (match/closure.c: a matmul's
 * input flattened and its output unflattened, a cancellation read
 * backwards, then the unflatten moved toward the outputs one operator at a
 * time until it meets a flatten and cancels), with the cost after each
 * step: the sum of operator costs the search sees without the layout
 * term, and with it (the costs --target ort uses: each reshape node's
 * overhead in ONNX Runtime and the bytes of a copying one). The
 * intermediate graphs cost more than the input (a reshape pair per
 * operator until they cancel); the end costs less.
 *
 *   bench_chain --rules DB [MODEL.onnx] [--steps N] [--backend analytic|onednn]
 *
 * MODEL defaults to modelzoo's bert at batch 1 (made under $TMPDIR). The
 * costs are the analytic backend's by default (the same on every machine;
 * --backend onednn measures the kernels, which moves by a few percent
 * between runs on a loaded machine). The
 * rules are a verified database of the default vocabulary (xfergen
 * --max-ops 3 + xferverify). Prints only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/search/search.h"
#include "onnx/onnx.h"

static void usage(void)
{
    printf("usage: bench_chain --rules DB [MODEL.onnx] [--steps N] [--backend analytic|onednn]\n"
           "the view moves of DB applied one at a time to MODEL (default: modelzoo bert,\n"
           "batch 1) as the searches' look-ahead applies them, with the cost after each step\n");
}

static int count_op(const xf_graph *g, xf_op op, int rank2)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *nd = &g->nodes[i];
        if (nd->op != op) continue;
        if (rank2 && g->values[nd->inputs[0]].shape.rank != 2) continue;
        n++;
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *rules = NULL, *model_path = NULL, *backend = "analytic";
    int max_steps = 400;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rules") && i + 1 < argc) rules = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) max_steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage();
            return 0;
        } else if (argv[i][0] != '-' && !model_path) model_path = argv[i];
        else {
            usage();
            return 2;
        }
    }
    if (!rules || max_steps < 1 || max_steps > XF_CLOSURE_LOG) {
        usage();
        return 2;
    }
    char made[1024];
    if (!model_path) {
        const char *tmp = getenv("TMPDIR");
        snprintf(made, sizeof made, "%s/bench_chain_bert_b1.onnx", tmp && *tmp ? tmp : "/tmp");
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "'%s' bert --batch 1 -o '%s' > /dev/null", XF_BENCH_MODELZOO, made);
        if (system(cmd) != 0) {
            fprintf(stderr, "bench_chain: %s failed\n", cmd);
            return 1;
        }
        model_path = made;
    }

    xf_error err;
    xf_graph model;
    xf_onnx_options oo = xf_onnx_default_options();
    if (xf_onnx_load(model_path, &oo, &model, &err)) {
        fprintf(stderr, "bench_chain: %s\n", err.msg);
        return 1;
    }
    /* --passes rules: no hand pass; a class token's Gather made a slice */
    xf_prepare_options po = xf_prepare_options_default();
    po.narrow = 0;
    po.split_layout = 0;
    po.slice_selections = 1;
    xf_graph prep;
    if (xf_agent_prepare(&model, &po, &prep, NULL, &err)) {
        fprintf(stderr, "bench_chain: %s\n", err.msg);
        return 1;
    }
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.derived = 1;
    ro.restrict_to = &prep;
    xf_ruleset *rs;
    if (xf_ruleset_load(rules, &ro, &rs, &err)) {
        fprintf(stderr, "bench_chain: %s\n", err.msg);
        return 1;
    }
    xf_cost_options co = xf_cost_options_default();
    co.backend = !strcmp(backend, "analytic") ? XF_COST_ANALYTIC : XF_COST_ONEDNN;
    xf_cost_model *cm;
    if (xf_cost_open(&co, &cm, &err)) {
        fprintf(stderr, "bench_chain: %s\n", err.msg);
        return 1;
    }
    xf_env_options eo = xf_env_options_default();
    eo.prepare = po;
    xf_env *plain, *layout;
    if (xf_env_create(rs, cm, &model, &eo, &plain, &err)) {
        fprintf(stderr, "bench_chain: %s\n", err.msg);
        return 1;
    }
    eo.layout_view_ms = XF_ORT_VIEW_MS;
    eo.layout_gbps = XF_ORT_LAYOUT_GBPS;
    if (xf_env_create(rs, cm, &model, &eo, &layout, &err)) {
        fprintf(stderr, "bench_chain: %s\n", err.msg);
        return 1;
    }

    int n = xf_ruleset_count(rs);
    uint8_t *moves = calloc((size_t)n + 1, 1);
    if (!moves) return 1;
    int n_moves = 0;
    for (int r = 0; r < n; r++) {
        const xf_rule *rule = xf_ruleset_rule(rs, r);
        moves[r] = (uint8_t)(xf_rule_has_view_op(rule) && xf_rule_is_view_move(rule));
        n_moves += moves[r];
    }
    /* the first step: the first matmul of 3-D activations by a weight
     * flattened, matmul(x, w) => unflatten(matmul(flatten(x), w)), a rule
     * that is no view move (it adds two reshapes); the closure then moves
     * the unflatten down */
    const xf_graph *prepared = xf_env_graph(plain);
    int first = -1;
    for (int r = 0; r < n && first < 0; r++) {
        const xf_rule *rule = xf_ruleset_rule(rs, r);
        if (rule->src.n_nodes != 1 || rule->src.nodes[0].op != XF_OP_MATMUL || rule->dst.n_nodes != 3 ||
            count_op(&rule->dst, XF_OP_RESHAPE, 0) != 2 || xf_env_num_locations(plain, r) < 1)
            continue;
        first = r;
    }
    if (first < 0) {
        fprintf(stderr, "bench_chain: no rule of %s flattens a matmul of this model\n", rules);
        return 1;
    }
    /* at the matmul whose chain is longest (an FFN's first: the unflatten
     * travels through GELU, the second matmul, the residual add and the
     * layer norm) */
    int best_l = 0, best_n = -1;
    for (int l = 0; l < xf_env_num_locations(plain, first); l++) {
        xf_graph one, out;
        xf_closure_log log;
        if (xf_match_apply(rs, prepared, xf_env_index(plain), xf_env_location(plain, first, l), &one,
                           &err) ||
            xf_closure_run(rs, moves, &one, max_steps, &out, &log, &err)) {
            fprintf(stderr, "bench_chain: %s\n", err.msg);
            return 1;
        }
        if (log.n > best_n) {
            best_n = log.n;
            best_l = l;
        }
        xf_graph_free(&one);
        xf_graph_free(&out);
    }
    xf_graph started;
    if (xf_match_apply(rs, prepared, xf_env_index(plain), xf_env_location(plain, first, best_l),
                       &started, &err)) {
        fprintf(stderr, "bench_chain: %s\n", err.msg);
        return 1;
    }
    const xf_graph *start = &started;
    double c0 = 0, l0 = 0, cs = 0, ls = 0;
    if (xf_env_cost_graph(plain, prepared, &c0, &err) || xf_env_cost_graph(layout, prepared, &l0, &err) ||
        xf_env_cost_graph(plain, start, &cs, &err) || xf_env_cost_graph(layout, start, &ls, &err)) {
        fprintf(stderr, "bench_chain: %s\n", err.msg);
        return 1;
    }
    printf("model:   %s (%d nodes prepared, %d matmuls on 2-D inputs of %d)\n", model_path,
           prepared->n_nodes, count_op(prepared, XF_OP_MATMUL, 1), count_op(prepared, XF_OP_MATMUL, 0));
    printf("start:   matmul location %d of %d (the one whose chain is longest)\n", best_l,
           xf_env_num_locations(plain, first));
    printf("rules:   %s: %d actions, %d of them view moves\n", rules, n, n_moves);
    printf("costs:   ops = sum of operator costs (%s); +layout = with ONNX Runtime's reshape\n"
           "         overhead and copy bytes (the cost --target ort searches on)\n", backend);
    printf("%5s %10s %10s %6s %6s  %s\n", "step", "ops ms", "+layout ms", "nodes", "2-D mm", "rule");
    printf("%5d %10.4f %10.4f %6d %6d  (the prepared model)\n", 0, c0, l0, prepared->n_nodes,
           count_op(prepared, XF_OP_MATMUL, 1));
    printf("%5d %10.4f %10.4f %6d %6d  %s\n", 1, cs, ls, start->n_nodes, count_op(start, XF_OP_MATMUL, 1),
           xf_ruleset_text(rs, first));

    /* the closure after k steps, for k = 1, 2, ...: the graph after each
     * step and the rule that made it (a wrap is two steps: the cancellation
     * read backwards, then the move that takes the operator to 2-D) */
    double max_l = l0, prev_l = ls, prev_c = cs;
    int last = 0, rises = 0, rises_ops = 0;
    xf_closure_log prev;
    memset(&prev, 0, sizeof prev);
    for (int k = 1; k <= max_steps; k++) {
        xf_graph g;
        xf_closure_log log;
        if (xf_closure_run(rs, moves, start, k, &g, &log, &err)) {
            fprintf(stderr, "bench_chain: %s\n", err.msg);
            return 1;
        }
        if (log.n <= prev.n) { /* a wrap is two steps: k = its first gives nothing new */
            xf_graph_free(&g);
            if (log.n < k) break; /* the closure stopped short of k: nothing more applies */
            continue;
        }
        double c = 0, l = 0;
        if (xf_env_cost_graph(plain, &g, &c, &err) || xf_env_cost_graph(layout, &g, &l, &err)) {
            fprintf(stderr, "bench_chain: %s\n", err.msg);
            return 1;
        }
        for (int s = prev.n; s < log.n && s < XF_CLOSURE_LOG; s++) {
            int a = log.rule[s], back = a < -1;
            if (back) a = XF_ACTION_OF_BACKWARD(a);
            int lastrow = s == log.n - 1;
            if (lastrow)
                printf("%5d %10.4f %10.4f %6d %6d  %s%s\n", s + 2, c, l, g.n_nodes,
                       count_op(&g, XF_OP_MATMUL, 1), back ? "backwards: " : "",
                       xf_ruleset_text(rs, a));
            else
                printf("%5d %10s %10s %6s %6s  %s%s\n", s + 2, "", "", "", "", back ? "backwards: " : "",
                       xf_ruleset_text(rs, a));
        }
        if (l > max_l) max_l = l;
        rises += l > prev_l;
        rises_ops += c > prev_c;
        prev_l = l;
        prev_c = c;
        last = log.n;
        prev = log;
        if (log.merged > 0 && k == max_steps) printf("       (%d identical reshapes merged)\n", log.merged);
        xf_graph_free(&g);
    }
    xf_graph end;
    xf_closure_log log;
    if (xf_closure_run(rs, moves, start, last > 0 ? last : 1, &end, &log, &err)) {
        fprintf(stderr, "bench_chain: %s\n", err.msg);
        return 1;
    }
    double ce = 0, le = 0;
    if (xf_env_cost_graph(plain, &end, &ce, &err) || xf_env_cost_graph(layout, &end, &le, &err)) {
        fprintf(stderr, "bench_chain: %s\n", err.msg);
        return 1;
    }
    if (ls > max_l) max_l = ls;
    printf("chain:   %d steps (%d identical reshapes merged on the way); +layout cost %.4f ms ->"
           " highest %.4f ms on the way -> %.4f ms (%+.1f%%), %d steps raise it; ops cost %.4f ->"
           " %.4f ms, %d steps raise it; 2-D matmuls %d -> %d of %d\n",
           log.n + 1, log.merged, l0, max_l, le, 100.0 * (le - l0) / l0, rises, c0, ce, rises_ops,
           count_op(prepared, XF_OP_MATMUL, 1), count_op(&end, XF_OP_MATMUL, 1),
           count_op(&end, XF_OP_MATMUL, 0));
    xf_graph_free(&end);
    xf_graph_free(&started);
    free(moves);
    xf_env_free(plain);
    xf_env_free(layout);
    xf_cost_close(cm);
    xf_ruleset_free(rs);
    xf_graph_free(&prep);
    xf_graph_free(&model);
    return 0;
}
