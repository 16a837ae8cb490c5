# bench_chain: one chain of view moves (proved rules) applied step by step to
# modelzoo BERT, the way the searches' look-ahead applies them, with the
# cost after each step (issue 28).
add_executable(bench_chain ${CMAKE_CURRENT_SOURCE_DIR}/chain.c)
target_link_libraries(bench_chain PRIVATE xf_agent xf_costmodel xf_rulesdb xf_onnx xf_ir)
target_compile_definitions(bench_chain PRIVATE XF_BENCH_MODELZOO="$<TARGET_FILE:modelzoo>")
add_dependencies(bench_chain modelzoo)
xf_target_flags(bench_chain)
