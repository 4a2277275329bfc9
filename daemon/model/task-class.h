/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the daemon does with a thread (its class), and what decided it. Used
 * by the configuration, the classifier, the task table and the reports. */
#pragma once

enum task_class {
    CLASS_UNSET = 0, /* not yet classified */
    CLASS_IGNORE,    /* leave alone */
    CLASS_JITTER,    /* pack onto busy cores */
    CLASS_INTENSIVE, /* never move; its load makes a core busy */
    _TASK_CLASS_MAX, /* the number of classes: size of per-class arrays */
};
/* "unset", "ignore", "jitter", "intensive". */
const char *task_class_to_string(enum task_class c);
/* "jitter", "intensive" or "ignore" (the classes a rule may give), else -EINVAL. */
int task_class_from_string(const char *s);

/* What decided a task's class, in precedence order (first wins). */
enum class_source {
    SOURCE_NONE = 0,  /* not classified yet */
    SOURCE_SLICE,     /* in turbosched-jitter.slice */
    SOURCE_UNIT,      /* X-TurboSched= in its unit file or a drop-in */
    SOURCE_RULE,      /* a [rule NAME] section */
    SOURCE_UCLAMP,    /* its uclamp util_max */
    SOURCE_DEFAULT,   /* [classify] default */
    SOURCE_BEHAVIOUR, /* observed behaviour (between uclamp and the default) */
};
const char *class_source_to_string(enum class_source s);
