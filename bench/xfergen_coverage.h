/*
 * xfergen_coverage.h — how many of TASO's rules (the reference files in
 * shared/reference) have an equivalent among the rules of an xfergen
 * database. Shared by bench/xfergen.c and bench/xfergen_coverage.c only.
 */
#ifndef XF_BENCH_XFERGEN_COVERAGE_H
#define XF_BENCH_XFERGEN_COVERAGE_H

#include <stdio.h>

#include "ir/ir.h"

/* Compares the rules of TASO's readable rule file `taso_txt` (one rule per
 * line: "INDEX<TAB>src => dst ; src => dst") with every rule in the rules
 * database `db` and prints the counts (and up to `show_missing` rules that
 * have no equivalent) to `out`. */
xf_status xfb_coverage(const char *db, const char *taso_txt, const char *label, int show_missing,
                       FILE *out, xf_error *err);

#endif
