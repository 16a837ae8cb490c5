# bench_dynamic: rlflow-agent on the real models, then the written models
# against the originals in ONNX Runtime at three sizes of each symbolic dim
# (max error, latency ratio).
add_executable(bench_dynamic ${CMAKE_CURRENT_SOURCE_DIR}/dynamic.c
                             ${CMAKE_CURRENT_SOURCE_DIR}/agent_runner.c)
target_link_libraries(bench_dynamic PRIVATE xf_optimize xf_target xf_onnx xf_ir m)
target_compile_definitions(bench_dynamic PRIVATE
  XF_BENCH_MODELS_DIR="${CMAKE_SOURCE_DIR}/../shared/models"
  XF_BENCH_AGENT="$<TARGET_FILE:rlflow-agent>"
  XF_BENCH_XFERGEN="$<TARGET_FILE:xfergen>"
  XF_BENCH_XFERVERIFY="$<TARGET_FILE:xferverify>")
add_dependencies(bench_dynamic rlflow-agent xfergen xferverify)
xf_target_flags(bench_dynamic)
