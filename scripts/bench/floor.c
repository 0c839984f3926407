/*
 * The floor of scripts/bench.sh: the least CPU a process spends to start `/bin/sh -c CMD`
 * with its stdout in a pipe, read that output and wait for the exit, on this machine. One
 * thread, no event loop, no HTTP, no second pipe, the C library's posix_spawn and nothing
 * else. It prints its own CPU (user + system, from getrusage: not its children's) per
 * spawn, as JSON. No server that answers over HTTP and captures stdout and stderr apart
 * can spend less per execution than this.
 *
 *   floor COUNT CMD
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static double micros(struct timeval t) { return t.tv_sec * 1e6 + t.tv_usec; }

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: floor COUNT CMD\n");
        return 2;
    }
    long n = atol(argv[1]);
    char *args[] = {"/bin/sh", "-c", argv[2], NULL};
    char buf[4096];
    for (long i = 0; i < n; i++) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0) return perror("pipe2"), 1;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, p[1], 1);
        pid_t pid;
        if (posix_spawn(&pid, "/bin/sh", &fa, NULL, args, environ) != 0) return perror("spawn"), 1;
        posix_spawn_file_actions_destroy(&fa);
        close(p[1]);
        while (read(p[0], buf, sizeof buf) > 0) {}
        close(p[0]);
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return fprintf(stderr, "floor: the command failed\n"), 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"ops\":%ld,\"cpu_per_op_us\":%.1f}\n", n,
           (micros(ru.ru_utime) + micros(ru.ru_stime)) / n);
    return 0;
}
