/* new_file.c: files created without following a name planted by someone else (see
 * new_file.h). A trace is written where the user says, often a shared directory; another
 * user who can make names there must not be able to point devtrace's writes elsewhere. */
#include "new_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process's umask, read without changing it (umask() would, for every thread). */
static mode_t current_umask(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    unsigned mask = 022;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Umask: %o", &mask) == 1)
            break;
    if (f)
        fclose(f);
    return (mode_t)(mask & 0777);
}

int dt_path_has_foreign_link(const char *path)
{
    char prefix[4096];
    size_t n = strlen(path);
    if (n >= sizeof prefix)
        return 0; /* the open says ENAMETOOLONG */
    for (size_t i = 1; i < n; i++) {
        if (path[i] != '/' || path[i - 1] == '/')
            continue;
        memcpy(prefix, path, i);
        prefix[i] = '\0';
        struct stat st;
        if (lstat(prefix, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0)
            return 1;
    }
    return 0;
}

int dt_file_create_new(const char *path)
{
    if (dt_path_has_foreign_link(path)) {
        errno = EXDEV;
        return -1;
    }
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
}

/* A name there that is this user's stale file: a regular file, one link, owned by us. */
static int is_own_plain_file(const struct stat *st)
{
    return S_ISREG(st->st_mode) && st->st_uid == geteuid() && st->st_nlink == 1;
}

int dt_file_create_tmp(const char *path, char *tmp, size_t cap)
{
    if (snprintf(tmp, cap, "%s.tmp", path) >= (int)cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = dt_file_create_new(tmp);
    struct stat st;
    if (fd < 0 && errno == EEXIST && lstat(tmp, &st) == 0 && is_own_plain_file(&st) && unlink(tmp) == 0)
        fd = dt_file_create_new(tmp); /* a killed run's leftover: made again */
    if (fd >= 0 || errno != EEXIST)
        return fd;
    /* Someone else's name, or a link: left alone; a name of our own beside it. */
    if (snprintf(tmp, cap, "%s.tmp.XXXXXX", path) >= (int)cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0)
        fchmod(fd, 0666 & ~current_umask()); /* mkostemp makes 0600: as a plain creation would */
    return fd;
}

int dt_file_create_or_empty(const char *path)
{
    int fd = dt_file_create_new(path);
    if (fd >= 0 || errno != EEXIST)
        return fd;
    /* O_NONBLOCK: a FIFO there must not block the open; refused below. */
    fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int refusal = 0;
    if (fstat(fd, &st) != 0)
        refusal = errno;
    else if (!S_ISREG(st.st_mode))
        refusal = EINVAL;
    else if (st.st_uid != geteuid())
        refusal = EPERM;
    else if (st.st_nlink != 1)
        refusal = EMLINK;
    else if (fcntl(fd, F_SETFL, 0) != 0 || ftruncate(fd, 0) != 0)
        refusal = errno;
    if (refusal) {
        close(fd);
        errno = refusal;
        return -1;
    }
    return fd;
}

const char *dt_file_refusal(int err)
{
    switch (err) {
    case ELOOP:
        return "it is a symbolic link, which devtrace does not write through; remove it or choose another path";
    case EPERM:
        return "a file of another user is there; remove it or choose another path";
    case EMLINK:
        return "the file there has other names (hard links); remove it or choose another path";
    case EINVAL:
        return "it is not a regular file; choose another path";
    case EXDEV:
        return "a folder on the way is a symbolic link of another user's, which devtrace does not follow; "
               "give the real folder";
    default:
        return NULL;
    }
}
