# bench_xferverify_split: a fixed seeded sample of candidates per size decided in
# process; prints proof against bounded-check CPU time, verdicts, unknowns by
# reason and what lower resource limits would cost and save.
if(TARGET xf_verify)
  add_executable(bench_xferverify_split ${CMAKE_CURRENT_LIST_DIR}/xferverify_split.c)
  target_link_libraries(bench_xferverify_split PRIVATE xf_verify xf_rulesdb xf_ir)
  xf_target_flags(bench_xferverify_split)
endif()
