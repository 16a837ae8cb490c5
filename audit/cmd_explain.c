/*
 * cmd_explain.c — a derived rule's proof in xferdb. `xferdb show` lists the
 * chain as stored (audit_show_derivation): each step's rule with its
 * infix, the direction it was applied in, where, and whether it applies to
 * the source's side or the target's. `xferdb explain DB ID` replays the
 * chain with derive/'s checker (xf_derive_replay): every step again, the
 * graph it makes, and whether the two sides are joined; exit 1 when the
 * chain does not replay or the rule has none (then it says what the rule's
 * status rests on instead).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "derive/derive.h"
#include "audit_impl.h"

static void print_step(FILE *out, int i, const xf_rulesdb_step *s, const char *src, const char *dst)
{
    fprintf(out, "  %d. rule %" PRId64 " %s at node%s %s%s: %s => %s\n", i + 1, s->by_rule,
           s->backward ? "backward" : "forward", strchr(s->location, ',') ? "s" : "",
           s->location, s->from_target ? " (on the target's side)" : "",
           s->backward ? dst : src, s->backward ? src : dst);
}

void audit_show_derivation(FILE *out, xf_rulesdb *db, const xf_rulesdb_rule_info *info)
{
    xf_rulesdb_step *steps = NULL;
    int n = 0;
    xf_error err;
    if (xf_rulesdb_get_derivation(db, info->id, &steps, &n, &err) != XF_OK) {
        fprintf(out, "derivation: cannot be read: %s\n", err.msg);
        return;
    }
    if (n == 0) {
        if (info->status == XF_RULE_DERIVED) fprintf(out, "derivation: none stored\n");
        return;
    }
    fprintf(out, "derivation: %d step%s (xferdb explain replays it)\n", n, n == 1 ? "" : "s");
    xf_rulesdb_rule_info by;
    xf_rulesdb_rule_info_init(&by);
    for (int i = 0; i < n; i++) {
        if (xf_rulesdb_get_rule(db, steps[i].by_rule, &by, &err) == XF_OK)
            print_step(out, i, &steps[i], by.src_text ? by.src_text : "?",
                       by.dst_text ? by.dst_text : "?");
        else
            fprintf(out, "  %d. rule %" PRId64 ": %s\n", i + 1, steps[i].by_rule, err.msg);
    }
    xf_rulesdb_rule_info_free(&by);
    xf_free(steps);
}

static void on_step(void *user, int i, const xf_rulesdb_step *s, const xf_rulesdb_rule_info *by,
                    const xf_graph *after)
{
    FILE *out = user;
    print_step(out, i, s, by->src_text ? by->src_text : "?", by->dst_text ? by->dst_text : "?");
    xf_error err;
    char *text = audit_format(after, &err);
    fprintf(out, "     now: %s\n", text ? text : err.msg);
    xf_free(text);
}

int xf_audit_explain(FILE *out, xf_rulesdb *db, const xf_audit_options *o)
{
    int64_t id = audit_parse_id(o->id);
    if (!id) return 2;
    xf_rulesdb_rule_info info;
    xf_rule r;
    int rc = audit_load(db, id, &info, &r);
    xf_rulesdb_step *steps = NULL;
    int n = 0;
    xf_error err;
    if (rc == 0 && xf_rulesdb_get_derivation(db, id, &steps, &n, &err) != XF_OK) {
        audit_error(&err);
        rc = 1;
    }
    if (rc == 0 && n == 0) {
        fprintf(out, "rule %" PRId64 " is %s and has no derivation%s\n", id,
               xf_rulesdb_status_name(info.status),
               info.status == XF_RULE_PROVED ? " (the solver proved it: xferdb show lists the "
                                               "axioms)"
                                             : "");
        rc = 1;
    }
    if (rc == 0) {
        fprintf(out, "rule %" PRId64 " (%s)\nsource: %s\ntarget: %s\n", id,
               xf_rulesdb_status_name(info.status), info.src_text, info.dst_text);
        fprintf(out, "derivation: %d step%s, replayed\n", n, n == 1 ? "" : "s");
        if (xf_derive_replay(db, id, &r, steps, n, on_step, out, &err) != XF_OK) {
            fprintf(out, "DOES NOT REPLAY: %s\n", err.msg);
            rc = 1;
        } else {
            fprintf(out, "joined: the steps turn the source into the target using only rules that "
                   "are proved or derived and smaller\n");
        }
    }
    xf_free(steps);
    xf_rule_free(&r);
    xf_rulesdb_rule_info_free(&info);
    return rc;
}
