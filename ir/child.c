/*
 * child.c — xf_child_dies_with_parent: a forked worker process (xferverify's
 * derive workers and per-rule verifier workers) asks the kernel to kill it
 * when its parent dies. Without it a parent stopped by SIGTERM or SIGKILL
 * (`timeout`, a job stopped by its user) left its derive workers searching
 * on their own for minutes, holding CPU and memory, until their next write
 * to the closed pipe. Linux's PR_SET_PDEATHSIG; elsewhere a no-op.
 */
#include "ir/ir.h"

#include <signal.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

void xf_child_dies_with_parent(long parent)
{
#ifdef __linux__
    /* the signal comes when the forking *thread* ends: the callers fork
     * from the thread that waits for their workers. A kernel that refuses
     * it leaves the worker as before (it ends at its next write to the
     * closed pipe) */
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* the parent died between the fork and the prctl: nobody is left to
     * read this worker's answer */
    if ((long)getppid() != parent) _exit(1);
#else
    (void)parent;
#endif
}
