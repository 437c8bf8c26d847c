/* Subcommands of the `ember` program. Each returns the process exit status. */
#ifndef EMBER_CLI_H
#define EMBER_CLI_H

int cmd_inspect(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_chat(int argc, char **argv);
int cmd_recache(int argc, char **argv);
int cmd_template(int argc, char **argv);
int cmd_chats(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_cache(int argc, char **argv);

struct option;

/* Usage errors (cli_usage.c): "CMD: MESSAGE (try CMD --help)" on stderr;
   both return 2, the exit status of a usage error. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* After getopt_long returned C ('?' or ':'), with opterr 0 and an option
   string that starts with ':' (so a missing value is ':'): an unknown,
   ambiguous or valueless option, or one that needs a value, named. */
int cli_getopt_error(const char *cmd, char **argv, const struct option *longopts, int c);

#endif
