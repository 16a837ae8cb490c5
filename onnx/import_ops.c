/* import_ops.c — TEMPORARY placeholder while the real op mapping is written. */
#include "import_internal.h"
xf_status imp_map_node(imp_state *st, xf_error *err) { return imp_emit_opaque(st, "placeholder", err); }
