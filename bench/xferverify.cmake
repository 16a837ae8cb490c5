# bench_xferverify: xferverify -j N (and with --mpi N, mpirun -n N xferverify) on
# copies of a database (default: xfergen --vocab taso --max-ops 3 into a temporary
# one); prints counts, times, the per-candidate distribution, rank 0's write rate
# and a 64-rank projection.
if(TARGET xferverify AND TARGET xfergen)
  add_executable(bench_xferverify ${CMAKE_CURRENT_LIST_DIR}/xferverify.c)
  target_link_libraries(bench_xferverify PRIVATE xf_rulesdb xf_ir)
  target_compile_definitions(bench_xferverify PRIVATE
    XF_BIN_PATH="${CMAKE_BINARY_DIR}/tools")
  add_dependencies(bench_xferverify xferverify xfergen)
  xf_target_flags(bench_xferverify)
endif()
