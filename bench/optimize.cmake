# bench_optimize: greedy and TASO search through rlflow-agent on the shared
# models and modelzoo configurations, and the environment's step time on a
# BERT-base-sized graph.
add_executable(bench_optimize ${CMAKE_CURRENT_SOURCE_DIR}/optimize.c
                              ${CMAKE_CURRENT_SOURCE_DIR}/agent_runner.c)
target_link_libraries(bench_optimize PRIVATE xf_optimize)
target_compile_definitions(bench_optimize PRIVATE
  XF_BENCH_MODELS_DIR="${CMAKE_SOURCE_DIR}/../shared/models"
  XF_BENCH_MODELZOO="$<TARGET_FILE:modelzoo>"
  XF_BENCH_AGENT="$<TARGET_FILE:rlflow-agent>"
  XF_BENCH_XFERGEN="$<TARGET_FILE:xfergen>"
  XF_BENCH_XFERVERIFY="$<TARGET_FILE:xferverify>"
  XF_BENCH_ENV_STEP="$<TARGET_FILE:bench_env_step>")
add_dependencies(bench_optimize modelzoo rlflow-agent xfergen xferverify bench_env_step)
xf_target_flags(bench_optimize)
