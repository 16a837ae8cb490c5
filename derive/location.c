/*
 * location.c — where a derivation step applies, as stored in the rules
 * database: the indices of the graph nodes the rule's source operators
 * matched, in the rule's source node order, comma-separated ("2,0"). The
 * graph is the one the previous steps made from the rule's source (loaded
 * from the database, nodes in canonical order), and every rewrite numbers
 * its nodes deterministically, so replaying the chain finds the same nodes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "derive_internal.h"

void derive_step_of(const xf_ruleset *rs, int action, const xf_match *m, xf_rulesdb_step *s)
{
    int64_t id = xf_ruleset_rule_id(rs, action);
    s->by_rule = id < 0 ? -id : id;
    s->backward = id < 0;
    s->from_target = 0;
    xf_strbuf b = {s->location, sizeof s->location, 0, 0};
    s->location[0] = '\0';
    for (int k = 0; k < m->n_nodes; k++) xf_strbuf_printf(&b, k ? ",%d" : "%d", m->nodes[k]);
}

int derive_location_parse(const char *text, int *nodes, int max)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 1 << 30 || n == max) return -1;
        nodes[n++] = (int)v;
        if (*end == ',' && end[1] != '\0') end++;
        else if (*end) return -1;
        p = end;
    }
    return n > 0 ? n : -1;
}
