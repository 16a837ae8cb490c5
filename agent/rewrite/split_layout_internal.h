/*
 * split_layout_internal.h — (private to agent/rewrite/) the step of xf_agent_prepare
 * that reshapes and transposes a merged projection once, before it is
 * split into its parts, instead of each part after the split (a GPT's
 * merged Q/K/V taken to heads). See split_layout.c.
 */
#ifndef XF_AGENT_REWRITE_SPLIT_LAYOUT_INTERNAL_H
#define XF_AGENT_REWRITE_SPLIT_LAYOUT_INTERNAL_H

#include "ir/ir.h"

/* Rewrites g in place (nodes renumbered). *n_merged receives how many
 * splits now follow one reshape and one transpose of their input. Fails
 * only when out of memory or on a broken invariant (g is then unusable and
 * must be freed). */
xf_status rw_split_layout_merge(xf_graph *g, int *n_merged, xf_error *err);

#endif /* XF_AGENT_REWRITE_SPLIT_LAYOUT_INTERNAL_H */
