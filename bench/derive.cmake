# bench_derive: the derive pass of one size of a rules database, read-only,
# at given search bounds; prints derived / left, graphs searched and time.
add_executable(bench_derive ${CMAKE_CURRENT_LIST_DIR}/derive.c)
target_link_libraries(bench_derive PRIVATE xf_derive xf_rulesdb xf_ir)
xf_target_flags(bench_derive)
