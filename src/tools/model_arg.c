/* -m hf:USER/REPO[:QUANT] for every command (model_arg.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hf.h"
#include "model_arg.h"

int model_arg_resolve(const char *prog, const char **model, char *buf, size_t cap)
{
    if (!*model || strncmp(*model, "hf:", 3)) return 0;
    /* a file that happens to be called so is that file */
    if (access(*model, F_OK) == 0) return 0;
    hf_ref r;
    ember_err err = {{0}};
    if (hf_ref_parse(*model, &r, &err) || hf_resolve(&r, buf, cap, &err)) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return -1;
    }
    *model = buf;
    return 0;
}

const char *model_arg_hf(const char *repo)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "hf:%s", repo);
    return buf;
}
