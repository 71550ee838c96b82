/* run_program.c: runs a benchmark's program in a child (bench.h, bench_run_program):
 * its stdout captured, its stderr into a file whose first line (or all of it, on
 * failure) comes back as the error text; and counts the events of a kind in the trace it
 * wrote (bench_count_lines: the Chrome sink writes one event a line). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

int bench_run_program(char *const argv[], int keep_opencl_layers, const char *errpath, char *out, size_t outcap,
                      char *err, size_t errcap)
{
    out[0] = '\0';
    err[0] = '\0';
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (e >= 0)
            dup2(e, 2), close(e);
        if (!keep_opencl_layers)
            unsetenv("OPENCL_LAYERS");
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    size_t used = 0;
    for (;;) {
        ssize_t n = read(fds[0], out + used, outcap - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
        if (used == outcap - 1)
            break;
    }
    out[used] = '\0';
    close(fds[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return -1;
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    FILE *f = fopen(errpath, "r");
    if (f) {
        size_t n = fread(err, 1, errcap - 1, f);
        err[n] = '\0';
        char *nl = strchr(err, '\n');
        if (nl && rc == 0)
            *nl = '\0';
        fclose(f);
    }
    return rc;
}

long bench_count_lines(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long n = 0;
    char line[8192];
    while (fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}
