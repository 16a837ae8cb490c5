# bench_agents: random, greedy, TASO search, the hand passes, model-free PPO,
# the world-model agent and a pre-trained agent through rlflow-agent on real
# models, judged in the target, several seeds; and a τ sweep of the
# world-model agent. Its default rules are the build's (rules-default).
add_executable(bench_agents ${CMAKE_CURRENT_SOURCE_DIR}/agents.c
                            ${CMAKE_CURRENT_SOURCE_DIR}/agent_runner.c)
target_link_libraries(bench_agents PRIVATE xf_pages)
target_compile_definitions(bench_agents PRIVATE
  XF_BENCH_MODELS_DIR="${CMAKE_SOURCE_DIR}/../shared/models"
  XF_BENCH_MODELZOO="$<TARGET_FILE:modelzoo>"
  XF_BENCH_AGENT="$<TARGET_FILE:rlflow-agent>"
  XF_BENCH_TOOLS_DIR="$<TARGET_FILE_DIR:rlflow-agent>"
  XF_BENCH_XFERGEN="$<TARGET_FILE:xfergen>"
  XF_BENCH_XFERVERIFY="$<TARGET_FILE:xferverify>")
add_dependencies(bench_agents modelzoo rlflow-agent xfergen xferverify)
xf_target_flags(bench_agents)
