/* unit_files.h: files and folders in the unit tests (header only). */
#ifndef UNIT_FILES_H
#define UNIT_FILES_H

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* The whole file, malloc'd and NUL-terminated; *len its size. Fails the test when it
 * cannot be read. */
static inline char *ut_read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, fp), (size_t)size);
    fclose(fp);
    buf[size] = '\0';
    *len = (size_t)size;
    return buf;
}

/* How many entries a folder has, "." and ".." not counted. */
static inline int ut_entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static inline int ut_remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* Makes a new empty folder under $TMPDIR (else /tmp) into dir; 0, or -1 when it cannot. */
static inline int ut_make_temp_dir(char *dir, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, len, "%s/devtrace-unit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

/* Removes a folder and everything in it (links not followed). */
static inline void ut_remove_tree(const char *dir)
{
    nftw(dir, ut_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Whether path names anything (a link is not followed). */
static inline int ut_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* The decompressed content of a gzip file (every member), malloc'd; *len its size. Fails
 * the test when it is not gzip or cannot be read. */
static inline char *ut_gunzip_file(const char *path, size_t *len)
{
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        if (cap - n < 4096) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        int got = gzread(gz, buf + n, (unsigned)(cap - n));
        assert_true(got >= 0);
        if (got == 0)
            break;
        n += (size_t)got;
    }
    assert_int_equal(gzclose(gz), Z_OK);
    *len = n;
    return buf;
}

/* Fails the test unless got (malloc'd, got_len bytes; freed here) is the len bytes at want. */
static inline void ut_assert_same_bytes(char *got, size_t got_len, const char *want, size_t len)
{
    assert_int_equal(got_len, len);
    assert_memory_equal(got, want, len);
    free(got);
}

/* Fails the test unless the file holds exactly the len bytes at want. */
static inline void ut_assert_file_holds(const char *path, const char *want, size_t len)
{
    size_t got_len;
    char *got = ut_read_file(path, &got_len);
    ut_assert_same_bytes(got, got_len, want, len);
}

/* Fails the test unless the gzip file's content is exactly the len bytes at want. */
static inline void ut_assert_gunzipped_holds(const char *path, const char *want, size_t len)
{
    size_t got_len;
    char *got = ut_gunzip_file(path, &got_len);
    ut_assert_same_bytes(got, got_len, want, len);
}

/* Whether the file starts with gzip's magic bytes. */
static inline int ut_is_gzip(const char *path)
{
    unsigned char magic[2] = {0, 0};
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    size_t n = fread(magic, 1, 2, fp);
    fclose(fp);
    return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

#endif
