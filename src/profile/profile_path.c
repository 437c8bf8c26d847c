/* Where profiles live: the user's directory first, then the shipped one. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"
#include "profile_yaml.h"

#ifndef EMBER_PKGDATADIR
#define EMBER_PKGDATADIR "/usr/local/share/ember"
#endif

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int fits(int n, size_t cap) { return n > 0 && (size_t)n < cap ? 0 : -1; }

int profile_user_dir(char *buf, size_t cap)
{
    return ember_place_path(EMBER_PLACE_PROFILES, false, buf, cap);
}

int profile_shipped_dir(char *buf, size_t cap)
{
    const char *e = getenv("EMBER_PROFILE_DIR");
    if (e && e[0]) return fits(snprintf(buf, cap, "%s", e), cap);
    if (is_dir(EMBER_PKGDATADIR "/profiles"))
        return fits(snprintf(buf, cap, "%s", EMBER_PKGDATADIR "/profiles"), cap);
    /* Uninstalled: an in-tree build has profiles/ beside the binary; a
       binary in a subdirectory (tests/) has it one level up. */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            char cand[PATH_MAX + 16];
            snprintf(cand, sizeof cand, "%s/profiles", exe);
            if (is_dir(cand)) return fits(snprintf(buf, cap, "%s", cand), cap);
            snprintf(cand, sizeof cand, "%s/../profiles", exe);
            if (is_dir(cand)) return fits(snprintf(buf, cap, "%s", cand), cap);
        }
    }
    return -1;
}

static bool looks_like_path(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') || (n >= 5 && !strcmp(s + n - 5, ".yaml"));
}

int profile_find(const char *name_or_path, char *path_out, size_t cap, profile_err *err)
{
    if (!name_or_path || !name_or_path[0])
        return profile_seterr(err, PROFILE_E_NOT_FOUND, "profile", 0, 0, "empty profile name");
    if (looks_like_path(name_or_path)) {
        /* a directory, a device or a FIFO is there: "no such file" sent the
           user looking for a typo */
        struct stat st;
        if (stat(name_or_path, &st) != 0)
            return profile_seterr(err, PROFILE_E_NOT_FOUND, name_or_path, 0, 0, "no such profile file (%s)",
                                  strerror(errno));
        if (!S_ISREG(st.st_mode))
            return profile_seterr(err, PROFILE_E_NOT_FOUND, name_or_path, 0, 0,
                                  "not a regular file, so not a profile");
        return fits(snprintf(path_out, cap, "%s", name_or_path), cap) ? profile_seterr(
                   err, PROFILE_E_NOT_FOUND, name_or_path, 0, 0, "path too long") : 0;
    }
    char dirs[2][PATH_MAX];
    bool have[2];
    have[0] = profile_user_dir(dirs[0], sizeof dirs[0]) == 0;
    have[1] = profile_shipped_dir(dirs[1], sizeof dirs[1]) == 0;
    char tried[600];
    size_t used = 0;
    tried[0] = 0;
    for (int i = 0; i < 2; i++) {
        if (!have[i]) continue;
        char cand[PATH_MAX + 160];
        if (fits(snprintf(cand, sizeof cand, "%s/%s.yaml", dirs[i], name_or_path), sizeof cand))
            continue;
        if (is_file(cand)) {
            if (fits(snprintf(path_out, cap, "%s", cand), cap))
                return profile_seterr(err, PROFILE_E_NOT_FOUND, name_or_path, 0, 0, "path too long");
            return 0;
        }
        int w = snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", cand);
        if (w > 0 && (size_t)w < sizeof tried - used) used += (size_t)w;
    }
    return profile_seterr(err, PROFILE_E_NOT_FOUND, "profile", 0, 0,
                          "no profile named '%s' (looked for %s%s); `ember profiles` lists them",
                          name_or_path, used ? tried : "nothing: no user or shipped directory",
                          have[1] ? "" : "; set EMBER_PROFILE_DIR to the source tree's profiles/");
}

static int add_dir(profile_entry **v, int *n, int *cap, const char *dir, bool user)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l <= 5 || strcmp(de->d_name + l - 5, ".yaml") || de->d_name[0] == '.') continue;
        if (l - 5 >= sizeof (*v)->name) continue;
        char path[sizeof (*v)->path];
        if (fits(snprintf(path, sizeof path, "%s/%s", dir, de->d_name), sizeof path)) continue;
        if (!is_file(path)) continue;
        if (*n == *cap) {
            int nc = *cap ? *cap * 2 : 16;
            profile_entry *nv = realloc(*v, (size_t)nc * sizeof *nv);
            if (!nv) break;
            *v = nv;
            *cap = nc;
        }
        profile_entry *e = &(*v)[(*n)++];
        memset(e, 0, sizeof *e);
        memcpy(e->name, de->d_name, l - 5);
        e->name[l - 5] = 0;
        memcpy(e->path, path, strlen(path) + 1);
        e->user = user;
    }
    closedir(d);
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const profile_entry *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return (int)y->user - (int)x->user;   /* user first */
}

int profile_list(profile_entry **out)
{
    profile_entry *v = NULL;
    int n = 0, cap = 0;
    char dir[PATH_MAX];
    if (profile_user_dir(dir, sizeof dir) == 0) add_dir(&v, &n, &cap, dir, true);
    if (profile_shipped_dir(dir, sizeof dir) == 0) add_dir(&v, &n, &cap, dir, false);
    if (n) qsort(v, (size_t)n, sizeof *v, cmp_entry);
    for (int i = 0; i + 1 < n; i++)
        if (v[i].user && !v[i + 1].user && !strcmp(v[i].name, v[i + 1].name)) {
            v[i].shadowing = true;
            v[i + 1].shadowed = true;
        }
    *out = v;
    return n;
}
