/* new_file.h: the files devtrace creates (traces, their temporary files, raw captures),
 * opened so that a name planted beforehand by someone else (a symbolic link to another
 * file, a hard link, another user's file) is never written through. */
#ifndef DT_NEW_FILE_H
#define DT_NEW_FILE_H

#include <stddef.h>

/* Whether a folder on path is a symbolic link owned by another user (neither this one nor
 * root): a name someone else could point anywhere, which the files below never go through. */
int dt_path_has_foreign_link(const char *path);

/* A new file at path for writing: O_CREAT|O_EXCL|O_NOFOLLOW, mode 0666 less the umask.
 * The descriptor, or -1 with errno (EEXIST: something is there already, a link included;
 * EXDEV: dt_path_has_foreign_link). */
int dt_file_create_new(const char *path);

/* The temporary file a file written atomically goes to before its rename to path: "PATH.tmp"
 * made new. What is there already is used only when it is a stale temporary file of this
 * user's (a regular file, one link: it is removed and made again); anything else (a link,
 * another user's file, a file with other names) is left alone and a free "PATH.tmp.XXXXXX" is
 * made instead. tmp (cap bytes, at least strlen(path) + 12) gets the name made. The
 * descriptor, or -1 with errno. */
int dt_file_create_tmp(const char *path, char *tmp, size_t cap);

/* A file written in place (a raw capture, which grows while the program runs): made new, or
 * an existing regular file of this user's with one link, emptied. A link, another user's
 * file or a file with other names there is refused (-1, errno ELOOP, EPERM or EMLINK), as is
 * anything that is not a regular file (EINVAL). The descriptor, or -1 with errno. */
int dt_file_create_or_empty(const char *path);

/* What a refusal above means, for a message ("it is a symbolic link, ..."); NULL for an
 * errno that is not one (say strerror's). */
const char *dt_file_refusal(int err);

#endif
