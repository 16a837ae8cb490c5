# bench_agents: random, greedy, TASO search, model-free PPO and the
# world-model agent through rlflow-agent on real models, and a τ sweep of the
# world-model agent on BERT.
add_executable(bench_agents ${CMAKE_CURRENT_SOURCE_DIR}/agents.c
                            ${CMAKE_CURRENT_SOURCE_DIR}/agent_runner.c)
target_link_libraries(bench_agents PRIVATE xf_pages)
target_compile_definitions(bench_agents PRIVATE
  XF_BENCH_MODELS_DIR="${CMAKE_SOURCE_DIR}/../shared/models"
  XF_BENCH_MODELZOO="$<TARGET_FILE:modelzoo>"
  XF_BENCH_AGENT="$<TARGET_FILE:rlflow-agent>"
  XF_BENCH_XFERGEN="$<TARGET_FILE:xfergen>"
  XF_BENCH_XFERVERIFY="$<TARGET_FILE:xferverify>")
add_dependencies(bench_agents modelzoo rlflow-agent xfergen xferverify)
xf_target_flags(bench_agents)
