/* ember: dispatch to subcommands. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ember.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember [-m MODEL] [options]       open the chat on MODEL\n"
        "                                        (a file, or hf:USER/REPO[:QUANT])\n"
        "       ember COMMAND [options]\n"
        "\n"
        "Commands:\n"
        "  chat       the full-screen chat (the default when -m is given)\n"
        "  chats      list the saved conversations (ember -c reopens the last)\n"
        "  run        generate from a prompt, print text and stats\n"
        "  eval       write logits for a prompt (golden comparisons)\n"
        "  inspect    show a GGUF file's metadata, tensors and execution plan\n"
        "  tokenize   print the token ids of a text\n"
        "  template   render a chat template with a conversation\n"
        "  synth      write a random-weight model of a known shape\n"
        "  bench      measure prefill / decode speed and memory\n"
        "  profiles   list and show YAML profiles\n"
        "  recache    re-read a model file into 2 MiB page-cache folios\n"
        "  pull       download a GGUF from Hugging Face (USER/REPO[:QUANT])\n"
        "  models     list the models in the Hugging Face cache and $EMBER_MODELS\n"
        "  cache      list or clear the pack cache (packed tiles kept on disk)\n"
        "\n"
        "  -h, --help      this help;  ember COMMAND --help for a command's options\n"
        "  -V, --version   print the version\n"
        "\n"
        "See ember(1) and ember-profile(5).\n");
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    /* Every command: a truncated model file is named as such, not a bare
       "Bus error" (the chat adds its terminal restore on top). */
    ember_fault_guard_install(NULL);
    const char *c = argv[1];
    if (!strcmp(c, "-h") || !strcmp(c, "--help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(c, "-V") || !strcmp(c, "--version")) {
        printf("ember %s\n", PACKAGE_VERSION);
        return 0;
    }
    /* `ember -m MODEL ...`, `ember --demo`: options without a command open
       the chat.  (Usage errors name the command themselves, cli_usage.c.) */
    if (c[0] == '-') return cmd_chat(argc, argv);
    static const struct { const char *name; int (*fn)(int, char **); } cmds[] = {
        {"chat", cmd_chat},
        {"inspect", cmd_inspect},
        {"synth", cmd_synth},
        {"run", cmd_run},
        {"eval", cmd_eval},
        {"tokenize", cmd_tokenize},
        {"template", cmd_template},
        {"profiles", cmd_profiles},
        {"bench", cmd_bench},
        {"recache", cmd_recache},
        {"chats", cmd_chats},
        {"pull", cmd_pull},
        {"models", cmd_models},
        {"cache", cmd_cache},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(c, cmds[i].name)) {
            return cmds[i].fn(argc - 1, argv + 1);
        }
    /* `ember model.gguf`: a file where a command was expected */
    size_t n = strlen(c);
    if ((n > 5 && !strcmp(c + n - 5, ".gguf")) || strchr(c, '/') || access(c, F_OK) == 0) {
        fprintf(stderr, "ember: unknown command '%s'; to chat with a model file: ember -m %s\n", c, c);
        return 2;
    }
    fprintf(stderr, "ember: unknown command '%s' (try ember --help)\n", c);
    return 2;
}

/* Output that never reached its destination (a full disk, /dev/full, a
   closed pipe) is a failure even when the command itself went well. */
int main(int argc, char **argv)
{
    /* A file size limit (ulimit -f) is a failed write, reported and
       cleaned up like a full disk, not a kill that leaves a temporary. */
    signal(SIGXFSZ, SIG_IGN);
    int rc = dispatch(argc, argv);
    if (ember_stdout_close() != 0 && rc == 0) rc = 1;
    return rc;
}
