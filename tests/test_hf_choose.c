/* hf_choose and hf_ref_parse (src/tools/hf_choose.c): which GGUF of a
   repository a USER/REPO[:QUANT] means, and which names are refused. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "hf.h"
#include "tap.h"

#define N(a) ((int)(sizeof a / sizeof a[0]))

static const char *chosen(char *const *names, int n, const char *quant, ember_err *err)
{
    int k = hf_choose("u/r", names, n, quant, err);
    return k >= 0 ? names[k] : k == HF_CHOOSE_AMBIGUOUS ? "(ambiguous)" : "(none)";
}

int main(void)
{
    ember_err err;
    char *bart[] = {"README.md", "Model-IQ4_XS.gguf", "Model-Q4_K_S.gguf", "Model-Q4_K_M.gguf", "Model-Q4_K.gguf",
                    "Model-Q8_0.gguf", "Model-f16.gguf", "mmproj-Model-f16.gguf"};
    tap_ok(!strcmp(chosen(bart, N(bart), "", &err), "Model-Q4_K_M.gguf"), "default: Q4_K_M");
    tap_ok(!strcmp(chosen(bart, N(bart), "q8_0", &err), "Model-Q8_0.gguf"), "case-insensitive");
    tap_ok(!strcmp(chosen(bart, N(bart), "Q4_K", &err), "Model-Q4_K.gguf"),
           "a whole-word match (Q4_K) wins over the files it is part of (Q4_K_M, Q4_K_S)");
    tap_ok(!strcmp(chosen(bart, N(bart), "IQ4_XS", &err), "Model-IQ4_XS.gguf"), "IQ4_XS");
    tap_ok(!strcmp(chosen(bart, N(bart), "Q4_XS", &err), "Model-IQ4_XS.gguf"), "a part of one name only: that file");
    tap_ok(!strcmp(chosen(bart, N(bart), "F16", &err), "Model-f16.gguf"), "F16 is the model, not the mmproj projector");
    tap_ok(!strcmp(chosen(bart, N(bart), "Q4", &err), "(ambiguous)") && strstr(err.msg, "Model-Q4_K_M.gguf") &&
               strstr(err.msg, "Model-Q4_K_S.gguf"), "Q4: ambiguous, the matches listed (%s)", err.msg);
    tap_ok(!strcmp(chosen(bart, N(bart), "Model-Q8_0.gguf", &err), "Model-Q8_0.gguf"), "the whole file name");
    tap_ok(!strcmp(chosen(bart, N(bart), "Q2_K", &err), "(none)") && strstr(err.msg, "Q2_K") &&
               !strstr(err.msg, "mmproj") && !strstr(err.msg, "README"), "no match: the GGUF files offered (%s)",
           err.msg);

    char *q8[] = {"a/model.Q8_0.gguf", "a/model.Q5_K_M.gguf"};
    tap_ok(!strcmp(chosen(q8, N(q8), NULL, &err), "a/model.Q8_0.gguf"), "no Q4_K_M: Q8_0 (dots around the name)");
    char *one[] = {"weights.gguf", "config.json"};
    tap_ok(!strcmp(chosen(one, N(one), "", &err), "weights.gguf"), "the only GGUF, whatever its name");
    char *two[] = {"x-Q5_K_M.gguf", "x-Q6_K.gguf"};
    tap_ok(!strcmp(chosen(two, N(two), "", &err), "(ambiguous)") && strstr(err.msg, "x-Q5_K_M.gguf") &&
               strstr(err.msg, "x-Q6_K.gguf"), "two and no default: ambiguous, both listed");
    char *split[] = {"Q4_K_M/m-Q4_K_M-00001-of-00002.gguf", "Q4_K_M/m-Q4_K_M-00002-of-00002.gguf", "m-Q8_0.gguf"};
    tap_ok(!strcmp(chosen(split, N(split), "", &err), "m-Q8_0.gguf"), "split parts are not candidates");
    tap_ok(!strcmp(chosen(split, N(split), "Q4_K_M", &err), "(none)") && strstr(err.msg, "split"),
           "a quantization only there split: said so (%s)", err.msg);
    char *only_split[] = {"m-00001-of-00002.gguf", "m-00002-of-00002.gguf"};
    tap_ok(!strcmp(chosen(only_split, N(only_split), "", &err), "(none)") && strstr(err.msg, "split"),
           "only split files: none, said so");
    char *twoq4[] = {"m-Q4_K_M.gguf", "m-UD-Q4_K_M.gguf", "m-Q8_0.gguf"};
    tap_ok(!strcmp(chosen(twoq4, N(twoq4), "", &err), "(ambiguous)") && strstr(err.msg, "m-UD-Q4_K_M.gguf") &&
               !strstr(err.msg, "m-Q8_0"), "two Q4_K_M: ambiguous, both listed, not Q8_0 instead (%s)", err.msg);
    char *dirs[] = {"Q4_K_M/model.gguf", "Q8_0/model.gguf", "README.md"};
    tap_ok(!strcmp(chosen(dirs, N(dirs), "", &err), "Q4_K_M/model.gguf") &&
               !strcmp(chosen(dirs, N(dirs), "q8_0", &err), "Q8_0/model.gguf"),
           "a quantization named by the folder alone");
    char *same[] = {"a/m-Q8_0.gguf", "b/m-Q8_0.gguf", "b/m-Q4_0.gguf"};
    tap_ok(!strcmp(chosen(same, N(same), "Q8_0", &err), "(ambiguous)") &&
               !strcmp(chosen(same, N(same), "b/m-Q8_0.gguf", &err), "b/m-Q8_0.gguf") &&
               !strcmp(chosen(same, N(same), "b/Q8_0", &err), "(none)"),
           "a path (FOLDER/FILE, as ember models names it) tells two of one name apart");
    tap_ok(!strcmp(chosen(only_split, N(only_split), "", &err), "(none)") && strstr(err.msg, "--merge"),
           "only split files: how to join them said (%s)", err.msg);
    char *none[] = {"README.md", "model.safetensors"};
    tap_ok(!strcmp(chosen(none, N(none), "", &err), "(none)") && strstr(err.msg, "no GGUF"), "no GGUF at all");
    tap_ok(!strcmp(chosen(NULL, 0, "", &err), "(none)"), "an empty repository");

    hf_ref r;
    tap_ok(hf_ref_parse("hf:bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M", &r, &err) == 0 &&
               !strcmp(r.repo, "bartowski/Llama-3.2-1B-Instruct-GGUF") && !strcmp(r.quant, "Q4_K_M"),
           "hf:USER/REPO:QUANT");
    tap_ok(hf_ref_parse("u/r", &r, &err) == 0 && !strcmp(r.repo, "u/r") && !r.quant[0], "USER/REPO");
    tap_ok(hf_ref_parse("u/r:Q4_K_M/m-Q4_K_M.gguf", &r, &err) == 0 && !strcmp(r.repo, "u/r") &&
               !strcmp(r.quant, "Q4_K_M/m-Q4_K_M.gguf"), "USER/REPO:FOLDER/FILE");
    const char *bad[] = {"noslash", "/r", "u/", "../r", "u/..", "u/r/x", "u/.hidden", "u/a..b", "u/r:", "u/r:Q4 x",
                         "u/a--b", "u r/x", "u/r\n"};
    int refused = 0;
    for (int i = 0; i < N(bad); i++) refused += hf_ref_parse(bad[i], &r, &err) != 0;
    tap_ok(refused == N(bad), "names that are not the Hub's, or would leave the cache, are refused (%d/%d)", refused,
           N(bad));
    return tap_done();
}
