# bench_env_step: the optimisation environment's step time (median, p10,
# p90 and per part) on modelzoo BERT-base and ResNet-50 with the proved
# rules of a taso 3-operator database.
add_executable(bench_env_step ${CMAKE_CURRENT_SOURCE_DIR}/env_step.c
                              ${CMAKE_CURRENT_SOURCE_DIR}/agent_runner.c)
target_link_libraries(bench_env_step PRIVATE xf_optimize)
target_link_libraries(bench_env_step PRIVATE xf_agent xf_costmodel xf_rulesdb xf_onnx xf_ir)
target_compile_definitions(bench_env_step PRIVATE
  XF_BENCH_MODELZOO="$<TARGET_FILE:modelzoo>"
  XF_BENCH_XFERGEN="$<TARGET_FILE:xfergen>"
  XF_BENCH_XFERVERIFY="$<TARGET_FILE:xferverify>")
add_dependencies(bench_env_step modelzoo xfergen xferverify)
xf_target_flags(bench_env_step)
