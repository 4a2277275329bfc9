/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "task-class.h"

#include <errno.h>
#include <string.h>

const char *task_class_to_string(enum task_class c)
{
    switch (c) {
    case CLASS_UNSET:
        return "unset";
    case CLASS_IGNORE:
        return "ignore";
    case CLASS_JITTER:
        return "jitter";
    case CLASS_INTENSIVE:
        return "intensive";
    case _TASK_CLASS_MAX:
        break;
    }
    return "unknown";
}

int task_class_from_string(const char *s)
{
    if (!s)
        return -EINVAL;
    if (strcmp(s, "jitter") == 0)
        return CLASS_JITTER;
    if (strcmp(s, "intensive") == 0)
        return CLASS_INTENSIVE;
    if (strcmp(s, "ignore") == 0)
        return CLASS_IGNORE;
    return -EINVAL;
}

const char *class_source_to_string(enum class_source s)
{
    switch (s) {
    case SOURCE_NONE:
        return "none";
    case SOURCE_SLICE:
        return "slice";
    case SOURCE_UNIT:
        return "unit";
    case SOURCE_RULE:
        return "rule";
    case SOURCE_UCLAMP:
        return "uclamp";
    case SOURCE_DEFAULT:
        return "default";
    case SOURCE_BEHAVIOUR:
        return "behaviour";
    }
    return "unknown";
}
