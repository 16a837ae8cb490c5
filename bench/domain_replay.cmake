# bench_domain_replay: every derived rule's stored chain replayed and its
# validity domain composed again, compared with the stored one; prints how
# many change and how many chains fail (read-only).
add_executable(bench_domain_replay ${CMAKE_CURRENT_LIST_DIR}/domain_replay.c)
target_link_libraries(bench_domain_replay PRIVATE xf_derive xf_rulesdb xf_ir)
xf_target_flags(bench_domain_replay)
