# bench_scale: rlflow-agent --target ort on modelzoo models of BERT-base,
# GPT-2-small and ViT-B size (and the 2.7 GB BERT): peak resident memory and
# wall time beside the weight bytes, at 1 and 2 threads (issue 29).
add_executable(bench_scale ${CMAKE_CURRENT_SOURCE_DIR}/scale.c
                           ${CMAKE_CURRENT_SOURCE_DIR}/agent_runner.c)
target_link_libraries(bench_scale PRIVATE xf_optimize)
target_link_libraries(bench_scale PRIVATE xf_ir m)
target_compile_definitions(bench_scale PRIVATE
  XF_BENCH_AGENT="$<TARGET_FILE:rlflow-agent>"
  XF_BENCH_MODELZOO="$<TARGET_FILE:modelzoo>"
  XF_BENCH_XFERGEN="$<TARGET_FILE:xfergen>"
  XF_BENCH_XFERVERIFY="$<TARGET_FILE:xferverify>")
add_dependencies(bench_scale rlflow-agent modelzoo xfergen xferverify)
xf_target_flags(bench_scale)
