# bench_domain_probe: every proved or derived rule of a database run in floats
# at random shapes inside its validity domain (dims up to 5); prints the rules
# found false there (a soundness audit of domains).
add_executable(bench_domain_probe ${CMAKE_CURRENT_LIST_DIR}/domain_probe.c)
target_link_libraries(bench_domain_probe PRIVATE xf_verify xf_rulesdb xf_ir m)
xf_target_flags(bench_domain_probe)
