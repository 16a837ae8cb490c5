/*
 * infile.c — xf_infile_open, the one way rlflow opens a file it reads
 * (models, tensors, external data, vocabularies, checkpoints): only a
 * regular file is read. A FIFO would block the tool forever waiting for a
 * writer, a device could be endless, and a directory reads as an error only
 * later; so they are refused at once with a message saying what the path
 * is, as the rules database already refuses them. The file is opened
 * non-blocking and checked again on the open descriptor, so a path swapped
 * for a FIFO between the two checks cannot block either.
 */
#include "ir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a plain file";
}

xf_status xf_infile_open(const char *path, FILE **out, xf_error *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return XF_FAIL(err, XF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return XF_FAIL(err, XF_ERR_IO, "%s: not a regular file (%s); give a file to read",
                       path, kind_of(st.st_mode));
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return XF_FAIL(err, XF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    xf_status s = XF_OK;
    int flags = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) != 0)
        s = XF_FAIL(err, XF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        s = XF_FAIL(err, XF_ERR_IO, "%s: not a regular file (%s); give a file to read", path,
                    kind_of(st.st_mode));
    else if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
             !(*out = fdopen(fd, "rb")))
        s = XF_FAIL(err, XF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (s != XF_OK) close(fd);
    return s;
}
