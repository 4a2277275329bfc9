/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "slice.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

/* The only flag a fair task carries that sched_setattr takes back. */
#define FLAG_RESET_ON_FORK 0x01ull

/* A slice is a property of the fair class; SCHED_IDLE is fair too, but the
 * kernel sets custom slices only for SCHED_OTHER and SCHED_BATCH. */
static bool fair_policy(uint32_t policy) { return policy == SCHED_OTHER || policy == SCHED_BATCH; }

static void reason(struct slice_support *s, const char *what, int err)
{
    if (err)
        snprintf(s->reason, sizeof s->reason, "%s: %s", what, strerror(-err));
    else
        snprintf(s->reason, sizeof s->reason, "%s", what);
}

static struct sysops_sched_attr with_runtime(const struct sysops_sched_attr *a, uint64_t runtime_ns)
{
    struct sysops_sched_attr r = *a;
    r.runtime_ns = runtime_ns;
    r.flags &= FLAG_RESET_ON_FORK;
    return r;
}

int slice_detect(const struct sysops *ops, struct slice_support *ret)
{
    *ret = (struct slice_support){.supported = false};
    struct sysops_sched_attr orig, back;
    int r = ops->getattr(ops->userdata, 0, &orig);
    if (r < 0) {
        reason(ret, "sched_getattr", r);
        return 0;
    }
    if (!fair_policy(orig.policy)) {
        reason(ret, "the daemon does not run as SCHED_OTHER or SCHED_BATCH, cannot test", 0);
        return 0;
    }
    /* A value the thread does not have already, so reading it back proves
     * the kernel took it. */
    uint64_t probe = orig.runtime_ns == 300000 ? 400000 : 300000;
    struct sysops_sched_attr want = with_runtime(&orig, probe);
    r = ops->setattr(ops->userdata, 0, &want);
    if (r < 0) {
        /* ENOSYS: no sched_setattr; EINVAL/E2BIG: a kernel that rejects the
         * attribute; EPERM: not allowed to change our own scheduling. */
        reason(ret, "sched_setattr", r);
        return 0;
    }
    r = ops->getattr(ops->userdata, 0, &back);
    bool took = r >= 0 && back.runtime_ns == probe;
    if (r < 0)
        reason(ret, "sched_getattr after sched_setattr", r);
    else if (!took)
        /* Before 6.12 the fair class ignores sched_runtime and reports 0. */
        reason(ret, "kernel ignores sched_runtime for SCHED_OTHER (before 6.12)", 0);

    /* Back to the default slice (runtime 0), which also tells us what the
     * default is; then to our own custom slice if we started with one. */
    want = with_runtime(&orig, 0);
    r = ops->setattr(ops->userdata, 0, &want);
    if (r < 0)
        goto restore_failed;
    r = ops->getattr(ops->userdata, 0, &back);
    if (r < 0)
        goto restore_failed;
    uint64_t default_ns = back.runtime_ns;
    if (back.runtime_ns != orig.runtime_ns) {
        want = with_runtime(&orig, orig.runtime_ns);
        r = ops->setattr(ops->userdata, 0, &want);
        if (r < 0)
            goto restore_failed;
    }
    if (!took)
        return 0;
    ret->supported = true;
    ret->default_slice_ns = default_ns;
    ret->reason[0] = '\0';
    return 0;

restore_failed:
    ret->supported = false;
    ret->default_slice_ns = 0;
    reason(ret, "restoring the daemon's own attributes", r);
    return r;
}

int slice_apply(const struct sysops *ops, const struct slice_support *sup, pid_t tid, uint64_t slice_ns,
                struct slice_saved *saved)
{
    *saved = (struct slice_saved){.applied = false};
    if (!sup->supported)
        return -EOPNOTSUPP;
    if (slice_ns < SLICE_MIN_NS)
        slice_ns = SLICE_MIN_NS;
    if (slice_ns > SLICE_MAX_NS)
        slice_ns = SLICE_MAX_NS;

    struct sysops_sched_attr orig;
    int r = ops->getattr(ops->userdata, tid, &orig);
    if (r < 0)
        return r;
    if (!fair_policy(orig.policy))
        return SLICE_SKIP_POLICY;
    /* A longer slice would only make it wait longer. */
    if (orig.runtime_ns != 0 && orig.runtime_ns <= slice_ns)
        return SLICE_SKIP_SHORTER;

    struct sysops_sched_attr want = with_runtime(&orig, slice_ns);
    r = ops->setattr(ops->userdata, tid, &want);
    if (r < 0)
        return r;
    /* What restore compares with: the kernel keeps a runtime within
     * 0.1..100 ms as given (slice_probe saw it read back at start), so no
     * second sched_getattr per task. */
    saved->orig = orig;
    saved->orig.flags &= FLAG_RESET_ON_FORK;
    saved->orig_default = orig.runtime_ns == sup->default_slice_ns;
    saved->set_runtime_ns = want.runtime_ns;
    saved->applied = true;
    return 0;
}

int slice_restore(const struct sysops *ops, pid_t tid, const struct slice_saved *saved)
{
    if (!saved->applied)
        return 0;
    struct sysops_sched_attr now;
    int r = ops->getattr(ops->userdata, tid, &now);
    if (r < 0)
        return r;
    if (now.policy != saved->orig.policy || now.nice != saved->orig.nice ||
        (now.flags & FLAG_RESET_ON_FORK) != saved->orig.flags || now.runtime_ns != saved->set_runtime_ns)
        return SLICE_SKIP_CHANGED;
    struct sysops_sched_attr want = with_runtime(&saved->orig, saved->orig_default ? 0 : saved->orig.runtime_ns);
    return ops->setattr(ops->userdata, tid, &want);
}

int slice_saved_to_string(const struct slice_saved *saved, char *buf, size_t size)
{
    if (!saved->applied)
        return -EINVAL;
    int n = snprintf(buf, size, "p=%" PRIu32 ",n=%" PRId32 ",f=0x%" PRIx64 ",r=%" PRIu64 ",d=%d,s=%" PRIu64,
                     saved->orig.policy, saved->orig.nice, saved->orig.flags, saved->orig.runtime_ns,
                     saved->orig_default ? 1 : 0, saved->set_runtime_ns);
    if (n < 0 || (size_t)n >= size)
        return -ENOSPC;
    return n;
}

int slice_saved_from_string(const char *text, struct slice_saved *ret)
{
    unsigned policy;
    int nice_val, is_default, used = -1;
    unsigned long long flags, runtime, set_runtime;
    if (sscanf(text, "p=%u,n=%d,f=0x%llx,r=%llu,d=%d,s=%llu%n", &policy, &nice_val, &flags, &runtime, &is_default,
               &set_runtime, &used) != 6 ||
        used < 0 || text[used] != '\0')
        return -EINVAL;
    /* Anything we could not have written: a non-fair policy, nice outside
     * -20..19, flags other than reset-on-fork, a slice outside the kernel's
     * range. sscanf also accepts signs in unsigned fields: reject them. */
    if (!fair_policy(policy) || nice_val < -20 || nice_val > 19 || (flags & ~FLAG_RESET_ON_FORK) ||
        (is_default != 0 && is_default != 1) || set_runtime < SLICE_MIN_NS || set_runtime > SLICE_MAX_NS ||
        strchr(text, '+') || strchr(text, ' '))
        return -EINVAL;
    for (const char *m = strchr(text, '-'); m; m = strchr(m + 1, '-'))
        if (m - text < 2 || m[-1] != '=' || m[-2] != 'n')
            return -EINVAL;
    *ret = (struct slice_saved){
        .applied = true,
        .orig = {.policy = policy, .nice = nice_val, .flags = flags, .runtime_ns = runtime},
        .orig_default = is_default,
        .set_runtime_ns = set_runtime,
    };
    return 0;
}
