/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The frequency table the benefit model weighs plans by (engine-freq.c):
 * none in the fixture (no [capacity] active<N> keys, and no /proc/cpuinfo to
 * tell which CPU's turbo ratios to read), and the configuration's, shorter
 * than the machine or not. Reading the CPU's own ratios is test-turbo-ratio's. See
 * engine-fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "engine-expect.h"
#include "engine-fixture.h"
#include "engine-internal.h"
#include "engine-snapshot.h"

/* Configure with extra, reload, and look for the table again with the log
 * caught (the reload's messages go to stderr). */
static void reconfigure(struct engine_fixture *fx, const char *extra)
{
    char msg[256];
    efx_write_config(fx, true, extra);
    assert_int_equal(engine_reload(fx->e, msg, sizeof msg), 0);
    efx_log_reset();
    engine_find_freq_table(fx->e);
}

static void test_no_table(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    assert_null(engine_freq_table(e));
    assert_int_equal(e->freq.hw.n_cores, 0);
    if (!strstr(e->freq.what, "/proc/cpuinfo: No such file or directory"))
        fail_msg("what: %s", e->freq.what);
    expect_log("benefit: no frequency table ([capacity] active<N> keys; turbo ratios: ");
    struct engine_snapshot s;
    engine_snapshot(e, &s);
    assert_false(s.freq_table);

    reconfigure(fx, "[capacity]\nprobe = no\n");
    assert_null(engine_freq_table(e));
    expect_log("and probe = no, packing by the thresholds alone");
}

static void test_configured_table(void **state)
{
    struct engine_fixture *fx = *state;
    struct engine *e = fx->e;
    efx_start(fx);
    assert_int_equal(e->topo->n_cores, 8);

    reconfigure(fx, "[capacity]\nactive1 = 4000\nactive2 = 3000\n");
    const struct freq_response *fr = engine_freq_table(e);
    assert_ptr_equal(fr, &e->cfg->freq);
    assert_int_equal(fr->n_cores, 2);
    assert_int_equal(e->freq.hw.n_cores, 0); /* the CPU's not read */
    assert_null(strstr(efx_log(), "no frequency table"));
    expect_log("benefit: the frequency table stops at 2 active cores, the machine has 8: above 2, the frequency of 2 "
               "is assumed");
    struct engine_snapshot s;
    engine_snapshot(e, &s);
    assert_true(s.freq_table);

    reconfigure(fx, "[capacity]\nactive1 = 4000\nactive2 = 3900\nactive3 = 3800\nactive4 = 3700\n"
                    "active5 = 3600\nactive6 = 3500\nactive7 = 3400\nactive8 = 3300\n");
    assert_int_equal(engine_freq_table(e)->n_cores, 8);
    expect_log("benefit: frequency table for up to 8 active cores: packing only where it pays");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_table, efx_setup, efx_teardown),
        cmocka_unit_test_setup_teardown(test_configured_table, efx_setup, efx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
