/* cli.h: the devtrace command's subcommands. */
#ifndef DT_CLI_H
#define DT_CLI_H

int dt_cmd_record(int argc, char **argv);
int dt_cmd_list(int argc, char **argv);
int dt_cmd_replay(int argc, char **argv);
int dt_cmd_report(int argc, char **argv);
int dt_cmd_diff(int argc, char **argv);
int dt_cmd_convert(int argc, char **argv);

/* devtrace record --torch (record_torch.c): the folder holding the devtrace Python package
 * (0, or -1 after printing why), and the program's environment for it. */
int dt_torch_python_dir(char *out, size_t cap);
void dt_torch_setup_env(const char *python_dir);
int dt_cmd_capture(int argc, char **argv);

/* Exit codes of devtrace itself (record passes the program's status through). */
#define DT_EXIT_USAGE 2
#define DT_EXIT_FAILURE 1
#define DT_EXIT_CANNOT_RUN 127

#endif
