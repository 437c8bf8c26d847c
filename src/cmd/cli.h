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

#endif
