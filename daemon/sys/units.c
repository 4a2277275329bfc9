/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-service opt-in: X-TurboSched= in a unit's files, found over sd-bus. */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "log.h"
#include "util.h"

#define UNITS_CACHE_MAX 4096u
#define UNIT_FILE_MAX (256u * 1024u)
#define X_KEY "X-TurboSched"

struct unit_entry {
    char *unit;
    bool set;
    enum task_class class;
    char *origin;
};

struct units {
    sd_bus *bus;
    sd_bus_slot *reloading;
    units_lookup_fn lookup;
    void *userdata;
    struct unit_entry *entries;
    size_t n, cap;
    unsigned long lookups, hits;
};

/* ------------------------------------------------------------ parsing */

struct x_state {
    bool set;
    enum task_class class;
    bool assigned; /* this text assigned the key (a value or empty) */
    unsigned n_invalid;
    char bad[32];
};

static char *strip(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static bool opt_in_section(const char *name) { return strcmp(name, "Service") == 0 || strcmp(name, "Scope") == 0; }

/* systemd unit file syntax: [Section], Key=Value, '#'/';' comments, a
 * trailing backslash joins the next line. */
static int parse_into(const char *text, struct x_state *st)
{
    char *copy = strdup(text);
    if (!copy)
        return -ENOMEM;
    bool in_section = false;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        /* Join continuation lines in place. */
        size_t n = strlen(line);
        while (n > 0 && line[n - 1] == '\\' && save && *save) {
            line[n - 1] = ' ';
            char *next = strtok_r(NULL, "\n", &save);
            if (!next)
                break;
            /* strtok_r cut at the newline; glue the pieces back together. */
            memmove(line + n, next, strlen(next) + 1);
            n = strlen(line);
        }
        char *s = strip(line);
        if (!*s || *s == '#' || *s == ';')
            continue;
        if (*s == '[') {
            char *e = strchr(s, ']');
            if (e) {
                *e = '\0';
                in_section = opt_in_section(s + 1);
            }
            continue;
        }
        if (!in_section)
            continue;
        char *eq = strchr(s, '=');
        if (!eq)
            continue;
        *eq = '\0';
        if (strcmp(strip(s), X_KEY) != 0)
            continue;
        char *v = strip(eq + 1);
        if (!*v) {
            st->assigned = true;
            st->set = false; /* empty assignment resets, as in systemd */
            continue;
        }
        int c = task_class_from_string(v);
        if (c < 0) {
            st->n_invalid++;
            snprintf(st->bad, sizeof st->bad, "%s", v);
            continue;
        }
        st->assigned = true;
        st->set = true;
        st->class = (enum task_class)c;
    }
    free(copy);
    return 0;
}

int units_parse_x_turbosched(const char *text, enum task_class *ret)
{
    struct x_state st = {0};
    int r = parse_into(text, &st);
    if (r < 0)
        return r;
    if (st.n_invalid)
        return -EINVAL;
    if (!st.set)
        return 0;
    *ret = st.class;
    return 1;
}

/* ---------------------------------------------------------------- bus */

static int bus_lookup(void *userdata, const char *unit, char **fragment, char ***dropins)
{
    struct units *u = userdata;
    sd_bus_error err = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r = sd_bus_call_method(u->bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                               "org.freedesktop.systemd1.Manager", "GetUnit", &err, &reply, "s", unit);
    if (r < 0) {
        if (sd_bus_error_has_name(&err, "org.freedesktop.systemd1.NoSuchUnit"))
            r = -ENOENT;
        sd_bus_error_free(&err);
        return r;
    }
    const char *path;
    r = sd_bus_message_read(reply, "o", &path);
    if (r < 0) {
        sd_bus_message_unref(reply);
        return r;
    }
    char *frag = NULL;
    char **drop = NULL;
    r = sd_bus_get_property_string(u->bus, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Unit",
                                   "FragmentPath", &err, &frag);
    if (r >= 0)
        r = sd_bus_get_property_strv(u->bus, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Unit",
                                     "DropInPaths", &err, &drop);
    sd_bus_error_free(&err);
    sd_bus_message_unref(reply);
    if (r < 0) {
        free(frag);
        return r;
    }
    if (frag && !*frag) {
        free(frag);
        frag = NULL;
    }
    *fragment = frag;
    *dropins = drop;
    return 0;
}

static int on_reloading(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
    struct units *u = userdata;
    log_debug("systemd reloads: forgetting X-TurboSched= of %zu units", u->n);
    units_cache_flush(u);
    return 0;
}

int units_new_with_lookup(units_lookup_fn fn, void *userdata, struct units **ret)
{
    struct units *u = calloc(1, sizeof *u);
    if (!u)
        return -ENOMEM;
    u->lookup = fn;
    u->userdata = userdata;
    *ret = u;
    return 0;
}

int units_new(struct units **ret)
{
    sd_bus *bus = NULL;
    int r = sd_bus_open_system(&bus);
    if (r < 0)
        return r;
    sd_bus_error err = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                           &err, &reply, "s", "org.freedesktop.systemd1");
    sd_bus_error_free(&err);
    sd_bus_message_unref(reply);
    if (r < 0) {
        sd_bus_flush_close_unref(bus);
        return -EHOSTDOWN;
    }
    struct units *u;
    r = units_new_with_lookup(NULL, NULL, &u);
    if (r < 0) {
        sd_bus_flush_close_unref(bus);
        return r;
    }
    u->bus = bus;
    u->lookup = bus_lookup;
    u->userdata = u;
    r = sd_bus_match_signal(bus, &u->reloading, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                            "org.freedesktop.systemd1.Manager", "Reloading", on_reloading, u);
    if (r < 0)
        log_warning_errno(r, "systemd: cannot watch for reloads (%m); unit opt-in is re-read only on our reload");
    *ret = u;
    return 0;
}

int units_attach_event(struct units *u, sd_event *e)
{
    if (!u || !u->bus)
        return 0;
    return sd_bus_attach_event(u->bus, e, SD_EVENT_PRIORITY_NORMAL);
}

void units_cache_flush(struct units *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->n; i++) {
        free(u->entries[i].unit);
        free(u->entries[i].origin);
    }
    u->n = 0;
}

void units_free(struct units *u)
{
    if (!u)
        return;
    units_cache_flush(u);
    free(u->entries);
    sd_bus_slot_unref(u->reloading);
    if (u->bus) {
        sd_bus_detach_event(u->bus);
        sd_bus_flush_close_unref(u->bus);
    }
    free(u);
}

void units_stats(const struct units *u, unsigned long *lookups, unsigned long *hits)
{
    *lookups = u ? u->lookups : 0;
    *hits = u ? u->hits : 0;
}

/* Apply one file's assignments on top of st (fragment first, then drop-ins). */
static void read_one(const char *unit, const char *path, struct x_state *st, char **origin)
{
    char *buf = malloc(UNIT_FILE_MAX);
    if (!buf)
        return;
    ssize_t n = read_file(path, buf, UNIT_FILE_MAX);
    if (n < 0) {
        /* A drop-in listed by systemd may be gone since; nothing to apply. */
        log_debug("%s: %s: %s", unit, path, strerror((int)-n));
        free(buf);
        return;
    }
    st->assigned = false;
    st->n_invalid = 0;
    int r = parse_into(buf, st);
    free(buf);
    if (r < 0)
        return;
    if (st->n_invalid)
        log_warning("%s: %s: " X_KEY "=%s is not jitter, intensive or ignore, ignoring", unit, path, st->bad);
    if (st->assigned) {
        free(*origin);
        *origin = st->set ? strdup(path) : NULL;
    }
}

static struct unit_entry *cache_find(struct units *u, const char *unit)
{
    for (size_t i = 0; i < u->n; i++)
        if (strcmp(u->entries[i].unit, unit) == 0)
            return &u->entries[i];
    return NULL;
}

int units_get_class(struct units *u, const char *unit, enum task_class *ret, const char **origin)
{
    if (!u || !u->lookup || !unit)
        return 0;
    struct unit_entry *e = cache_find(u, unit);
    if (e) {
        u->hits++;
    } else {
        u->lookups++;
        char *fragment = NULL, **dropins = NULL;
        int r = u->lookup(u->userdata, unit, &fragment, &dropins);
        struct x_state st = {0};
        char *from = NULL;
        if (r < 0) {
            /* Remembered as "nothing" so one failure is not retried per thread. */
            if (r != -ENOENT)
                log_warning_errno(r, "%s: cannot look up its unit files: %m; no X-TurboSched= for it", unit);
        } else {
            if (fragment)
                read_one(unit, fragment, &st, &from);
            for (char **d = dropins; d && *d; d++)
                read_one(unit, *d, &st, &from);
        }
        free(fragment);
        if (dropins) {
            for (char **d = dropins; *d; d++)
                free(*d);
            free(dropins);
        }
        /* Units come and go (scopes); start over rather than grow without bound. */
        if (u->n >= UNITS_CACHE_MAX)
            units_cache_flush(u);
        if (u->n == u->cap) {
            size_t cap = u->cap ? u->cap * 2 : 32;
            struct unit_entry *ne = realloc(u->entries, cap * sizeof *ne);
            if (!ne) {
                free(from);
                return -ENOMEM;
            }
            u->entries = ne;
            u->cap = cap;
        }
        char *name = strdup(unit);
        if (!name) {
            free(from);
            return -ENOMEM;
        }
        e = &u->entries[u->n++];
        *e = (struct unit_entry){.unit = name, .set = st.set, .class = st.class, .origin = from};
        if (r < 0 && r != -ENOENT)
            return r;
    }
    if (!e->set)
        return 0;
    *ret = e->class;
    if (origin)
        *origin = e->origin;
    return 1;
}
