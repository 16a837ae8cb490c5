/*
 * axiom_check.c — the axioms' self-check (xferverify --check-axioms): each
 * axiom validated on its concrete instances (axiom_instances.c) by the
 * bounded element-wise check, and tried for redundancy (does it follow
 * from the others? TASO's check). A refuted instance is a wrong axiom. Was
 * xferverify's own code; the tool now prints the rows this hands it.
 */
#include "verify.h"

#include <stdio.h>
#include <string.h>

static void say(const xf_axiom_check_options *o, const char *fmt, ...) XF_PRINTF(2, 3);
static void say(const xf_axiom_check_options *o, const char *fmt, ...)
{
    if (!o->problem) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->problem(o->user, msg);
}

/* Bounded check of every instance of axiom i: "valid" when all are, else
 * the worst verdict ("REFUTED" first); "not checked" when it has none. */
static const char *check_instances(const xf_axiom_check_options *o, xf_verifier *v, int i,
                                   int *n_inst, xf_axiom_check_summary *s)
{
    const char *name = xf_verify_axiom(i)->name, *verdict = "valid";
    *n_inst = 0;
    for (int k = 0; k < xf_verify_axiom_instance_count(); k++) {
        const xf_axiom_instance *in = xf_verify_axiom_instance(k);
        if (strcmp(in->axiom, name) != 0) continue;
        (*n_inst)++;
        xf_rule r;
        xf_error err;
        xf_bounded b;
        xf_bounded_init(&b);
        xf_status st = xf_verify_axiom_instance_rule(in, &r, &err);
        if (st == XF_OK) st = xf_verify_bounded(v, &r, &b, &err);
        xf_rule_free(&r);
        if (st != XF_OK) {
            say(o, "axiom %s: %s", name, err.msg);
            s->errors++;
            verdict = "error";
        } else if (b.result == XF_BOUNDED_REFUTED) {
            say(o, "WRONG AXIOM %s: the bounded check refutes its instance %s => %s (%s)", name,
                in->src, in->dst, b.detail);
            s->refuted++;
            verdict = "REFUTED";
        } else if (b.result != XF_BOUNDED_VALID && strcmp(verdict, "valid") == 0) {
            say(o, "axiom %s: instance %s => %s is %s (%s)", name, in->src, in->dst,
                xf_bounded_result_name(b.result), b.detail);
            verdict = xf_bounded_result_name(b.result);
        }
        xf_bounded_free(&b);
    }
    return *n_inst ? verdict : "not checked";
}

xf_status xf_verify_check_axioms(const xf_axiom_check_options *o, xf_axiom_check_summary *s,
                                 xf_error *err)
{
    memset(s, 0, sizeof *s);
    xf_verifier *v = NULL;
    xf_status st = xf_verifier_new(&o->vo, &v, err);
    if (st) return st;
    s->axioms = xf_verify_axiom_count();
    for (int k = 0; k < xf_verify_axiom_instance_count(); k++)
        if (xf_verify_axiom_find(xf_verify_axiom_instance(k)->axiom) < 0) {
            say(o, "instance %d names no axiom ('%s')", k, xf_verify_axiom_instance(k)->axiom);
            s->errors++;
        }
    for (int i = 0; i < s->axioms; i++) {
        double t0 = xf_clock_now();
        xf_axiom_check c;
        memset(&c, 0, sizeof c);
        c.name = xf_verify_axiom(i)->name;
        c.bounded = check_instances(o, v, i, &c.instances, s);
        s->with_instances += c.instances > 0;
        s->valid += strcmp(c.bounded, "valid") == 0;
        xf_proof p;
        memset(&p, 0, sizeof p);
        p.result = XF_PROOF_UNKNOWN;
        xf_error rerr;
        c.redundancy = "error";
        if (xf_verify_axiom_redundant(v, i, &p, &rerr) != XF_OK) {
            say(o, "axiom %s: %s", c.name, rerr.msg);
            s->errors++;
        } else {
            c.redundancy = p.result == XF_PROOF_PROVED    ? "redundant"
                           : p.result == XF_PROOF_UNKNOWN ? "not derived"
                                                          : "independent";
            s->redundant += p.result == XF_PROOF_PROVED;
        }
        c.derived_from = p.result == XF_PROOF_PROVED ? p.core_names : "";
        c.seconds = xf_clock_now() - t0;
        if (o->row) o->row(o->user, &c);
    }
    xf_verifier_free(v);
    return XF_OK;
}
