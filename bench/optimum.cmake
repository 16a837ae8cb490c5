# bench_optimum: small modelzoo transformers (BERT, ViT, GPT) optimised by
# greedy, TASO, PPO and the world model against the optimum the exhaustive
# search proves under the rules (issue 35's ">= 5% better than TASO, or no
# better graph exists").
add_executable(bench_optimum ${CMAKE_CURRENT_SOURCE_DIR}/optimum.c
                             ${CMAKE_CURRENT_SOURCE_DIR}/agent_runner.c)
target_link_libraries(bench_optimum PRIVATE xf_optimize xf_modelzoo)
target_compile_definitions(bench_optimum PRIVATE
  XF_BENCH_TOOLS_DIR="$<TARGET_FILE_DIR:rlflow-agent>")
add_dependencies(bench_optimum rlflow-agent)
xf_target_flags(bench_optimum)
