/* The execution plan as a table or JSON (ember inspect --plan, profiles show). */
#ifndef EMBER_PLAN_PRINT_H
#define EMBER_PLAN_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "ember.h"
#include "json.h"

/* Per-tensor lines when `tensors`, then totals by representation. */
void plan_print_text(const ember_plan *p, const ember_plan_opts *o, bool tensors, FILE *out);
/* Writes the members "plan" (array) and "plan_totals" into the open object. */
void plan_print_json(const ember_plan *p, const ember_plan_opts *o, json_w *j);
/* One line: "packed 6/7 proj types, 96/112 tensors; 1.2 GiB resident (...)". */
void plan_summary(const ember_plan *p, char *buf, size_t cap);

#endif
