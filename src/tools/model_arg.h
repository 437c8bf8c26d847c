/* A command's model argument: a file, or hf:USER/REPO[:QUANT], which is
   looked up in the Hugging Face cache and pulled when missing.  Every
   command that opens a model goes through here, once, before it does. */
#ifndef EMBER_MODEL_ARG_H
#define EMBER_MODEL_ARG_H

#include <stddef.h>

/* *model unchanged when it is not an hf: reference; else resolved into buf
   and *model pointed at it.  0, or -1 after printing "PROG: why". */
int model_arg_resolve(const char *prog, const char **model, char *buf, size_t cap);
/* --hf USER/REPO[:QUANT]: the same as -m hf:USER/REPO[:QUANT] (the string
   lives as long as the process). */
const char *model_arg_hf(const char *repo);

#endif
