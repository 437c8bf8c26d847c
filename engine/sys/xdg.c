/* XDG base directories (xdg.h), in one place for the profiles, the demo
   cache, the chats, the history and the pack cache. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "xdg.h"

static const struct { const char *var, *home_default; } bases[] = {
    [EMBER_XDG_CONFIG] = {"XDG_CONFIG_HOME", ".config"},
    [EMBER_XDG_CACHE] = {"XDG_CACHE_HOME", ".cache"},
    [EMBER_XDG_STATE] = {"XDG_STATE_HOME", ".local/state"},
};

/* One row per file: man/ember.1 FILES names each as $BASE/ember/NAME. */
static const struct { ember_xdg base; const char *name; } files[] = {
    [EMBER_PLACE_PROFILES] = {EMBER_XDG_CONFIG, "profiles"},
    [EMBER_PLACE_DEMO] = {EMBER_XDG_CACHE, "demo-tiny.gguf"},
    [EMBER_PLACE_CHATS] = {EMBER_XDG_STATE, "chats"},
    [EMBER_PLACE_HISTORY] = {EMBER_XDG_STATE, "history"},
    [EMBER_PLACE_PACKED] = {EMBER_XDG_CACHE, "packed"},
};

static int mkdirs(char *dir)
{
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        int r = mkdir(dir, 0700);
        *p = '/';
        if (r < 0 && errno != EEXIST) return -1;
    }
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) return -1;
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

int ember_xdg_path(ember_xdg kind, const char *name, bool create, char *buf, size_t cap)
{
    if ((unsigned)kind >= sizeof bases / sizeof bases[0]) return -1;
    const char *x = getenv(bases[kind].var), *home = getenv("HOME");
    char dir[PATH_MAX];
    int n;
    if (x && x[0] == '/') n = snprintf(dir, sizeof dir, "%s/ember", x);
    else if (home && home[0]) n = snprintf(dir, sizeof dir, "%s/%s/ember", home, bases[kind].home_default);
    else return -1;
    if (n < 0 || (size_t)n >= sizeof dir) return -1;
    if (create && mkdirs(dir) < 0) return -1;
    n = name && *name ? snprintf(buf, cap, "%s/%s", dir, name) : snprintf(buf, cap, "%s", dir);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int ember_place_path(ember_place f, bool create, char *buf, size_t cap)
{
    if ((unsigned)f >= sizeof files / sizeof files[0]) return -1;
    return ember_xdg_path(files[f].base, files[f].name, create, buf, cap);
}
