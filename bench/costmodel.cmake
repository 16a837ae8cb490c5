# bench_costmodel: estimated cost (sum of operators) vs measured end-to-end
# latency on oneDNN, rank correlation over model variants written by
# modelzoo, and oneDNN executor vs reference interpreter speed.
add_executable(bench_costmodel ${CMAKE_CURRENT_SOURCE_DIR}/costmodel.c)
target_link_libraries(bench_costmodel PRIVATE xf_costmodel xf_onnx xf_ir)
target_compile_definitions(bench_costmodel PRIVATE
  XF_BENCH_MODELS_DIR="${CMAKE_SOURCE_DIR}/../shared/models"
  XF_BENCH_MODELZOO="$<TARGET_FILE:modelzoo>")
add_dependencies(bench_costmodel modelzoo)
xf_target_flags(bench_costmodel)
