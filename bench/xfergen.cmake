# bench_xfergen: runs the xfergen binary (TASO vocabulary at 3 ops, default
# vocabulary at 3 and, with --max4, 4 ops) and compares with TASO's rules.
if(TARGET xfergen)
  add_executable(bench_xfergen ${CMAKE_CURRENT_LIST_DIR}/xfergen.c
                               ${CMAKE_CURRENT_LIST_DIR}/xfergen_coverage.c)
  target_link_libraries(bench_xfergen PRIVATE xf_rulesdb xf_ir)
  target_compile_definitions(bench_xfergen PRIVATE
    XF_XFERGEN_PATH="${CMAKE_BINARY_DIR}/tools/xfergen"
    XF_SHARED_DEFAULT="${CMAKE_SOURCE_DIR}/../shared")
  add_dependencies(bench_xfergen xfergen)
  xf_target_flags(bench_xfergen)
endif()
