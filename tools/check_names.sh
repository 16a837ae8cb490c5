#!/usr/bin/env bash
# check_names.sh — fails when a library exports a name that is neither its
# public API nor marked as the module's own, so `xf_` keeps meaning "public"
# and a reader can tell at a glance which module a private name belongs to
# (docs/design.md "Names", docs/architecture.md "Internal names").
#
#   tools/check_names.sh BUILD_DIR [ROOT]   # ROOT: source tree (default: this one)
#
# For every module in `modules` below whose static library BUILD_DIR holds,
# every external symbol the library defines (nm: functions and variables;
# names starting with "_" or "." are the compiler's and sanitizers') must
#  - be declared in the module's public header(s): its public API, or
#  - start with the module's internal prefix (a function or variable one file
#    of the module shares with its others, declared in a *_internal.h).
# A module listed with prefix "-" has no internal names: every external
# symbol must be public (file helpers are static). Modules whose internal
# names are still being renamed are not listed yet. A library the build did
# not make (cluster/ without MPI) is skipped and said. Each violation is
# printed as LIBRARY: SYMBOL (module M: neither in its public header nor
# prefixed P), and the script exits 1 when there is any (0 otherwise).
set -euo pipefail

build=${1:?usage: check_names.sh BUILD_DIR [ROOT]}
root=${2:-"$(cd "$(dirname "$0")/.." && pwd)"}

# module  library (under BUILD_DIR)                 internal prefix  public headers
modules=(
    "ir            ir/libxf_ir.a                      ir_      ir/ir.h"
    "onnx          onnx/libxf_onnx.a                  ox_      onnx/onnx.h"
    "cluster       cluster/libxf_cluster.a            -        cluster/cluster.h"
    "prune         prune/libxf_prune.a                pr_      prune/prune.h"
    "rulesdb       rulesdb/libxf_rulesdb.a            db_      rulesdb/rulesdb.h"
    "match         match/libxf_match.a                match_   match/match.h"
    "costmodel     costmodel/libxf_costmodel.a        cm_      costmodel/costmodel.h"
    "target        target/libxf_target.a              target_  target/target.h"
    "modelzoo      modelzoo/libxf_modelzoo.a          zoo_     modelzoo/modelzoo.h"
    "agent/nn      agent/nn/libxf_agent_nn.a          -        agent/nn/nn.h"
    "agent/rl      agent/rl/libxf_agent_rl.a          -        agent/rl/rl.h,agent/rl/gnn.h,agent/rl/ppo.h,agent/rl/wm.h"
    "enumerate     enumerate/libxf_enumerate.a        en_      enumerate/enumerate.h"
    "verify        verify/libxf_verify.a              vf_      verify/verify.h"
    "agent/rewrite agent/rewrite/libxf_agent_rewrite.a rw_     agent/rewrite/rewrite.h"
    "agent/search  agent/search/libxf_agent_search.a  search_  agent/search/search.h"
    "derive        derive/libxf_derive.a              derive_  derive/derive.h"
    "audit         audit/libxf_audit.a                audit_   audit/audit.h"
    "optimize      optimize/libxf_optimize.a          opt_     optimize/optimize.h"
    "pages         pages/libxf_pages.a                pg_      pages/pages.h"
    "tools/cli     tools/cli.build/libxf_cli.a        -        tools/cli/cli.h"
)

status=0
checked=0
for row in "${modules[@]}"; do
    read -r mod lib prefix headers <<<"$row"
    if [ ! -f "$build/$lib" ]; then
        echo "check_names: $mod: no $lib in $build (not built here), skipped" >&2
        continue
    fi
    checked=$((checked + 1))
    # the words of the public header(s): a symbol is public when one of them names it
    declare -A public=()
    IFS=, read -r -a hs <<<"$headers"
    for h in "${hs[@]}"; do
        while read -r w; do public[$w]=1; done < <(grep -oE '\b[A-Za-z_][A-Za-z0-9_]*\b' "$root/$h" | sort -u)
    done
    while read -r sym; do
        [ -n "${public[$sym]+x}" ] && continue
        if [ "$prefix" != - ] && [[ $sym == "$prefix"* ]]; then continue; fi
        if [ "$prefix" = - ]; then
            echo "$lib: $sym (module $mod: not in its public header, and it has no internal names: make it static)"
        else
            echo "$lib: $sym (module $mod: neither in its public header nor prefixed $prefix)"
        fi
        status=1
    done < <(nm -g --defined-only "$build/$lib" 2>/dev/null |
             awk 'NF == 3 && $2 ~ /^[TDBRCVG]$/ && $3 !~ /^[_.]/ { print $3 }' | sort -u)
    unset public
done

if [ "$checked" -eq 0 ]; then
    echo "check_names: no library of the table found under $build" >&2
    exit 1
fi
if [ "$status" -ne 0 ]; then
    echo "check_names: a library exports a name that is neither public nor its module's internal prefix (see above)" >&2
fi
exit "$status"
