# bench_derive: the derive pass of one size of a rules database, read-only,
# at given search bounds; prints derived / left, graphs searched and time.
add_executable(bench_derive ${CMAKE_CURRENT_LIST_DIR}/derive.c)
target_link_libraries(bench_derive PRIVATE xf_derive xf_rulesdb xf_ir)
xf_target_flags(bench_derive)

# bench_derive_rounds: the solver's rounds at one size simulated with the
# stored verdicts (no solver call): what a derive pass between them saves.
add_executable(bench_derive_rounds ${CMAKE_CURRENT_LIST_DIR}/derive_rounds.c)
target_link_libraries(bench_derive_rounds PRIVATE xf_derive xf_match xf_rulesdb xf_ir)
xf_target_flags(bench_derive_rounds)
