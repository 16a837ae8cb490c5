# bench_passes: rlflow-agent --passes rules, expert and both (and rules with
# the old vocabulary's rules) on the shared and modelzoo transformers at
# batch 1, 4 and with a symbolic batch, timed in ONNX Runtime (issue 28).
add_executable(bench_passes ${CMAKE_CURRENT_SOURCE_DIR}/passes.c
                            ${CMAKE_CURRENT_SOURCE_DIR}/agent_runner.c)
target_link_libraries(bench_passes PRIVATE xf_optimize)
target_link_libraries(bench_passes PRIVATE xf_target xf_onnx xf_ir m)
target_compile_definitions(bench_passes PRIVATE
  XF_BENCH_MODELS_DIR="${CMAKE_SOURCE_DIR}/../shared/models"
  XF_BENCH_REBATCH="${CMAKE_CURRENT_SOURCE_DIR}/rebatch.py"
  XF_BENCH_MODELZOO="$<TARGET_FILE:modelzoo>"
  XF_BENCH_AGENT="$<TARGET_FILE:rlflow-agent>"
  XF_BENCH_XFERGEN="$<TARGET_FILE:xfergen>"
  XF_BENCH_XFERVERIFY="$<TARGET_FILE:xferverify>")
add_dependencies(bench_passes modelzoo rlflow-agent xfergen xferverify)
xf_target_flags(bench_passes)
