/*
 * agent_fixture.h — the fixture of the agent suites (test_agent_env.c,
 * test_agent_arbiter.c, test_agent_fused.c, test_agent_search.c,
 * test_agent_ppo.c, test_agent_wm.c and, for its graph builders,
 * test_agent_gnn.c; test_onnx_import.c and test_real_models.c for ONNX
 * Runtime): ONNX Runtime when installed, two model files compared in it
 * at some sizes of their symbolic dims, an analytic cost model
 * (100 GFLOP/s, 10 GB/s, 2 us per kernel, no cache file), graph-building
 * shorthands that fail the running test on error, a rule set of two
 * hand-built rules and their reverses, and an environment over a graph of
 * the suite's own with both:
 *   id 1: relu(conv(x0, w0)) => conv[act=relu](x0, w0)
 *   id 2: matmul(m0, m1), matmul(m0, m2) => split(matmul(m0, concat[axis=1](m1, m2)))
 * Built only with the agent module (tests/CMakeLists.txt).
 */
#ifndef XF_TESTS_AGENT_FIXTURE_H
#define XF_TESTS_AGENT_FIXTURE_H

#include "agent/search/search.h"
#include "onnx/onnx.h"
#include "optimize/optimize.h"
#include "rulesdb/rulesdb.h"

/* ONNX Runtime at one thread (xf_target_close it), NULL when it is not
 * installed (the caller skips); any other failure fails the test. */
xf_target *xf_fx_target(void);
/* Analytic cost model (xf_cost_close it). */
xf_cost_model *xf_fx_cost_model(void);
/* g's cost through the memo (ms), each node's in per[] (g has at most
 * cap nodes, checked). */
double xf_fx_graph_costs(xf_costmemo *m, const xf_graph *g, xf_op_cost *per, int cap);
/* Cost of op with params p (NULL: defaults) on n float32 inputs of shapes
 * sh, by cm alone: the independent figure a search result is checked against. */
xf_op_cost xf_fx_cost_of(xf_cost_model *cm, xf_op op, const xf_params *p, int n,
                         const xf_shape *sh);
/* Shape of the given rank from the first `rank` of a, b, c, d. */
xf_shape xf_fx_shape(int rank, int64_t a, int64_t b, int64_t c, int64_t d);
/* 3x3 conv, stride 1, pads 1, group 1, fused activation act. */
xf_params xf_fx_conv3x3(int act);
/* Output of op on a (and b when b >= 0) with params p (NULL: defaults). */
int xf_fx_op(xf_graph *g, xf_op op, const xf_params *p, int a, int b);
/* A float graph input; a float constant of uniform values in [-1, 1). */
int xf_fx_input(xf_graph *g, const char *name, xf_shape s);
int xf_fx_weight(xf_graph *g, const char *name, xf_shape s, uint64_t seed);
/* Marks v as a graph output. */
void xf_fx_output(xf_graph *g, int v);
/* g (initialised here) = (a + b) + c over three [4,4] inputs a, b, c. */
void xf_fx_two_adds(xf_graph *g);
/* A 4-axis transpose of the last two axes. */
xf_params xf_fx_swap_last_two(void);
/* x [1,4,8,8] -> 3x3 conv without bias -> two transposes of the last two
 * axes -> relu, into g; the relu's output. The transposes keep the importer
 * from fusing the relu into the conv. */
int xf_fx_unfused_conv_relu(xf_graph *g);
/* xf_fx_unfused_conv_relu's output, and a [rows,cols] input a times two
 * [cols,1] weights m1, m2 (reading a dominates: merging the two products
 * reads it once), each an output: the model both rules apply to. */
void xf_fx_conv_relu_and_two_matmuls(xf_graph *g, int64_t rows, int64_t cols);
/* The two rules above (r is initialised here). */
void xf_fx_rule_conv_relu(xf_rule *r);
void xf_fx_rule_matmul_merge(xf_rule *r);
/* Both rules, validated, with ids 1 and 2 and their reverses. */
xf_ruleset *xf_fx_rules(void);
/* The same two rules as ids 1 and 2 of a new rules database at path, with
 * status `status`. */
void xf_fx_write_rules_db(const char *path, xf_rule_status status);
/* Options of an optimisation with the rules at db: a search of that kind
 * on the analytic backend, roofline fixed, no cache file, no latency:
 * nothing measured. */
xf_optimize_options xf_fx_quiet_options(const char *db, xf_search_kind kind);

/* The search suites' graph: x -> [conv -> relu] x 3, and matmul(a, m1),
 * matmul(a, m2), matmul(b, m3), matmul(b, m4) with a: [64,256], m: [256,16]:
 * five rewrites (three fusions, two merges) from its optimum. */
void xf_fx_search_graph(xf_graph *g);

/* A one-block transformer over x [1,5,8] (2 heads; attention scaled by a
 * scalar constant; MLP 8->16->8 with GELU; pre-LN, residual adds) whose
 * head reads one position: a final layer norm, Gather(axis 1, constant
 * index `position`) and a [8,3] matmul, the model's output. With
 * stream_output the block's residual stream after attention is a graph
 * output too. */
void xf_fx_class_token_graph(xf_graph *g, int64_t position, int stream_output);

/* A prepared graph `work` of `model` computes model's function (within
 * 1e-5) after ONNX export and import and after xf_agent_finish, on inputs
 * of seeds `seed` and seed + 1. */
void xf_fx_expect_written_same(const xf_graph *model, const xf_graph *work, uint64_t seed);

/* The model file `written` against the original file `orig` in the target
 * at the sizes of o (each imported at them; both run as files, on the
 * same inputs): every output element within atol + rtol*|original's|
 * (xf_tensor_close), `at` naming the sizes in a failure. */
void xf_fx_expect_same_in_target(xf_target *t, const char *orig, const char *written,
                                 const xf_onnx_options *o, double rtol, double atol,
                                 const char *at);

/* An environment over the cost model and the rule set above. */
typedef struct xf_fx_env {
    xf_cost_model *cm;
    xf_ruleset *rs;
    xf_graph g;
    xf_env *e;
} xf_fx_env;

/* Opens f: the cost model, the rules, f->g as build makes it, and the
 * environment over them with options opt. */
void xf_fx_env_open(xf_fx_env *f, void (*build)(xf_graph *g), const xf_env_options *opt);
void xf_fx_env_close(xf_fx_env *f);

/* A tied embedding: x [2,3,H] + Gather(E [V,H], constant ids) -> MatMul(.,
 * E^T) [2,3,V], E^T a constant of its own (as the importer folds GPT-2's
 * head); with `other`, E also feeds an Add graph output. *e, *et: the two
 * constants. V x H is 2^20, the smallest table xf_gather_tied rewrites. */
enum { XF_FX_TIED_V = 1024, XF_FX_TIED_H = 1024 };
void xf_fx_tied_graph(xf_graph *g, int other, int *e, int *et);

/* A rule set of r alone, one direction; frees r. */
xf_ruleset *xf_fx_one_rule_set(xf_rule *r);
/* The locations of rs's first rule in g, at most cap of them into m. */
int xf_fx_locations(const xf_ruleset *rs, const xf_graph *g, xf_match *m, int cap);

#endif /* XF_TESTS_AGENT_FIXTURE_H */
