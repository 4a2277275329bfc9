/* The control socket's replies, built from the engine's state as json-c
 * objects in the schemas turbosched-ctl renders. */
#pragma once
#include <sys/types.h>

struct engine;
struct json_object;

struct json_object *report_status(const struct engine *e);
struct json_object *report_dump(const struct engine *e);
/* -ESRCH if no thread of pid is tracked. */
int report_explain(const struct engine *e, pid_t pid, struct json_object **ret);
struct json_object *report_metrics(const struct engine *e);
