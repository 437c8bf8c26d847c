/* The code-block tokenizer: classes per language, state across lines,
   aliases, and that tokens always cover the line's bytes in order. */
#include "config.h"

#include <string.h>

#include "highlight.h"
#include "tap.h"

/* The class of the token covering byte `at` of s. */
static hl_class class_at(const char *lang, hl_state *st, const char *s, size_t at)
{
    hl_token t[128];
    int n = hl_line(hl_find(lang, strlen(lang)), st, s, strlen(s), t, 128);
    for (int i = 0; i < n && i < 128; i++)
        if (at >= t[i].off && at < t[i].off + t[i].len) return t[i].cls;
    return HL_N_CLASSES;
}

static hl_class cls(const char *lang, const char *s, const char *needle)
{
    hl_state st = {0};
    return class_at(lang, &st, s, (size_t)(strstr(s, needle) - s));
}

/* Tokens tile the line exactly, and no two neighbours share a class. */
static int tiles(const char *lang, const char *s)
{
    hl_token t[256];
    hl_state st = {0};
    int n = hl_line(hl_find(lang, strlen(lang)), &st, s, strlen(s), t, 256);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].off != at || t[i].len == 0) return 0;
        if (i && t[i].cls == t[i - 1].cls) return 0;
        at += t[i].len;
    }
    return at == strlen(s);
}

int main(void)
{
    /* aliases */
    tap_ok(hl_find("py", 2) == hl_find("python", 6), "py is python");
    tap_ok(!strcmp(hl_name(hl_find("bash", 4)), "shell"), "bash is shell");
    tap_ok(!strcmp(hl_name(hl_find("TS", 2)), "javascript"), "TS (any case) goes to javascript");
    tap_ok(!strcmp(hl_name(hl_find("rs", 2)), "rust") && !strcmp(hl_name(hl_find("golang", 6)), "go"),
           "rs is rust, golang is go");
    tap_ok(!strcmp(hl_name(hl_find("patch", 5)), "diff") && !strcmp(hl_name(hl_find("h", 1)), "c"),
           "patch is diff, h is c");
    tap_ok(hl_find("cobol", 5) == NULL && hl_find("", 0) == NULL, "unknown and empty names: no language");

    /* C */
    const char *c = "static int x = 0x1F; /* note */ return \"a\\\"b\" + 'c'; // end";
    tap_ok(cls("c", c, "static") == HL_KEYWORD, "C: static is a keyword");
    tap_ok(cls("c", c, "int") == HL_TYPE, "C: int is a type");
    tap_ok(cls("c", c, "x ") == HL_PLAIN, "C: an identifier is plain");
    tap_ok(cls("c", c, "0x1F") == HL_NUMBER && cls("c", c, "1F;") == HL_NUMBER, "C: 0x1F is one number");
    tap_ok(cls("c", c, "note") == HL_COMMENT && cls("c", c, "*/") == HL_COMMENT, "C: block comment");
    tap_ok(cls("c", c, "\\\"b") == HL_STRING && cls("c", c, "b\"") == HL_STRING, "C: escaped quote stays in the string");
    tap_ok(cls("c", c, "'c'") == HL_STRING, "C: char literal");
    tap_ok(cls("c", c, "end") == HL_COMMENT, "C: line comment");
    tap_ok(cls("c", "#include <stdio.h>", "#include") == HL_KEYWORD, "C: #include is a keyword");
    tap_ok(cls("c", "int interval;", "interval") == HL_PLAIN, "C: keywords match whole words only");
    tap_ok(tiles("c", c), "C: tokens tile the line");

    /* block comment across lines */
    hl_state st = {0};
    const hl_lang *cl = hl_find("c", 1);
    hl_token t[16];
    hl_line(cl, &st, "x = 1; /* starts", 16, t, 16);
    tap_ok(st.in == 1, "C: an open block comment carries to the next line");
    tap_ok(class_at("c", &st, "still */ int y;", 0) == HL_COMMENT, "C: next line starts in the comment");
    tap_ok(st.in == 0 && class_at("c", &st, "int y;", 0) == HL_TYPE, "C: and leaves it after */");

    /* Python */
    const char *py = "def f(x): return x + 1.5e-3  # done";
    tap_ok(cls("python", py, "def") == HL_KEYWORD && cls("python", py, "return") == HL_KEYWORD, "Python: def, return");
    tap_ok(cls("python", py, "1.5e-3") == HL_NUMBER && cls("python", py, "-3") == HL_NUMBER, "Python: 1.5e-3 is one number");
    tap_ok(cls("python", py, "done") == HL_COMMENT, "Python: # comment");
    st = (hl_state){0};
    hl_line(hl_find("py", 2), &st, "s = \"\"\"doc", 10, t, 16);
    tap_ok(st.in == 2 && class_at("py", &st, "more # not a comment", 5) == HL_STRING,
           "Python: a triple-quoted string spans lines (a # in it is not a comment)");
    tap_ok(class_at("py", &st, "end\"\"\" + x", 0) == HL_STRING && st.in == 0, "Python: and closes");

    /* shell */
    tap_ok(cls("sh", "if [ -f x ]; then echo \"$HOME\"; fi # c", "then") == HL_KEYWORD, "shell: then");
    tap_ok(cls("sh", "echo a#b # real", "#b") == HL_PLAIN, "shell: # inside a word is not a comment");
    tap_ok(cls("sh", "echo a#b # real", "real") == HL_COMMENT, "shell: # after a space is");

    /* JSON */
    const char *js = "{\"k\": [1, -2.5, true, null], \"s\": \"v\"}";
    tap_ok(cls("json", js, "\"k\"") == HL_STRING && cls("json", js, "true") == HL_KEYWORD &&
           cls("json", js, "null") == HL_KEYWORD && cls("json", js, "2.5") == HL_NUMBER, "JSON: strings, literals, numbers");
    tap_ok(tiles("json", js), "JSON: tokens tile the line");

    /* JavaScript */
    tap_ok(cls("js", "const s = `a ${b}`; // x", "const") == HL_KEYWORD &&
           cls("js", "const s = `a ${b}`; // x", "a $") == HL_STRING, "JavaScript: const, template string");

    /* Rust: lifetimes are not strings */
    const char *rs = "fn f<'a>(x: &'a str) -> Option<u8> { let c = 'z'; }";
    tap_ok(cls("rust", rs, "fn") == HL_KEYWORD && cls("rust", rs, "str") == HL_TYPE, "Rust: fn, str");
    tap_ok(cls("rust", rs, "(x") == HL_PLAIN, "Rust: a lifetime does not open a string");
    tap_ok(cls("rust", rs, "'z'") == HL_STRING, "Rust: 'z' is a char literal");

    /* Go */
    tap_ok(cls("go", "func main() { var s string = `raw\\n` }", "func") == HL_KEYWORD &&
           cls("go", "func main() { var s string = `raw\\n` }", "string") == HL_TYPE &&
           cls("go", "func main() { var s string = `raw\\n` }", "raw") == HL_STRING, "Go: func, string, raw string");

    /* diff */
    tap_ok(cls("diff", "+added line", "added") == HL_ADDED, "diff: + line");
    tap_ok(cls("diff", "-removed", "removed") == HL_REMOVED, "diff: - line");
    tap_ok(cls("diff", "@@ -1,2 +1,3 @@", "-1") == HL_META && cls("diff", "--- a/x", "a/x") == HL_META, "diff: hunk and file headers");
    tap_ok(cls("diff", " context", "context") == HL_PLAIN, "diff: context line");

    /* unknown language, counting beyond cap */
    hl_token one[1];
    hl_state s0 = {0};
    tap_ok(hl_line(NULL, &s0, "x \"y\"", 5, one, 1) == 1 && one[0].cls == HL_PLAIN && one[0].len == 5,
           "no language: one plain token");
    s0 = (hl_state){0};
    int need = hl_line(cl, &s0, "int a = 1; // x", 15, one, 1);
    tap_ok(need > 1 && one[0].cls == HL_TYPE && one[0].len == 3, "count beyond cap, first token written (%d)", need);
    /* hostile: unterminated things, bytes >= 0x80 */
    s0 = (hl_state){0};
    tap_ok(tiles("c", "\"never closed \\") && tiles("rust", "'\\") && tiles("c", "\xff\xfe'\x80'"),
           "unterminated strings and invalid UTF-8 still tile");
    return tap_done();
}
