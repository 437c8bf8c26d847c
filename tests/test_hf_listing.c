/* hf_listing_add (src/tools/hf_listing.c): the Hub's tree listing is read
   into files, and nothing a hostile or broken server sends can name a
   place outside the repository's cache or be taken for a file. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf.h"
#include "tap.h"

#define SHA "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define GIT "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

static int add(hf_listing *l, const char *json, ember_err *err)
{
    return hf_listing_add("u/r", l, json, strlen(json), err);
}

int main(void)
{
    ember_err err;
    hf_listing l;
    memset(&l, 0, sizeof l);
    int rc = add(&l,
                 "[{\"type\":\"directory\",\"path\":\"sub\",\"oid\":\"" GIT "\",\"size\":0},"
                 " {\"type\":\"file\",\"path\":\"README.md\",\"oid\":\"" GIT "\",\"size\":12},"
                 " {\"type\":\"file\",\"path\":\"sub/m-Q4_K_M.gguf\",\"oid\":\"" GIT "\",\"size\":4613734400,"
                 "  \"lfs\":{\"oid\":\"" SHA "\",\"size\":4613734400,\"pointerSize\":135}}]", &err);
    tap_ok(rc == 0 && l.n == 2, "a page: the two files, not the folder (n=%d)", l.n);
    tap_ok(l.n == 2 && !strcmp(l.e[0].path, "README.md") && !l.e[0].lfs && l.e[0].size == 12 && !strcmp(l.e[0].oid, GIT),
           "a git file: its size and git blob id");
    tap_ok(l.n == 2 && !strcmp(l.e[1].path, "sub/m-Q4_K_M.gguf") && l.e[1].lfs && l.e[1].size == 4613734400ULL &&
               !strcmp(l.e[1].oid, SHA), "an LFS file: the size and sha256 of its content, past 4 GiB");
    rc = add(&l, "[{\"type\":\"file\",\"path\":\"m-Q8_0.gguf\",\"size\":1,\"oid\":\"" GIT "\","
                 "\"lfs\":{\"oid\":\"" SHA "\",\"size\":7}}]", &err);
    tap_ok(rc == 0 && l.n == 3 && l.e[2].size == 7, "a second page is appended");
    rc = add(&l, "[{\"type\":\"directory\",\"path\":\"sub\",\"oid\":\"" GIT "\",\"size\":0},"
                 " {\"type\":\"directory\",\"path\":\"Q8_0/x\",\"oid\":\"" GIT "\",\"size\":0},"
                 " {\"type\":\"directory\",\"path\":\"../up\",\"oid\":\"" GIT "\",\"size\":0}]", &err);
    tap_ok(rc == 0 && l.ndirs == 2 && !strcmp(l.dirs[0], "sub") && !strcmp(l.dirs[1], "Q8_0/x"),
           "the folders are kept once each, none that leaves the repository (%d)", l.ndirs);
    rc = add(&l, "[{\"type\":\"file\",\"path\":\"small.gguf\",\"oid\":\"" GIT "\",\"size\":3,\"lfs\":null}]", &err);
    tap_ok(rc == 0 && l.n == 4 && !l.e[3].lfs && !strcmp(l.e[3].oid, GIT), "\"lfs\": null is a file kept in git");
    rc = add(&l, "[{\"type\":\"file\",\"path\":\"n.gguf\",\"oid\":\"" GIT "\",\"size\":9,\"lfs\":{\"oid\":\"" SHA "\"}}]", &err);
    tap_ok(rc == 0 && l.n == 5 && l.e[4].lfs && l.e[4].size == 9, "an lfs object without a size: the entry's");
    hf_listing_free(&l);
    tap_ok(l.n == 0 && !l.e && !l.ndirs && !l.dirs, "hf_listing_free empties it");

    static const char *const hostile[] = {
        "{\"type\":\"file\",\"path\":\"../m.gguf\",\"oid\":\"" GIT "\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"a/../../m.gguf\",\"oid\":\"" GIT "\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"/etc/m.gguf\",\"oid\":\"" GIT "\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"a//m.gguf\",\"oid\":\"" GIT "\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"./m.gguf\",\"oid\":\"" GIT "\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"..\",\"oid\":\"" GIT "\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"\",\"oid\":\"" GIT "\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"a\\\\..\\\\m.gguf\",\"oid\":\"" GIT "\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"m\\n.gguf\",\"oid\":\"" GIT "\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"m.gguf\",\"oid\":\"../../../../etc/passwd0000000000000000\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"m.gguf\",\"oid\":\"E69DE29BB2D1D6434B8B29AE775AD8C2E48C5391\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"m.gguf\",\"oid\":\"" GIT "\",\"size\":1,\"lfs\":{\"oid\":\"" GIT "\",\"size\":1}}",
        "{\"type\":\"file\",\"path\":\"m.gguf\",\"oid\":\"" GIT "\",\"size\":-5}",
        "{\"type\":\"file\",\"path\":\"m.gguf\",\"oid\":\"" GIT "\",\"size\":\"12\"}",
        "{\"type\":\"file\",\"path\":\"m.gguf\",\"oid\":\"" GIT "\",\"size\":1.5}",
        "{\"type\":\"file\",\"path\":\"m.gguf\",\"oid\":\"" GIT "\",\"size\":1,\"lfs\":\"" SHA "\"}",
        "{\"type\":\"file\",\"path\":7,\"oid\":\"" GIT "\",\"size\":1}",
        "{\"path\":\"m.gguf\",\"oid\":\"" GIT "\",\"size\":1}",
        "{\"type\":\"file\",\"path\":\"m.gguf\",\"size\":1}",
        "[1,2,3]", "null", "\"m.gguf\"",
    };
    int kept = 0, failed = 0;
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        char buf[512];
        snprintf(buf, sizeof buf, "[%s]", hostile[i]);
        memset(&l, 0, sizeof l);
        if (add(&l, buf, &err)) failed++;
        kept += l.n;
        if (l.n) tap_diag("kept: %s", hostile[i]);
        hf_listing_free(&l);
    }
    tap_ok(kept == 0 && failed == 0, "%zu hostile or malformed entries: all skipped, the page still read",
           sizeof hostile / sizeof hostile[0]);

    char *longp = malloc(1100 + 200);
    memset(longp, 0, 1300);
    strcpy(longp, "[{\"type\":\"file\",\"oid\":\"" GIT "\",\"size\":1,\"path\":\"");
    size_t o = strlen(longp);
    memset(longp + o, 'a', 1001);
    strcpy(longp + o + 1001, ".gguf\"}]");
    memset(&l, 0, sizeof l);
    tap_ok(add(&l, longp, &err) == 0 && l.n == 0, "a path over 1000 bytes is skipped");
    free(longp);
    hf_listing_free(&l);

    memset(&l, 0, sizeof l);
    tap_ok(add(&l, "<html>rate limited</html>", &err) != 0 && strstr(err.msg, "not JSON"), "not JSON: an error");
    tap_ok(add(&l, "{\"error\":\"x\"}", &err) != 0 && strstr(err.msg, "not a JSON array"), "an object: an error");
    tap_ok(hf_listing_add("u/r", &l, "", 0, &err) != 0 && strstr(err.msg, "empty"), "an empty body: an error");
    tap_ok(add(&l, "[{\"type\":\"file\"", &err) != 0, "a truncated page: an error");
    tap_ok(l.n == 0, "nothing kept from the failures");
    hf_listing_free(&l);

    tap_ok(hf_path_ok("a/b.c/d-Q4_K_M.gguf") && hf_path_ok("a..b.gguf") && !hf_path_ok("a/") && !hf_path_ok("a/./b"),
           "hf_path_ok: dots inside a name are fine, empty or '.' parts are not");
    tap_ok(hf_hex_ok(SHA, 64) && !hf_hex_ok(SHA, 40) && !hf_hex_ok("zz", 2), "hf_hex_ok: the length and lower-case hex");
    return tap_done();
}
