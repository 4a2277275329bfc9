/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Who holds a pause (engine-pause.c); the functions are engine.h's. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Paused: every change undone, nothing packed, tasks still tracked and
 * classified (engine-pause.c). Held by the administrator (Pause until
 * Resume) or by control connections (a comparison's paused blocks), each
 * released when its connection closes. Kept across a reload, not a restart. */
#define ENGINE_PAUSE_SESSIONS_MAX 16
struct engine_pause {
    bool admin;
    unsigned n_sessions;
    uint64_t sessions[ENGINE_PAUSE_SESSIONS_MAX]; /* control connection ids */
    uint64_t since_ms;                            /* when the current pause began */
    uint64_t pauses, paused_ms_total;             /* counters for metrics */
};
