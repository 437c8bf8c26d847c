/* The status-bar formatter: exact text for given stats and widths, and
   the order in which parts go when the terminal is narrow. */
#include "config.h"

#include <locale.h>
#include <string.h>

#include "statusbar.h"
#include "tap.h"
#include "wrap.h"

static ui_status packed_status(void)
{
    ui_status s;
    memset(&s, 0, sizeof s);
    s.model = "llama-mini";
    s.profile = "packed-decode";
    s.have_stats = true;
    s.have_turn = true;
    s.st.strategy = EMBER_STRATEGY_PACKED;
    s.st.packed_proj_mask = EMBER_PROJ_ALL & ~EMBER_PROJ_DOWN;
    s.st.src_evicted = true;
    s.st.decode_tps = 42.25;
    s.st.ttft_ms = 123.4;
    s.st.n_past = 312;
    s.st.n_ctx = 4096;
    s.st.mem.valid = true;
    s.st.mem.rss_kb = 1300000;      /* 1.24 GiB */
    s.st.mem.pss_kb = 900 * 1024;
    s.st.mem.pss_file_kb = 50 * 1024 + 512;
    return s;
}

int main(void)
{
    setlocale(LC_ALL, "C.UTF-8");
    char out[512], k[32];
    ui_fmt_kb(512, k, sizeof k);
    tap_ok(!strcmp(k, "512 KiB"), "KiB below 1 MiB");
    ui_fmt_kb(50 * 1024 + 512, k, sizeof k);
    tap_ok(!strcmp(k, "50.5 MiB"), "one decimal below 100 MiB (%s)", k);
    ui_fmt_kb(900 * 1024, k, sizeof k);
    tap_ok(!strcmp(k, "900 MiB"), "whole MiB below 1 GiB");
    ui_fmt_kb(1300000, k, sizeof k);
    tap_ok(!strcmp(k, "1.24 GiB"), "GiB with two decimals (%s)", k);

    ui_status s = packed_status();
    int w = ui_status_format(&s, 200, true, out, sizeof out);
    const char *full = "llama-mini | packed-decode: packed 6/7 proj, src evicted | 42.2 tok/s avg | "
                       "TTFT 123 ms | ctx 312/4096 | RSS 1.24 GiB | PSS 900 MiB (file 50.5 MiB)";
    tap_ok(!strcmp(out, full), "full bar, ASCII: '%s'", out);
    tap_ok(w == (int)strlen(full), "width reported (%d)", w);

    ui_status_format(&s, 200, false, out, sizeof out);
    tap_ok(strstr(out, "packed 6/7 proj \xc2\xb7 src evicted") && strstr(out, " \xe2\x94\x82 "),
           "UTF-8 bar uses the middle dot and box bar: '%s'", out);
    tap_ok(ui_str_width(out, strlen(out)) == (int)strlen(full) + 1,
           "UTF-8 separators are one column each (the dot is 3 columns, the comma 2)");

    s.live = true;
    ui_status_format(&s, 200, true, out, sizeof out);
    tap_ok(strstr(out, "| 42.2 tok/s |") != NULL, "live rate has no 'avg'");
    s.live = false;

    /* narrowing: drop order (the model name stays until last: it tells two chats apart) */
    static const struct { int width; const char *want, *what; } steps[] = {
        {140, "llama-mini | packed-decode: packed | 42.2 tok/s avg | TTFT 123 ms | ctx 312/4096 | "
              "RSS 1.24 GiB | PSS 900 MiB (file 50.5 MiB)", "first the packing detail goes"},
        {120, "llama-mini | packed-decode: packed | 42.2 tok/s avg | TTFT 123 ms | ctx 312/4096 | "
              "RSS 1.24 GiB | PSS 900 MiB", "then the file part"},
        {100, "llama-mini | packed-decode: packed | 42.2 tok/s avg | TTFT 123 ms | RSS 1.24 GiB | PSS 900 MiB",
         "then context"},
        {90, "llama-mini | packed-decode: packed | 42.2 tok/s avg | RSS 1.24 GiB | PSS 900 MiB", "then TTFT"},
        {75, "llama-mini | packed-decode: packed | 42.2 tok/s avg | PSS 900 MiB", "then RSS"},
        {60, "llama-mini | packed | 42.2 tok/s avg | PSS 900 MiB", "then the profile name"},
        {45, "packed | 42.2 tok/s avg | PSS 900 MiB", "the model name last"},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        ui_status_format(&s, steps[i].width, true, out, sizeof out);
        tap_ok(!strcmp(out, steps[i].want), "%d columns, %s: '%s'", steps[i].width, steps[i].what, out);
    }
    /* a long name is shortened before anything else but the packing detail goes */
    s.model = "Meta-Llama-3.2-1B-Instruct-Q4_K_M";
    ui_status_format(&s, 140, true, out, sizeof out);
    tap_ok(!strcmp(out, "Meta-Llama-3.2-1B-Instr~ | packed-decode: packed | 42.2 tok/s avg | TTFT 123 ms | "
                        "ctx 312/4096 | RSS 1.24 GiB | PSS 900 MiB (file 50.5 MiB)"),
           "a long model name is cut to 24 columns with a mark: '%s'", out);
    ui_status_format(&s, 140, false, out, sizeof out);
    tap_ok(strstr(out, "Meta-Llama-3.2-1B-Instr\xe2\x80\xa6 ") == out, "(an ellipsis in UTF-8): '%s'", out);
    ui_status_format(&s, 60, true, out, sizeof out);
    tap_ok(!strcmp(out, "Meta-Llama-~ | packed | 42.2 tok/s avg | PSS 900 MiB"),
           "and to 12 before it goes: '%s'", out);
    s.model = "llama-mini";
    w = ui_status_format(&s, 19, true, out, sizeof out);
    tap_ok(!strcmp(out, "packed | 42.2 tok/s") && w == 19, "finally cut at the width: '%s'", out);
    w = ui_status_format(&s, 0, true, out, sizeof out);
    tap_ok(w == 0 && out[0] == 0, "zero width: empty");

    /* before any stats: placeholders, not numbers */
    ui_status none;
    memset(&none, 0, sizeof none);
    none.progress = "loading model";
    ui_status_format(&none, 200, true, out, sizeof out);
    tap_ok(!strcmp(out, "loading model | no model | -- tok/s | TTFT --"), "no stats yet: '%s'", out);

    /* compressed, demo, no profile */
    ui_status c = packed_status();
    c.profile = NULL;
    c.demo = true;
    c.st.strategy = EMBER_STRATEGY_COMPRESSED;
    ui_status_format(&c, 200, true, out, sizeof out);
    tap_ok(!strncmp(out, "llama-mini [DEMO: random weights] | compressed | 42.2", 53),
           "demo label and plain strategy: '%s'", out);
    ui_status_format(&c, 70, true, out, sizeof out);
    tap_ok(!strncmp(out, "DEMO | compressed", 17), "demo label survives narrowing: '%s'", out);

    /* packed, sources resident */
    s.st.src_evicted = false;
    s.st.packed_proj_mask = EMBER_PROJ_Q | EMBER_PROJ_K;
    ui_status_format(&s, 200, true, out, sizeof out);
    tap_ok(strstr(out, "packed 2/7 proj, src resident") != NULL, "resident sources shown: '%s'", out);
    /* tiles mapped from the pack cache: file pages, the sources never read
       (eviction ran on pages nobody faulted in: "evicted" would mislead) */
    s.st.src_evicted = true;
    s.st.pack_cache = EMBER_PACK_CACHE_HIT;
    ui_status_format(&s, 200, true, out, sizeof out);
    tap_ok(strstr(out, "packed 2/7 proj, tiles file-backed") != NULL && !strstr(out, "evicted"),
           "a pack cache hit shows file-backed tiles: '%s'", out);
    s.st.pack_cache = EMBER_PACK_CACHE_OFF;

    /* the chat template: the family, and whether it is a stand-in; it goes
       first when the bar is narrow */
    ui_status t = packed_status();
    t.tmpl = "gguf (jinja)";
    ui_status_format(&t, 200, true, out, sizeof out);
    tap_ok(!strncmp(out, "llama-mini | tmpl gguf | packed-decode:", 39), "the GGUF template: '%s'", out);
    t.tmpl = "chatml (fallback: the GGUF template failed: boom)";
    ui_status_format(&t, 200, true, out, sizeof out);
    tap_ok(!strncmp(out, "llama-mini | tmpl chatml fallback | packed-decode:", 50), "a fallback says so: '%s'", out);
    ui_status_format(&t, 160, true, out, sizeof out);
    tap_ok(!strcmp(out, "llama-mini | packed-decode: packed 6/7 proj, src evicted | 42.2 tok/s avg | "
                        "TTFT 123 ms | ctx 312/4096 | RSS 1.24 GiB | PSS 900 MiB (file 50.5 MiB)"),
           "narrow: the template goes first, before the model name: '%s'", out);

    /* unreadable /proc: no memory numbers invented */
    s.st.mem.valid = false;
    ui_status_format(&s, 200, true, out, sizeof out);
    tap_ok(strstr(out, "PSS n/a") && !strstr(out, "RSS"), "memory unavailable: '%s'", out);
    return tap_done();
}
