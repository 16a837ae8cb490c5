# bench_target: TASO search on the shared models and modelzoo configurations,
# then ONNX Runtime as the final arbiter at 1 and 2 threads (latency before
# and after, noise, the oneDNN executor for comparison), and the cost model's
# rank correlation with ONNX Runtime latency over the graphs the search saw,
# then the search again on the fusion-aware cost (fused regions timed in ONNX
# Runtime) with the arbiter after it.
add_executable(bench_target ${CMAKE_CURRENT_SOURCE_DIR}/target.c
                            ${CMAKE_CURRENT_SOURCE_DIR}/target_rank.c
                            ${CMAKE_CURRENT_SOURCE_DIR}/target_fused.c
                            ${CMAKE_CURRENT_SOURCE_DIR}/agent_runner.c)
target_link_libraries(bench_target PRIVATE xf_optimize)
target_link_libraries(bench_target PRIVATE xf_agent xf_target xf_costmodel xf_rulesdb xf_onnx xf_ir m)
target_compile_definitions(bench_target PRIVATE
  XF_BENCH_MODELS_DIR="${CMAKE_SOURCE_DIR}/../shared/models"
  XF_BENCH_MODELZOO="$<TARGET_FILE:modelzoo>"
  XF_BENCH_XFERGEN="$<TARGET_FILE:xfergen>"
  XF_BENCH_XFERVERIFY="$<TARGET_FILE:xferverify>")
add_dependencies(bench_target modelzoo xfergen xferverify)
xf_target_flags(bench_target)
