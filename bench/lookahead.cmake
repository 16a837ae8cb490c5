# bench_lookahead: the look-ahead cases of issue 35 (modelzoo's lookahead-*
# models), where the cheapest graph under the proved rules is reached only
# through dearer ones: exhaustive search's optimum and bound, then random,
# greedy, TASO (alpha 1.05 and larger), the search look-ahead, PPO and the
# world-model agent over several seeds.
add_executable(bench_lookahead ${CMAKE_CURRENT_SOURCE_DIR}/lookahead.c
                               ${CMAKE_CURRENT_SOURCE_DIR}/agent_runner.c)
target_link_libraries(bench_lookahead PRIVATE xf_optimize xf_modelzoo)
target_compile_definitions(bench_lookahead PRIVATE
  XF_BENCH_TOOLS_DIR="$<TARGET_FILE_DIR:rlflow-agent>")
add_dependencies(bench_lookahead rlflow-agent)
xf_target_flags(bench_lookahead)
