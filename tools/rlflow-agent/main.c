/*
 * rlflow-agent — optimise an ONNX model with proved rewrite rules.
 *
 *   rlflow-agent [--rules RULES.db] MODEL.onnx [-o OUT.onnx] [--agent wm|ppo|taso|greedy|random]
 *   rlflow-agent --make-rules DIR
 *   rlflow-agent train --save CKPT --models PATH... (train.c)
 *
 * Without --rules it uses the default rules database (optimize.h): the one
 * next to this program (the build's), else the user cache's, made there on
 * first use with progress on stderr; it says which. --make-rules makes it in
 * DIR (the build's rules-default target runs it).
 * Parses the command line (args.c), calls the library's one optimisation
 * call (optimize/optimize.h: load, prepare, search or learn, arbiter,
 * numerical check, write checked at the symbolic sizes or fall back to the
 * input, latency) and prints its report: the head while the search runs
 * (the stage callback), progress lines on stderr, the rest at the end;
 * with --report DIR also the page of it (pages/pages.h).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"

static void progress(void *user, int expanded, double best_ms, double initial_ms)
{
    (void)user;
    fprintf(stderr, "\rsearch: %d graphs expanded, best %.4f ms (%+.2f%%)   ", expanded, best_ms,
            initial_ms > 0 ? 100.0 * (best_ms - initial_ms) / initial_ms : 0.0);
    fflush(stderr);
}

static void ppo_progress(void *user, const xf_ppo_progress *p)
{
    (void)user;
    fprintf(stderr,
            "\rppo %-5s %6.1f s  episodes %lld  steps %lld  mean reward %+.3f  best %.4f ms "
            "(%+.2f%%)   ",
            p->phase, p->seconds, (long long)p->episodes, (long long)p->steps, p->mean_reward,
            p->best_ms, p->initial_ms > 0 ? 100.0 * (p->best_ms - p->initial_ms) / p->initial_ms : 0);
    fflush(stderr);
}

static void wm_progress(void *user, const xf_wm_progress *p)
{
    (void)user;
    fprintf(stderr,
            "\rwm %-7s %6.1f s  round %d  episodes %lld  real steps %lld  dream steps %lld  "
            "wm loss %.3f  dream reward %+.3f  best %.4f ms (%+.2f%%)   ",
            p->phase, p->seconds, p->round, (long long)p->episodes, (long long)p->real_steps,
            (long long)p->dream_steps, p->wm_loss, p->dream_reward, p->best_ms,
            p->initial_ms > 0 ? 100.0 * (p->best_ms - p->initial_ms) / p->initial_ms : 0);
    fflush(stderr);
}

static void note(void *user, xf_optimize_note_kind kind, const char *text)
{
    const cli_options *o = user;
    if (kind == XF_OPTIMIZE_WARN) fprintf(stderr, "rlflow-agent: %s\n", text);
    else if (o->quiet) return;
    else if (kind == XF_OPTIMIZE_INFO) fprintf(stderr, "rlflow-agent: %s\n", text);
    else if (kind == XF_OPTIMIZE_STATUS) fprintf(stderr, "%s\n", text);
    else fprintf(stderr, "\n");
}

static const char *agent_name(const cli_options *o, const xf_optimize_report *r)
{
    xf_optimize_agent a = r->agent != XF_OPTIMIZE_SEARCH ? r->agent : o->opt.agent;
    return a == XF_OPTIMIZE_PPO ? "ppo" : "wm";
}

static void print_header(const cli_options *o, const xf_optimize_report *r)
{
    if (r->target_refused[0])
        printf("target:          none: %s; the cost model decides, as without --target\n",
               r->target_refused);
    if (r->fused_refused)
        printf("cost:            ops: the fused cost needs the target, which did not load\n");
    const xf_prepare_stats *ps = &r->prep;
    printf("model:           %s (%d nodes, %d after preparation", o->model, r->nodes_before,
           r->nodes_prepared);
    const char *sep = ": ";
    if (ps->fused_layernorms > 0) {
        printf("%s%d decomposed layer norms fused", sep, ps->fused_layernorms);
        sep = ", ";
    }
    if (ps->fused_gelus > 0) {
        printf("%s%d GELU%s fused", sep, ps->fused_gelus, ps->fused_gelus == 1 ? "" : "s");
        sep = ", ";
    }
    if (ps->scalar_muls > 0) {
        printf("%s%d scalings as scalar_mul", sep, ps->scalar_muls);
        sep = ", ";
    }
    if (ps->narrowed_selections > 0) {
        printf("%s%d one-position selection%s moved up through %d operators", sep,
               ps->narrowed_selections, ps->narrowed_selections == 1 ? "" : "s",
               ps->narrowed_ops);
        sep = ", ";
    }
    if (ps->merged_split_layouts > 0)
        printf("%s%d split%s reshaped and transposed before splitting", sep,
               ps->merged_split_layouts, ps->merged_split_layouts == 1 ? "" : "s");
    printf(")\n");
    if (o->opt.passes == XF_OPTIMIZE_EXPERT) {
        printf("rules:           none (--passes expert: the hand-written passes alone)\n");
    } else {
        printf("rules:           %d actions from %s (%d skipped, %d duplicates, ", r->actions,
               o->opt.rules, r->skipped, r->duplicates);
        if (o->opt.all_actions)
            printf("irrelevant ones kept: --all-actions)\n");
        else
            printf("%d irrelevant to this model)\n", r->irrelevant);
    }
    printf("cost model:      %s\n", r->cost_identity);
    if (r->fused)
        printf("fused cost:      regions timed in the target (per-run overhead %.4f ms "
               "subtracted)\n",
               r->fused_overhead_ms);
    if (r->target_identity[0]) printf("target:          %s\n", r->target_identity);
    printf("applicable:      %d rules at %d locations\n", r->applicable, r->locations);
    if (r->n_searches > 1)
        printf("also searched:   with the %d scalings kept in place (the target times both "
               "searches' candidates): %d actions, %d rules at %d locations\n",
               ps->scalar_muls, r->alt_actions, r->alt_applicable, r->alt_locations);
    for (int i = 0; i < r->n_peeks; i++)
        printf("  rule %-7lld %4d locations, best %+.4f ms  %s\n", (long long)r->peeks[i].rule_id,
               r->peeks[i].locations, r->peeks[i].best_delta_ms, r->peeks[i].text);
    if (r->agent_untrained)
        printf("agent:           %s, not trained: no action can match this model\n",
               agent_name(o, r));
}

/* The learning agent's figures. */
static void print_agent(const cli_options *o, const xf_optimize_report *r)
{
    const xf_rl_learned *l = &r->learned;
    const xf_optimize_search_figures *f = &r->search[0];
    if (l->loaded) {
        printf("agent:           %s, loaded, no training: %s1 greedy + %d sampled episodes (best "
               "kept), %lld environment steps, %d actions of %d",
               r->agent == XF_OPTIMIZE_PPO ? "ppo" : "wm",
               l->guided ? "a search it guides + " : "", l->episodes - 1 - l->guided,
               (long long)f->expanded, l->actions, r->actions);
        if (l->unavailable)
            printf(" (%d unavailable: their rules cannot match this model)", l->unavailable);
        if (l->outside)
            printf("; %d rules this model offers at its start are not among them (%s)",
                   l->outside,
                   l->guided ? "the guided search prices them, the policy cannot choose them"
                             : "not used");
        printf("\n");
    } else if (r->agent == XF_OPTIMIZE_PPO)
        printf("agent:           ppo, trained, %lld environment steps (%.2f ms each), %d actions "
               "of %d\n",
               (long long)f->expanded,
               f->expanded > 0 ? 1e3 * f->seconds / (double)f->expanded : 0.0, l->actions,
               r->actions);
    else
        printf("agent:           wm, %d rounds, %lld real steps (%lld episodes), %lld dream steps "
               "(%lld episodes), tau %.2f, %d actions of %d\n"
               "world model:     loss %.3f -> %.3f; on held-out transitions z NLL/dim %.3f, "
               "reward RMSE %.2f%% (reward RMS %.2f%%); return %+.2f%% in the dream vs %+.2f%% "
               "real; step %.1f us in the dream vs %.1f us real (+%.1f us encoding)\n",
               l->wm.rounds, (long long)l->wm.real_steps, (long long)l->wm.real_episodes,
               (long long)l->wm.dream_steps, (long long)l->wm.dream_episodes, o->opt.tau,
               l->actions, r->actions, l->wm.wm_loss_first, l->wm.wm_loss_last,
               l->wm.heldout_nll, l->wm.heldout_reward_rmse, l->wm.reward_rms,
               l->wm.dream_reward, l->wm.real_return, l->wm.wm_step_us, l->wm.real_step_us,
               l->wm.encode_us);
    if (r->target)
        printf("target reward:   every %d valid steps: %lld graphs timed in the target, "
               "%.1f s; the prepared model %.4f ms there\n",
               o->opt.target_every, (long long)r->target_runs, r->target_seconds,
               r->target_initial_ms);
}

static void stage(void *user, xf_optimize_stage st, const xf_optimize_report *r)
{
    const cli_options *o = user;
    if (st == XF_OPTIMIZE_STAGE_SEARCH) print_header(o, r);
    else if (o->opt.agent != XF_OPTIMIZE_SEARCH && !r->agent_untrained) print_agent(o, r);
    fflush(stdout);
}

/* The arbiter's table and the latency in the target before and after. */
static void print_target(const xf_optimize_report *r)
{
    const xf_arbiter_result *a = &r->arb;
    const xf_target_timing *out = &a->e[a->chosen].t;
    if (a->n < 2 || !(a->e[a->chosen].input_ms > 0)) {
        printf("target latency:  not timed, %s: ", r->target_identity);
        if (a->refused[0]) printf("%s\n", a->refused);
        else if (a->n > 1)
            printf("none of the %d candidates was timed (their verdicts: the table below); "
                   "the input is written\n", a->n - 1);
        else printf("no candidate besides the input to time against it\n");
    } else {
        printf("target latency:  %.4f ms -> %.4f ms (x%.3f, 95%% interval [%.3f, %.3f]), %s\n",
               a->e[a->chosen].input_ms, out->median_ms, out->ratio, out->lo, out->hi,
               r->target_identity);
        printf("target noise:    a second session of the input: x%.3f +- %.3f over %d rounds\n",
               a->self.ratio, a->self.noise, a->rounds);
    }
    char shared[32], est[32];
    printf("target memory:   the input's weights (%s) shared by every session; %d candidate%s "
           "at a time beside the input and its self check (%d sessions), estimated at most %s\n",
           xf_bytes_str((double)a->shared_bytes, shared, sizeof shared), a->racing,
           a->racing == 1 ? "" : "s", a->racing + 2,
           xf_bytes_str(a->mem_estimate, est, sizeof est));
    if (a->refused[0]) printf("target refused:  %s\n", a->refused);
    char name[32];
    printf("arbiter:         %d models looked at in %.1f s", a->n, a->seconds);
    if (a->budget_s > 0 && a->budget_share_ms > 0 && a->budget_s != a->budget_given_s)
        printf(" (budget %.0f s: %.0f s grown to what racing and confirming take at the "
               "input's %.1f ms a round%s)",
               a->budget_s, a->budget_given_s, a->budget_share_ms,
               a->budget_hit ? "; reached: it cut the timing" : "");
    else if (a->budget_s > 0)
        printf(" (budget %.0f s%s)", a->budget_s,
               a->budget_hit ? ", reached: it cut the timing" : "");
    printf(", cheapest first on the cost model, repeats (the same nodes and cost as written) "
           "after the distinct models%s:\n",
           r->n_searches > 1 ? " (cand 1:N: candidate N of the search with scalings kept)" : "");
    if (a->n_untimed > 0)
        printf("budget:          %d candidate%s not timed: the budget ran out "
               "(--target-budget)\n",
               a->n_untimed, a->n_untimed == 1 ? "" : "s");
    printf("  %-13s %10s %6s %4s %7s %17s  %s\n", "model", "cost ms", "nodes", "race", "ratio",
           "95% interval", "verdict");
    for (int i = 0; i < a->n; i++) {
        const xf_arbiter_entry *e = &a->e[i];
        char ratio[16] = "-", iv[32] = "-";
        xf_arbiter_entry_name(e, name, sizeof name);
        if (e->t.runs > 0) {
            snprintf(ratio, sizeof ratio, "%.3f", e->t.ratio);
            snprintf(iv, sizeof iv, "[%.3f, %.3f]", e->t.lo, e->t.hi);
        }
        int slower = e->verdict == XF_ARBITER_TIMED && xf_target_verdict(&e->t, &e->self) > 0;
        char raced[16] = "-", like[48] = "";
        if (e->raced > 0) snprintf(raced, sizeof raced, "%d", e->raced);
        if (e->like > 0) {
            char of[32];
            xf_arbiter_entry_name(&a->e[e->like], of, sizeof of);
            snprintf(like, sizeof like, " (a repeat of %s)", of);
        }
        printf("  %-13s %10.4f %6d %4s %7s %17s  %s%s\n", name, e->cost_ms, e->n_nodes, raced,
               ratio, iv, slower ? "slower beyond the noise" : xf_optimize_verdict_name(e->verdict),
               like);
    }
    for (int i = 1; i < a->n; i++) {
        const xf_arbiter_entry *e = &a->e[i];
        xf_arbiter_entry_name(e, name, sizeof name);
        if (e->why[0]) printf("dropped:         %s: %s\n", name, e->why);
        if (e->closer.runs > 0)
            printf("closer look:     %s, none faster in the run of all: x%.3f [%.3f, %.3f] "
                   "in a longer run against the input %s alone%s\n",
                   name, e->closer.ratio, e->closer.lo, e->closer.hi,
                   a->against_file ? "file" : "model",
                   i == a->chosen ? "" : ", not faster beyond the noise");
    }
    if (a->finalists > 0) {
        printf("final:           the %d fastest raced again together against the input %s, "
               "%d rounds:",
               a->finalists, a->against_file ? "file" : "model", a->final_rounds);
        for (int i = 1; i < a->n; i++) {
            if (!a->e[i].final) continue;
            xf_arbiter_entry_name(&a->e[i], name, sizeof name);
            printf(" %s x%.3f [%.3f, %.3f]%s", name, a->e[i].confirm.ratio, a->e[i].confirm.lo,
                   a->e[i].confirm.hi, a->e[i].final == 2 ? " (left: slower)" : "");
        }
        printf("\n");
    }
    if (a->chosen > 0 && a->e[a->chosen].final)
        printf("confirmed:       in the final, the cheapest by the cost model of those it cannot "
               "tell from the fastest: x%.3f [%.3f, %.3f]\n",
               a->e[a->chosen].confirm.ratio, a->e[a->chosen].confirm.lo,
               a->e[a->chosen].confirm.hi);
    else if (a->chosen > 0)
        printf("confirmed:       a second run against the input %s alone: x%.3f [%.3f, %.3f]\n",
               a->against_file ? "file" : "model", a->e[a->chosen].confirm.ratio,
               a->e[a->chosen].confirm.lo, a->e[a->chosen].confirm.hi);
    for (int i = 1; i < a->n; i++) {
        if (a->e[i].verdict != XF_ARBITER_UNCONFIRMED || a->e[i].final) continue;
        xf_arbiter_entry_name(&a->e[i], name, sizeof name);
        const char *against = a->against_file ? "file" : "model";
        if (a->e[i].confirm.runs == 0)
            printf("not confirmed:   %s was not timed again against the input %s: the target "
                   "budget ran out first (--target-budget)\n",
                   name, against);
        else
            printf("not confirmed:   %s against the input %s alone: x%.3f [%.3f, %.3f], %d "
                   "runs%s\n",
                   name, against, a->e[i].confirm.ratio, a->e[i].confirm.lo, a->e[i].confirm.hi,
                   a->e[i].confirm.runs,
                   a->against_file ? " (the input as exported is what the race timed)" : "");
    }
    if (a->chosen == 0)
        printf("result:          no candidate is faster than the input in the target beyond the "
               "noise; the input model is written unchanged\n");
    else
        printf("target outputs:  max |d| %.3g of the largest |output| (chosen vs input, both in "
               "the target)\n",
               a->max_rel);
}

/* The rules applied, grouped with counts, and which rewrites of the
 * written model the proved rules made (those with a reshape or a slice
 * counted apart) and which the hand passes made. */
static void print_rules(const cli_options *o, const xf_optimize_report *r)
{
    static const char *const passes[] = {"rules", "expert", "both"};
    if (r->kept_original) {
        printf("rules applied:   0 (the search's %d rewrites did not pay off as written%s)\n",
               r->search_rewrites, r->target ? " in the target" : "");
    } else {
        printf("rules applied:   %d", r->n_applied);
        if (r->n_applied > 0) printf(" (%d distinct)", r->n_distinct);
        printf("\n");
        for (int k = 0; k < r->n_distinct; k++)
            printf("  %4dx  rule %-7lld %s%s\n", r->applied[k].count,
                   (long long)r->applied[k].rule_id,
                   r->applied[k].backward ? "backwards, at a value: " : "", r->applied[k].text);
    }
    int n = r->n_applied;
    printf("made by:         --passes %s: proved rules %d rewrite%s (%d with a reshape or a slice)",
           passes[o->opt.passes], n, n == 1 ? "" : "s", r->n_views);
    if (r->kept_original) {
        printf("; the input was written\n");
        return;
    }
    printf("; hand passes: ");
    const xf_prepare_stats *ps = &r->written_prep;
    if (o->opt.passes == XF_OPTIMIZE_RULES) { /* the layer norms are fused all the same */
        printf("layer-norm fusion %d, GELU fusion %d, the others off (--passes rules)\n",
               ps->fused_layernorms, ps->fused_gelus);
        return;
    }
    printf("layer-norm fusion %d, GELU fusion %d, narrowing %d operator%s, split layout %d, "
           "unbatched layout %s\n",
           ps->fused_layernorms, ps->fused_gelus, ps->narrowed_ops, ps->narrowed_ops == 1 ? "" : "s",
           ps->merged_split_layouts, r->unbatched ? "chosen" : "not chosen");
}

static void print_written(const cli_options *o, const xf_optimize_report *r)
{
    const xf_onnx_checked *w = &r->written;
    for (int i = 0; i < r->n_dims; i++)
        if (w->wrote == XF_ONNX_WROTE_INPUT_FILE)
            printf("symbolic dim:    %s kept (the input file as it is)\n", r->dims[i].name);
        else if (r->dims[i].fixed)
            printf("symbolic dim:    %s written FIXED at %lld: %s\n", r->dims[i].name,
                   (long long)r->dims[i].size[0], r->dims[i].fixed);
        else
            printf("symbolic dim:    %s kept, checked at %lld, %lld, %lld\n", r->dims[i].name,
                   (long long)r->dims[i].size[0], (long long)r->dims[i].size[1],
                   (long long)r->dims[i].size[2]);
    if (w->why[0])
        printf("result:          the optimised model fails a check (%s): the input %s is written "
               "instead\n",
               w->why, w->wrote == XF_ONNX_WROTE_INPUT ? "model" : "file, unchanged,");
    if (w->n_points > 1 && w->worst.max_abs >= 0)
        printf("sizes check:     max output err %.3g abs, %.3g rel over the three sizes\n",
               w->worst.max_abs, w->worst.max_rel);
    else if (w->n_points > 1)
        printf("sizes check:     read back at the three sizes (outputs not compared: --no-check)\n");
    else if (w->wrote == XF_ONNX_WROTE_INPUT_FILE && r->n_dims > 0)
        printf("sizes check:     none needed: the input file is written as it is\n");
    printf("written:         %s\n", o->output);
    struct rusage ru;
    char peak[32], wb[32];
    double weights = (double)r->weight_bytes;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        printf("resources:       %.1f s, peak memory %s (%.2fx the model's weights, %s)\n",
               r->seconds, xf_bytes_str((double)ru.ru_maxrss * 1024.0, peak, sizeof peak),
               weights > 0 ? (double)ru.ru_maxrss * 1024.0 / weights : 0.0,
               xf_bytes_str(weights, wb, sizeof wb));
    if (r->cost_disturbed > 0)
        printf("cost noise:      %lld of %lld kernel measurements disturbed by other processes "
               "in every attempt (not cached; at threads > 1 capped by one thread's time)\n",
               (long long)r->cost_disturbed, (long long)r->cost_measurements);
    if (r->cost_shared > 0)
        printf("cost noise:      %lld of %lld kernel measurements timed while other tasks ran "
               "beside them (not cached)\n",
               (long long)r->cost_shared, (long long)r->cost_measurements);
    if (2 * (r->cost_disturbed + r->cost_shared) > r->cost_measurements)
        printf("hint:            most kernels were timed on a busy machine: the search priced "
               "rewrites with them; a run on a quiet machine measures them again and keeps them\n");
    if (w->data_location[0])
        printf("external data:   %s (%llu bytes, next to the model)\n", w->data_location,
               (unsigned long long)w->data_bytes);
}

static void print_report(const cli_options *o, const xf_optimize_report *r)
{
    for (int i = 0; i < r->n_searches; i++) {
        const xf_optimize_search_figures *f = &r->search[i];
        /* which preparation, when there were two */
        const char *prep = r->n_searches == 1 ? "" : i == 0 ? "scalings moved" : "scalings kept",
                   *lpar = *prep ? " (" : "", *rpar = *prep ? ")" : "";
        if (o->opt.agent == XF_OPTIMIZE_SEARCH)
            printf("search:          %s%s%s%s, %lld graphs expanded, %lld distinct seen, %.2f s\n",
                   xf_search_kind_name(o->opt.search), lpar, prep, rpar, (long long)f->expanded,
                   (long long)f->seen, r->n_searches == 1 ? r->search_seconds : f->seconds);
        else
            printf("optimisation:    %s%s%s%s, %lld environment steps, %.2f s\n",
                   agent_name(o, r), lpar, prep, rpar, (long long)f->expanded,
                   r->n_searches == 1 ? r->search_seconds : f->seconds);
        printf("search cost:     %.4f ms -> %.4f ms (%+.2f%%, the prepared working graph%s%s)\n",
               f->initial_ms, f->best_ms,
               f->initial_ms > 0 ? 100.0 * (f->best_ms - f->initial_ms) / f->initial_ms : 0.0,
               *prep ? ", " : "", prep);
        if (f->unpolished_ms > 0)
            printf("polish:          the agent's own best %.4f ms (%+.2f%%), then %d greedy "
                   "rewrites in %.2f s\n",
                   f->unpolished_ms,
                   f->initial_ms > 0 ? 100.0 * (f->unpolished_ms - f->initial_ms) / f->initial_ms
                                     : 0.0,
                   f->polish_steps, f->polish_seconds);
    }
    double before = r->cost_before, after = r->cost_after;
    printf("cost:            %.4f ms -> %.4f ms (%+.2f%%, the models as written)\n", before, after,
           before > 0 ? 100.0 * (after - before) / before : 0.0);
    if (r->fused) {
        const xf_fused_cost_stats *fst = &r->fused_stats;
        printf("fused regions:   %lld costed: %lld timed in the target (%.1f s), %lld from the "
               "cache, %lld by the operator model%s%s\n",
               (long long)fst->lookups, (long long)fst->measured, fst->measure_s,
               (long long)fst->from_cache, (long long)fst->fallbacks, fst->fallbacks ? ": " : "",
               fst->last_fallback);
    }
    if (r->kept_original && !r->target)
        printf("result:          no cheaper model found; the input model is written unchanged\n");
    printf("nodes:           %d -> %d (folded %d weight-only nodes, %d conv biases re-fused)\n",
           r->nodes_before, r->nodes_after, r->finish.folded_nodes, r->finish.fused_bias);
    if (r->check.max_abs >= 0 && r->check_by[0])
        printf("max output err:  %.3g of the largest |output| (tolerance %.3g), in %s\n",
               r->check.max_rel, o->opt.rtol, r->check_by);
    else if (r->check.max_abs >= 0)
        printf("max output err:  %.3g abs, %.3g rel (tolerance %.3g + %.3g*|ref|)\n",
               r->check.max_abs, r->check.max_rel, o->opt.atol, o->opt.rtol);
    else
        printf("max output err:  not checked\n");
    if (r->latency_state < 0) {
        printf("latency:         not measured: %s\n", r->latency_error);
    } else if (r->latency_state > 0) {
        double b = r->latency_before, a = r->latency_after;
        double change = b > 0 ? (a - b) / b : 0.0;
        printf("latency:         %.4f ms -> %.4f ms (%+.2f%%, %s, best of 5 alternating "
               "10-run medians)\n",
               b, a, 100.0 * change, r->latency_identity);
        printf("latency noise:   medians of one model %.1f%% apart%s\n", 100.0 * r->latency_spread,
               fabs(change) <= r->latency_spread ? ": the change is within the noise" : "");
    }
    if (r->target) print_target(r);
    print_rules(o, r);
    print_written(o, r);
}

/* Making the default rules: one line rewritten on a terminal, a line every
 * few seconds otherwise. */
static void rules_progress(void *user, const char *line)
{
    int tty = *(const int *)user;
    if (!*line) {
        if (tty) fprintf(stderr, "\n");
        return;
    }
    fprintf(stderr, tty ? "\r%s\033[K" : "%s\n", line);
    fflush(stderr);
}

/* The directory of this program (its build or install directory), where
 * the build puts the default rules; "" when unknown. */
static void program_dir(char *buf, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", buf, n - 1);
    buf[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash) *slash = '\0';
    else buf[0] = '\0';
}

/* Finds (or makes) the default rules for o->opt.rules, saying which; the
 * exit status on failure, else 0. With --make-rules, makes them there. */
int find_default_rules(cli_options *o)
{
    int tty = isatty(2);
    xf_default_rules_options d;
    xf_default_rules_options_init(&d);
    d.progress = o->quiet && !o->make_rules ? NULL : rules_progress;
    d.user = &tty;
    xf_error err = {0};
    if (o->make_rules) {
        int made = 0;
        if (xf_default_rules_make_in(o->make_rules, &d, o->rules_buf, sizeof o->rules_buf, &made,
                                     &err) != XF_OK) {
            fprintf(stderr, "rlflow-agent: %s\n", err.msg);
            return 1;
        }
        printf("%s (%s)\n", o->rules_buf, made ? "made" : "already there");
        return 0;
    }
    char dir[PATH_MAX];
    program_dir(dir, sizeof dir);
    const char *dirs[] = {dir};
    d.dirs = dirs;
    d.n_dirs = dir[0] ? 1 : 0;
    xf_default_rules_origin origin;
    if (xf_default_rules_find(&d, o->rules_buf, sizeof o->rules_buf, &origin, &err) != XF_OK) {
        fprintf(stderr, "rlflow-agent: the default rules database: %s\n", err.msg);
        return 2;
    }
    static const char *const how[] = {"the build's, next to rlflow-agent",
                                      "the user cache's", "made now in the user cache"};
    fprintf(stderr, "rlflow-agent: rules: %s (the default database, %s; --rules FILE for "
                    "another)\n", o->rules_buf, how[origin]);
    o->opt.rules = o->rules_buf;
    return 0;
}

/* The page of --report; nonzero (message printed) when it was not written. */
static int write_page(const cli_options *o, const xf_optimize_report *r)
{
    xf_pages_run run = {o->model, NULL, NULL, o->output, &o->opt, r};
    xf_error err = {0};
    char page[4200];
    snprintf(page, sizeof page, "%s/index.html", o->report);
    if (xf_pages_optimize(o->report, &run, &err) != XF_OK) {
        fprintf(stderr, "rlflow-agent: the model is written, the page is not: %s\n", err.msg);
        return 1;
    }
    printf("report:          %s\n", page);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "train")) return train_main(argc - 1, argv + 1);
    cli_options o;
    int rc = cli_parse(argc, argv, &o);
    if (rc < 0) return 0;
    if (rc) return rc;
    xf_error err = {0};
    if (o.report && xf_pages_probe(o.report, &err) != XF_OK) { /* before the long part */
        fprintf(stderr, "rlflow-agent: --report: %s\n", err.msg);
        return 2;
    }
    /* --passes expert reads no rules: none is looked for or made */
    if (o.make_rules || (!o.opt.rules && o.opt.passes != XF_OPTIMIZE_EXPERT)) {
        rc = find_default_rules(&o);
        if (rc || o.make_rules) return rc;
    }
    xf_optimize_options *p = &o.opt;
    p->list_applicable = o.verbose;
    if (!o.quiet) {
        p->search_progress = progress;
        p->ppo_progress = ppo_progress;
        p->wm_progress = wm_progress;
    }
    p->note = note;
    p->stage = stage;
    p->user = &o;
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    if (xf_optimize_file(o.model, o.output, p, &r, &err) != XF_OK) {
        fprintf(stderr, "rlflow-agent: %s\n", err.msg);
        rc = r.input_error ? 2 : 1;
    } else {
        print_report(&o, &r);
        /* the model is written, the checkpoint is not */
        rc = r.learned.save_failed ? 1 : 0;
        if (o.report) rc = write_page(&o, &r) ? 1 : rc;
    }
    xf_optimize_report_free(&r);
    return rc;
}
