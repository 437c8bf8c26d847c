/* jinja2's compile-time check of filter and test names.
 *
 * jinja2 refuses a template that names an unknown filter or test
 * ("No filter named 'x'."), even where that expression never runs, so
 * Hugging Face fails such a template before rendering anything.  Inside an
 * {% if %} (its test and branches) or a conditional expression the name is
 * only looked up when reached, so a template can guard a filter it may lack
 * ({% if 'x' is filter %}); a for, macro, call, filter, set or with block
 * starts a new scope where the check applies again.
 *
 * Filters that jinja2 has and we lack stay run-time failures, so templates
 * that carry one in a branch they do not take keep rendering. */
#include "config.h"

#include "jinja_impl.h"

#include <string.h>

enum { MAX_WALK = 1000 };     /* deeper expressions fail at render (the evaluator's own limit) */

/* jinja2 3.1's built-in filters that jinja_filters.c does not implement. */
static bool jinja2_filter(const char *name)
{
    static const char *const names[] = {"urlize", NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], name)) return true;
    return false;
}

static void walk(jx_fail_ctx *f, const jx_node *x, bool soft, int depth);

static void walk_all(jx_fail_ctx *f, jx_nodes v, bool soft, int depth)
{
    for (int i = 0; i < v.n; i++) walk(f, v.v[i], soft, depth);
}

static void walk(jx_fail_ctx *f, const jx_node *x, bool soft, int depth)
{
    if (!x || depth > MAX_WALK) return;
    depth++;
    if (!soft && x->kind == N_FILTER && !x->filter_fn && !jinja2_filter(x->name->s)) {
        f->line = x->line;
        jx_fail(f, JINJA_ERR_SYNTAX, "No filter named '%.100s'.", x->name->s);
    }
    if (!soft && x->kind == N_TEST && !x->test_fn) {
        f->line = x->line;
        jx_fail(f, JINJA_ERR_SYNTAX, "No test named '%.100s'.", x->name->s);
    }
    switch (x->kind) {
    case S_IF: case N_COND:
        soft = true;
        break;
    case S_FOR:                       /* the iterable is evaluated outside the loop's scope */
        walk(f, x->y, soft, depth);
        walk(f, x->z, false, depth);
        walk_all(f, x->body, false, depth);
        walk_all(f, x->orelse, false, depth);
        return;
    case S_CALLBLOCK:                 /* the call outside, the body as a macro */
        walk(f, x->x, soft, depth);
        walk_all(f, x->kwargs, false, depth);
        walk_all(f, x->body, false, depth);
        return;
    case S_WITH:                      /* the values outside, the body in its scope */
        walk_all(f, x->kwargs, soft, depth);
        walk_all(f, x->body, false, depth);
        return;
    case S_MACRO: case S_FILTERBLOCK: case S_SETBLOCK: case S_BLOCK:
        soft = false;
        break;
    default:
        break;
    }
    walk(f, x->x, soft, depth);
    walk(f, x->y, soft, depth);
    walk(f, x->z, soft, depth);
    walk(f, x->w, soft, depth);
    walk_all(f, x->args, soft, depth);
    walk_all(f, x->kwargs, soft, depth);
    walk_all(f, x->body, soft, depth);
    walk_all(f, x->orelse, soft, depth);
}

void jx_check_names(jx_fail_ctx *f, jx_nodes body)
{
    walk_all(f, body, false, 0);
}
