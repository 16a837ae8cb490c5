# bench_transfer: one agent trained over many models (rlflow-agent train),
# then loaded on held-out models against TASO search, in ONNX Runtime.
add_executable(bench_transfer ${CMAKE_CURRENT_SOURCE_DIR}/transfer.c
                              ${CMAKE_CURRENT_SOURCE_DIR}/agent_runner.c)
target_link_libraries(bench_transfer PRIVATE xf_optimize)
target_compile_definitions(bench_transfer PRIVATE
  XF_BENCH_MODELS_DIR="${CMAKE_SOURCE_DIR}/../shared/models"
  XF_BENCH_MODELZOO="$<TARGET_FILE:modelzoo>"
  XF_BENCH_AGENT="$<TARGET_FILE:rlflow-agent>")
add_dependencies(bench_transfer modelzoo rlflow-agent)
xf_target_flags(bench_transfer)
