/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The run-delay guard on recorded sequences: schedstat readings of packed
 * jitter threads one tick apart, the delay across threads, and the guard's
 * decisions (hold, spill, shrink, fallback) over time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "delay-guard.h"
#include "histogram.h"

#define MS 1000000ull /* ns */
#define TICK_MS 1000u

static struct delay_guard_config cfg;
static struct delay_guard g;

static int setup(void **state)
{
    delay_guard_config_defaults(&cfg);
    delay_guard_init(&g);
    return 0;
}

static struct delay_decision step(uint64_t now_ms, uint64_t delay_ns, const int *cand, size_t n_cand)
{
    struct delay_guard_input in = {
        .now_ms = now_ms,
        .delay_ns = delay_ns,
        .wakeups = 500,
        .candidates = cand,
        .n_candidates = n_cand,
    };
    return delay_guard_step(&g, &cfg, &in);
}

static void expect(struct delay_decision d, enum delay_action a, int core, const char *reason_part)
{
    if (d.action != a || d.core != core || (reason_part && !strstr(d.reason, reason_part)))
        fail_msg("got %s core %d \"%s\", expected %s core %d with \"%s\"", delay_action_to_string(d.action), d.core,
                 d.reason, delay_action_to_string(a), core, reason_part ? reason_part : "");
}

/* --- schedstat and threads ----------------------------------------------------- */

static void test_parse_schedstat(void **state)
{
    struct delay_schedstat s;
    assert_int_equal(delay_parse_schedstat("3105264 1804522 41\n", &s), 0);
    assert_int_equal(s.run_ns, 3105264);
    assert_int_equal(s.wait_ns, 1804522);
    assert_int_equal(s.timeslices, 41);
    assert_int_equal(delay_parse_schedstat("1 2 3", &s), 0);
    assert_int_equal(delay_parse_schedstat("1 2\n", &s), -EINVAL);
    assert_int_equal(delay_parse_schedstat("1 2 3 4\n", &s), -EINVAL);
    assert_int_equal(delay_parse_schedstat("", &s), -EINVAL);
    assert_int_equal(delay_parse_schedstat("a b c", &s), -EINVAL);
}

static void test_thread_window(void **state)
{
    struct delay_thread t = {0};
    uint64_t mean, n;
    /* the first reading is only a base */
    assert_int_equal(delay_thread_sample(&t, &(struct delay_schedstat){1000, 5000, 10}, &mean), 0);
    assert_int_equal(delay_thread_mean_ns(&t, &n), 0);
    assert_int_equal(n, 0);
    /* 100 wake-ups that waited 2 ms each */
    assert_int_equal(delay_thread_sample(&t, &(struct delay_schedstat){2000, 5000 + 200 * MS, 110}, &mean), 100);
    assert_int_equal(mean, 2 * MS);
    /* 300 wake-ups at 0.2 ms: the window mean weighs wake-ups */
    assert_int_equal(delay_thread_sample(&t, &(struct delay_schedstat){3000, 5000 + 260 * MS, 410}, &mean), 300);
    assert_int_equal(mean, MS / 5);
    assert_int_equal(delay_thread_mean_ns(&t, &n), 260 * MS / 400);
    assert_int_equal(n, 400);
    /* a tick without running adds nothing */
    assert_int_equal(delay_thread_sample(&t, &(struct delay_schedstat){3000, 5000 + 260 * MS, 410}, &mean), 0);
    assert_int_equal(delay_thread_mean_ns(&t, &n), 260 * MS / 400);
    /* after DELAY_WINDOW more samples the 2 ms one has left the window */
    uint64_t wait = 5000 + 260 * MS, slices = 410;
    for (int i = 0; i < DELAY_WINDOW; i++) {
        wait += 10 * MS;
        slices += 100;
        delay_thread_sample(&t, &(struct delay_schedstat){4000 + i, wait, slices}, &mean);
    }
    assert_int_equal(delay_thread_mean_ns(&t, &n), MS / 10);
    assert_int_equal(n, 100 * DELAY_WINDOW);
    /* counters going backwards: a new thread under the same TID */
    assert_int_equal(delay_thread_sample(&t, &(struct delay_schedstat){10, 10, 1}, &mean), 0);
    assert_int_equal(delay_thread_mean_ns(&t, &n), 0);
    assert_int_equal(n, 0);
}

static void test_weighted_percentile(void **state)
{
    /* one busy thread waiting 5 ms outweighs a quiet one at 0.1 ms */
    struct delay_point a[] = {{100000, 1, 0}, {5 * MS, 99, 0}};
    assert_int_equal(delay_weighted_percentile(a, 2, 90), 5 * MS);
    /* a quiet thread waiting long is within the top 10% of wake-ups */
    struct delay_point b[] = {{5 * MS, 5, 0}, {100000, 95, 0}};
    assert_int_equal(delay_weighted_percentile(b, 2, 90), 100000);
    assert_int_equal(delay_weighted_percentile(b, 2, 100), 5 * MS);
    /* exactly at the boundary: 90 of 100 wake-ups at or below */
    struct delay_point c[] = {{3 * MS, 10, 0}, {1 * MS, 90, 0}};
    assert_int_equal(delay_weighted_percentile(c, 2, 90), MS);
    /* zero-weight points are skipped, no weight at all gives 0 */
    struct delay_point d[] = {{9 * MS, 0, 0}, {2 * MS, 4, 0}, {1 * MS, 0, 0}};
    assert_int_equal(delay_weighted_percentile(d, 3, 90), 2 * MS);
    struct delay_point e[] = {{9 * MS, 0, 0}};
    assert_int_equal(delay_weighted_percentile(e, 1, 90), 0);
    assert_int_equal(delay_weighted_percentile(NULL, 0, 90), 0);
}

/* Per user: one user's thousand quiet threads waking often do not hide
 * another user's thread that waits 5 ms per wake-up. Pooled, the 90th
 * percentile was the quiet threads' 0.1 ms. */
static void test_percentile_by_group(void **state)
{
    (void)state;
    enum { N = 1001 };
    static struct delay_point pts[N], pooled[N];
    for (int i = 0; i < N - 1; i++)
        pts[i] = (struct delay_point){100000, 50, 1000}; /* the flooding user */
    pts[N - 1] = (struct delay_point){5 * MS, 20, 1001}; /* the victim */
    memcpy(pooled, pts, sizeof pts);
    assert_int_equal(delay_weighted_percentile(pooled, N, 90), 100000);
    assert_int_equal(delay_percentile_by_group(pts, N, 90), 5 * MS);
    /* one user: the same as pooled */
    struct delay_point one[] = {{5 * MS, 5, 0}, {100000, 95, 0}};
    assert_int_equal(delay_percentile_by_group(one, 2, 90), 100000);
    assert_int_equal(delay_percentile_by_group(NULL, 0, 90), 0);
}

/* --- decisions ------------------------------------------------------------------ */

static void test_hold_then_spill(void **state)
{
    const int cand[] = {3, 5};
    uint64_t t = 0;
    expect(step(t, 2400 * MS / 1000, cand, 2), DELAY_HOLD, -1, "holding: jitter waited 2.4 ms per wake-up");
    for (t = TICK_MS; t < cfg.hold_ms; t += TICK_MS)
        expect(step(t, 2400 * MS / 1000, cand, 2), DELAY_HOLD, -1, "holding");
    expect(step(t, 2400 * MS / 1000, cand, 2), DELAY_SPILL, 3, "spilled to core 3: jitter waited 2.4 ms per wake-up");
    assert_int_equal(g.n_spilled, 1);
    assert_int_equal(g.spills_total, 1);
    /* the next spill needs its own hold */
    t += TICK_MS;
    const int cand2[] = {5};
    expect(step(t, 3 * MS, cand2, 1), DELAY_HOLD, -1, "holding");
    t += cfg.hold_ms;
    expect(step(t, 3 * MS, cand2, 1), DELAY_SPILL, 5, "spilled to core 5: jitter waited 3.0 ms");
    assert_int_equal(g.n_spilled, 2);
}

static void test_spikes_do_not_spill(void **state)
{
    /* 2 s above, 1 s fine, 2 s above...: never hold_ms in a row */
    const int cand[] = {1};
    for (uint64_t t = 0; t < 60000; t += TICK_MS) {
        uint64_t delay = (t / TICK_MS) % 3 == 2 ? MS / 2 : 4 * MS;
        struct delay_decision d = step(t, delay, cand, 1);
        assert_int_equal(d.action, DELAY_HOLD);
    }
    assert_int_equal(g.spills_total, 0);
}

static void test_few_wakeups_hold(void **state)
{
    const int cand[] = {1};
    for (uint64_t t = 0; t < 20000; t += TICK_MS) {
        struct delay_guard_input in = {
            .now_ms = t, .delay_ns = 10 * MS, .wakeups = cfg.min_wakeups - 1, .candidates = cand, .n_candidates = 1};
        expect(delay_guard_step(&g, &cfg, &in), DELAY_HOLD, -1, "too few");
    }
    /* and the hold starts from the first tick with evidence */
    expect(step(20000, 10 * MS, cand, 1), DELAY_HOLD, -1, "holding");
    expect(step(20000 + cfg.hold_ms, 10 * MS, cand, 1), DELAY_SPILL, 1, NULL);
}

static void test_fallback_and_retry(void **state)
{
    uint64_t t = 0;
    for (; t < cfg.hold_ms; t += TICK_MS)
        expect(step(t, 12 * MS, NULL, 0), DELAY_HOLD, -1, NULL);
    expect(step(t, 12 * MS, NULL, 0), DELAY_FALLBACK, -1,
           "fell back: jitter waited 12 ms per wake-up and no busy core is left (retry in 60 s)");
    assert_int_equal(g.fallbacks_total, 1);
    uint64_t fell = t;
    /* while fallen back, its delay says nothing */
    for (t += TICK_MS; t < fell + cfg.fallback_retry_ms; t += TICK_MS)
        expect(step(t, 20 * MS, NULL, 0), DELAY_HOLD, -1, "fallen back: packing again in");
    expect(step(t, 0, NULL, 0), DELAY_SHRINK, -1, "packing again after 60 s of fallback");
    /* it fails again: the next retry waits twice as long */
    uint64_t start = t + TICK_MS;
    for (t = start; t < start + cfg.hold_ms; t += TICK_MS)
        expect(step(t, 12 * MS, NULL, 0), DELAY_HOLD, -1, NULL);
    expect(step(t, 12 * MS, NULL, 0), DELAY_FALLBACK, -1, "retry in 120 s");
    fell = t;
    expect(step(fell + cfg.fallback_retry_ms, 0, NULL, 0), DELAY_HOLD, -1, "fallen back");
    expect(step(fell + 2 * cfg.fallback_retry_ms, 0, NULL, 0), DELAY_SHRINK, -1, "packing again");
}

static void test_spill_then_fallback(void **state)
{
    /* spilled to the only candidate; still too slow: give up */
    const int cand[] = {2};
    expect(step(0, 5 * MS, cand, 1), DELAY_HOLD, -1, NULL);
    expect(step(cfg.hold_ms, 5 * MS, cand, 1), DELAY_SPILL, 2, NULL);
    expect(step(cfg.hold_ms + TICK_MS, 5 * MS, NULL, 0), DELAY_HOLD, -1, NULL);
    expect(step(2 * cfg.hold_ms + TICK_MS, 5 * MS, NULL, 0), DELAY_FALLBACK, -1, NULL);
    assert_int_equal(g.n_spilled, 0);
}

static void test_shrink_with_hysteresis(void **state)
{
    const int cand[] = {3};
    step(0, 2 * MS, cand, 1);
    expect(step(cfg.hold_ms, 2 * MS, cand, 1), DELAY_SPILL, 3, NULL);
    uint64_t spilled = cfg.hold_ms, t;
    /* below the limit but not well below (60%): keeps the core */
    for (t = spilled + TICK_MS; t < spilled + 5 * cfg.shrink_hold_ms; t += TICK_MS)
        expect(step(t, 600 * MS / 1000, NULL, 0), DELAY_HOLD, -1, "within 1.0 ms");
    /* well below (20%): after shrink_hold_ms of it */
    uint64_t low = t;
    for (; t < low + cfg.shrink_hold_ms; t += TICK_MS)
        expect(step(t, 200 * MS / 1000, NULL, 0), DELAY_HOLD, -1, "may release core 3");
    expect(step(t, 200 * MS / 1000, NULL, 0), DELAY_SHRINK, 3, "released core 3: jitter waited 0.20 ms per wake-up");
    assert_int_equal(g.n_spilled, 0);
    assert_int_equal(g.shrinks_total, 1);
    /* nothing left to release */
    expect(step(t + 10 * cfg.shrink_hold_ms, 0, NULL, 0), DELAY_HOLD, -1, NULL);
}

static void test_no_shrink_right_after_spill(void **state)
{
    /* the new core fixed it at once; still wait shrink_hold_ms of low delay,
     * counted from the first tick after the spill */
    const int cand[] = {3};
    step(0, 2 * MS, cand, 1);
    expect(step(cfg.hold_ms, 2 * MS, cand, 1), DELAY_SPILL, 3, NULL);
    uint64_t t = cfg.hold_ms + TICK_MS;
    for (; t < cfg.hold_ms + TICK_MS + cfg.shrink_hold_ms; t += TICK_MS)
        assert_int_equal(step(t, 0, NULL, 0).action, DELAY_HOLD);
    expect(step(t, 0, NULL, 0), DELAY_SHRINK, 3, NULL);
}

static void test_no_flapping(void **state)
{
    /* The classic flap: jitter waits 2.4 ms at the base plan and 0.3 ms with
     * one core more. Without backoff it would spill and shrink every ~33 s. */
    const int cand[] = {3};
    unsigned extra = 0, changes = 0;
    uint64_t last_shrink = 0, gap_prev = 0;
    for (uint64_t t = 0; t <= 20 * 60000; t += TICK_MS) {
        uint64_t delay = extra ? 300 * MS / 1000 : 2400 * MS / 1000;
        struct delay_decision d = step(t, delay, extra ? NULL : cand, extra ? 0 : 1);
        if (d.action == DELAY_SPILL) {
            extra++;
            changes++;
        } else if (d.action == DELAY_SHRINK) {
            assert_int_equal(d.core, 3);
            extra--;
            changes++;
            /* each time the plan stays spilled longer than the time before */
            if (last_shrink) {
                uint64_t gap = t - last_shrink;
                if (gap_prev && gap < gap_prev)
                    fail_msg("shrink gap shrank: %llu ms after %llu ms", (unsigned long long)gap,
                             (unsigned long long)gap_prev);
                gap_prev = gap;
            }
            last_shrink = t;
        } else {
            assert_int_equal(d.action, DELAY_HOLD);
        }
    }
    /* 20 minutes: without backoff ~70 changes; with it the shrinks come
     * 65, 125, 245 s apart and then every 245 s: 13 changes */
    if (changes > 14)
        fail_msg("%u plan changes in 20 minutes", changes);
    assert_true(changes >= 4);
    assert_int_equal(g.shrink_backoff, DELAY_SHRINK_BACKOFF_MAX);
    assert_int_equal(g.fallbacks_total, 0);
}

static void test_backoff_forgotten(void **state)
{
    /* flapped twice: shrink hold doubled twice */
    const int cand[] = {3};
    uint64_t t = 0;
    unsigned extra = 0;
    for (; g.shrink_backoff < 4; t += TICK_MS) {
        struct delay_decision d = step(t, extra ? 0 : 3 * MS, extra ? NULL : cand, extra ? 0 : 1);
        extra += d.action == DELAY_SPILL;
        extra -= d.action == DELAY_SHRINK;
        assert_true(t < 3600000);
    }
    /* it shrinks again, then the base plan holds for an hour; the next spill
     * starts the backoff afresh */
    for (; extra; t += TICK_MS)
        extra -= step(t, 0, NULL, 0).action == DELAY_SHRINK;
    for (uint64_t end = t + 3600000; t < end; t += TICK_MS)
        assert_int_equal(step(t, 500 * MS / 1000, cand, 1).action, DELAY_HOLD);
    step(t, 3 * MS, cand, 1);
    expect(step(t + cfg.hold_ms, 3 * MS, cand, 1), DELAY_SPILL, 3, NULL);
    assert_int_equal(g.shrink_backoff, 1);
}

static void test_reset_and_forget(void **state)
{
    const int cand[] = {3, 4};
    step(0, 2 * MS, cand, 2);
    step(cfg.hold_ms, 2 * MS, cand, 2);
    step(cfg.hold_ms + TICK_MS, 2 * MS, cand + 1, 1);
    step(2 * cfg.hold_ms + TICK_MS, 2 * MS, cand + 1, 1);
    assert_int_equal(g.n_spilled, 2);
    /* core 4 went offline: the next shrink releases core 3 */
    delay_guard_forget_core(&g, 4);
    delay_guard_forget_core(&g, 7);
    assert_int_equal(g.n_spilled, 1);
    uint64_t t = 2 * cfg.hold_ms + 2 * TICK_MS;
    step(t, 0, NULL, 0);
    expect(step(t + cfg.shrink_hold_ms, 0, NULL, 0), DELAY_SHRINK, 3, NULL);
    /* reset keeps the totals */
    delay_guard_reset(&g);
    assert_int_equal(g.n_spilled, 0);
    assert_int_equal(g.spills_total, 2);
    assert_int_equal(g.shrinks_total, 1);
}

static void test_recorded_schedstat(void **state)
{
    /* Two packed jitter threads read each tick, as the engine will: a busy
     * one (200 wake-ups per tick) whose wait grows from 0.2 to 2.5 ms per
     * wake-up, and a quiet one (5 per tick) at 0.1 ms. */
    static const char *const busy[] = {
        "100000000 40000000 1000",   "110000000 80000000 1200",   "120000000 120000000 1400",
        "130000000 620000000 1600",  "140000000 1120000000 1800", "150000000 1620000000 2000",
        "160000000 2120000000 2200", "170000000 2620000000 2400", "180000000 3120000000 2600",
    };
    static const char *const quiet[] = {
        "5000000 100000 10",  "5500000 600000 15",  "6000000 1100000 20", "6500000 1600000 25", "7000000 2100000 30",
        "7500000 2600000 35", "8000000 3100000 40", "8500000 3600000 45", "9000000 4100000 50",
    };
    struct delay_thread th[2];
    memset(th, 0, sizeof th);
    struct histogram h = {0};
    const int cand[] = {1};
    enum delay_action seen[9];
    for (size_t tick = 0; tick < 9; tick++) {
        const char *text[2] = {busy[tick], quiet[tick]};
        struct delay_point pts[2];
        uint64_t total = 0;
        for (int i = 0; i < 2; i++) {
            struct delay_schedstat s;
            assert_int_equal(delay_parse_schedstat(text[i], &s), 0);
            uint64_t mean, n = delay_thread_sample(&th[i], &s, &mean);
            if (n)
                histogram_add_n(&h, mean, n);
            pts[i].delay_ns = delay_thread_mean_ns(&th[i], &pts[i].weight);
            total += pts[i].weight;
        }
        struct delay_guard_input in = {
            .now_ms = tick * TICK_MS,
            .delay_ns = delay_weighted_percentile(pts, 2, cfg.percentile),
            .wakeups = total,
            .candidates = cand,
            .n_candidates = 1,
        };
        struct delay_decision d = delay_guard_step(&g, &cfg, &in);
        seen[tick] = d.action;
        if (d.action == DELAY_SPILL)
            assert_string_equal(d.reason, "spilled to core 1: jitter waited 2.5 ms per wake-up");
    }
    /* tick 0 is the base; the busy thread's 2.5 ms first shows at tick 3; its
     * window mean passes 1 ms at tick 4; held 3 s: spill at tick 7 */
    for (size_t tick = 0; tick < 9; tick++)
        assert_int_equal(seen[tick], tick == 7 ? DELAY_SPILL : DELAY_HOLD);
    /* 8 ticks x (200 + 5) wake-ups observed */
    assert_int_equal(h.count, 8 * 205);
    /* le=250 µs: 2 ticks of the busy one at 0.2 ms and all the quiet ones */
    assert_int_equal(histogram_count_le(&h, 250000), 2 * 200 + 8 * 5);
    assert_int_equal(histogram_count_le(&h, 1000000), 2 * 200 + 8 * 5);
    assert_int_equal(histogram_count_le(&h, 2500000), 8 * 205); /* le is inclusive */
    assert_int_equal(h.max_ns, 2500000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_schedstat),
        cmocka_unit_test(test_thread_window),
        cmocka_unit_test(test_weighted_percentile),
        cmocka_unit_test(test_percentile_by_group),
        cmocka_unit_test_setup(test_hold_then_spill, setup),
        cmocka_unit_test_setup(test_spikes_do_not_spill, setup),
        cmocka_unit_test_setup(test_few_wakeups_hold, setup),
        cmocka_unit_test_setup(test_fallback_and_retry, setup),
        cmocka_unit_test_setup(test_spill_then_fallback, setup),
        cmocka_unit_test_setup(test_shrink_with_hysteresis, setup),
        cmocka_unit_test_setup(test_no_shrink_right_after_spill, setup),
        cmocka_unit_test_setup(test_no_flapping, setup),
        cmocka_unit_test_setup(test_backoff_forgotten, setup),
        cmocka_unit_test_setup(test_reset_and_forget, setup),
        cmocka_unit_test_setup(test_recorded_schedstat, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
