/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One daemon per state file: a second one would "recover" the first one's
 * live changes. */
#pragma once

/* Locks STATE_FILE.lock (made, with its directory, if missing), logging why
 * it could not. Returns the descriptor, to be left open for as long as the
 * process lives (closed at exit), or a negative errno: -EWOULDBLOCK when
 * another daemon holds it. */
int instance_lock(const char *state_file);
