# bench_xferverify: xfergen --vocab taso --max-ops 3 into a temporary database
# (or a given one), then xferverify -j 2; prints counts, wall time, rules/s.
if(TARGET xferverify AND TARGET xfergen)
  add_executable(bench_xferverify ${CMAKE_CURRENT_LIST_DIR}/xferverify.c)
  target_link_libraries(bench_xferverify PRIVATE xf_rulesdb xf_ir)
  target_compile_definitions(bench_xferverify PRIVATE
    XF_BIN_PATH="${CMAKE_BINARY_DIR}/tools")
  add_dependencies(bench_xferverify xferverify xfergen)
  xf_target_flags(bench_xferverify)
endif()
