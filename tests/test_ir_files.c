/*
 * test_ir_files.c — the ir's file helpers: the output-file writer
 * (xf_outfile) and the regular-input opener (xf_infile_open).
 *
 * Checked: a new file and a replaced one get the content (the replaced one
 * keeps its mode) and no temporary file stays; a symbolic link is followed
 * (the link stays a link, its target gets the content; a dangling link's
 * target is created); a full device (a stand-in for /dev/full) fails with
 * "No space left on device" and stays a device; a FIFO is written through
 * to its reader and stays a FIFO; an aborted or failed write leaves the
 * destination as it was; a directory is refused. The opener reads regular
 * files and links to them, and refuses a FIFO (at once, without waiting
 * for a writer), a directory and a device, saying which.
 */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* A fresh scratch directory `name`; its path in dir. */
static void scratch_dir(const char *name, char *dir, size_t n)
{
    snprintf(dir, n, "%s", xf_test_tmp(name));
    ck_assert_int_eq(xf_test_system("rm -rf '%s' && mkdir -p '%s'", dir, dir), 0);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static void expect_content(const char *path, const char *text)
{
    size_t n;
    char *got = xf_test_read_file(path, &n);
    ck_assert_msg(n == strlen(text) && memcmp(got, text, n) == 0, "%s holds '%s', not '%s'", path,
                  got, text);
    free(got);
}

/* Nothing named "*.tmp.*" in dir. */
static void expect_no_temp(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)))
        ck_assert_msg(!strstr(e->d_name, ".tmp."), "temporary file %s left in %s", e->d_name, dir);
    closedir(d);
}

/* SIGTERM (and SIGINT) during a write removes the temporary file and
 * still ends the process with that signal (a Ctrl-C left
 * out.onnx.tmp.PID.0 behind); the destination is left as it was. */
START_TEST(outfile_temp_removed_on_stop_signals)
{
    char dir[4096], path[4200];
    scratch_dir("outfile_signal", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/out.bin", dir);
    write_text(path, "old");
    const int sigs[2] = {SIGTERM, SIGINT};
    for (int k = 0; k < 2; k++) {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            signal(sigs[k], SIG_DFL);
            xf_outfile o;
            if (xf_outfile_open(&o, path, NULL) != XF_OK) _exit(3);
            fputs("new content, half written", o.f);
            fflush(o.f);
            raise(sigs[k]);
            _exit(4); /* not reached */
        }
        int status = 0;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == sigs[k], "status %d", status);
        expect_no_temp(dir);
        expect_content(path, "old");
    }
}
END_TEST

/* A file the process reads (xf_outfile_protect) is never an output: not by
 * its path, not through another name (a link), and a new path registered
 * is refused too; others are written. */
START_TEST(outfile_refuses_protected_files)
{
    char dir[4096], in[4200], link[4200], fresh[4200], other[4200];
    scratch_dir("outfile_protect", dir, sizeof dir);
    snprintf(in, sizeof in, "%s/model.onnx", dir);
    snprintf(link, sizeof link, "%s/alias.onnx", dir);
    snprintf(fresh, sizeof fresh, "%s/cache.db", dir);
    snprintf(other, sizeof other, "%s/out.onnx", dir);
    write_text(in, "input");
    ck_assert_int_eq(symlink(in, link), 0);
    xf_error err;
    ck_assert_int_eq(xf_outfile_protect(in, "the input model", &err), XF_OK);
    ck_assert_int_eq(xf_outfile_protect(fresh, "the cost cache", &err), XF_OK);
    ck_assert_int_eq(xf_outfile_write_all(in, "x", 1, &err), XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "is the input model of this run");
    ck_assert_int_eq(xf_outfile_write_all(link, "x", 1, &err), XF_ERR_INVALID);
    ck_assert_int_eq(xf_outfile_write_all(fresh, "x", 1, &err), XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "is the cost cache of this run");
    ck_assert_int_eq(xf_outfile_probe(in, &err), XF_ERR_INVALID);
    ck_assert_int_eq(xf_outfile_write_all(other, "ok", 2, &err), XF_OK);
    expect_content(in, "input");
    expect_content(other, "ok");
    xf_outfile_protect_clear();
    ck_assert_int_eq(xf_outfile_write_all(in, "x", 1, &err), XF_OK);
}
END_TEST

START_TEST(outfile_writes_new_and_replaces_keeping_the_mode)
{
    char dir[4096], path[4200];
    scratch_dir("out_new", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/a.txt", dir);
    xf_error err;
    ck_assert_int_eq(xf_outfile_write_all(path, "first", 5, &err), XF_OK);
    expect_content(path, "first");
    ck_assert_int_eq(chmod(path, 0600), 0);
    xf_outfile o;
    ck_assert_int_eq(xf_outfile_open(&o, path, &err), XF_OK);
    fputs("second", o.f);
    ck_assert_int_eq(xf_outfile_commit(&o, &err), XF_OK);
    expect_content(path, "second");
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0600);
    expect_no_temp(dir);
}
END_TEST

START_TEST(outfile_follows_symbolic_links)
{
    char dir[4096], link[4200], target[4200];
    scratch_dir("out_link", dir, sizeof dir);
    snprintf(target, sizeof target, "%s/target.txt", dir);
    snprintf(link, sizeof link, "%s/link.txt", dir);
    write_text(target, "old");
    ck_assert_int_eq(symlink("target.txt", link), 0);
    xf_error err;
    ck_assert_int_eq(xf_outfile_write_all(link, "new", 3, &err), XF_OK);
    struct stat st;
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert_msg(S_ISLNK(st.st_mode), "the link was replaced");
    expect_content(target, "new");
    /* a dangling link: its target is created */
    ck_assert_int_eq(unlink(target), 0);
    ck_assert_int_eq(xf_outfile_write_all(link, "fresh", 5, &err), XF_OK);
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    expect_content(target, "fresh");
    expect_no_temp(dir);
}
END_TEST

START_TEST(outfile_full_device_fails_and_stays_a_device)
{
    const char *full = xf_test_full_device("full");
    if (!full) XF_SKIP("cannot make a full-device stand-in (mknod) and running as root");
    char dev[4096];
    snprintf(dev, sizeof dev, "%s", full);
    static char big[1 << 17]; /* more than stdio's buffer: writes fail before the flush */
    memset(big, 'x', sizeof big);
    xf_error err;
    ck_assert_int_eq(xf_outfile_write_all(dev, big, sizeof big, &err), XF_ERR_IO);
    ck_assert_msg(strstr(err.msg, "No space left on device") && strstr(err.msg, dev), "%s",
                  err.msg);
    ck_assert_msg(xf_test_is_char_device(dev), "%s is no longer a device", dev);
    /* a small write fails at commit, when the buffer is flushed */
    xf_outfile o;
    ck_assert_int_eq(xf_outfile_open(&o, dev, &err), XF_OK);
    fputs("tiny", o.f);
    ck_assert_int_eq(xf_outfile_commit(&o, &err), XF_ERR_IO);
    xf_test_expect_contains(err.msg, "No space left on device");
    ck_assert(xf_test_is_char_device(dev));
}
END_TEST

START_TEST(outfile_writes_through_a_fifo)
{
    const char *p = xf_test_fifo("out.fifo");
    if (!p) XF_SKIP("cannot make a FIFO");
    char fifo[4096];
    snprintf(fifo, sizeof fifo, "%s", p);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) { /* the reader: exit 0 when it got exactly "through" */
        FILE *f = fopen(fifo, "rb");
        char buf[64];
        size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
        _exit(n == 7 && memcmp(buf, "through", 7) == 0 ? 0 : 1);
    }
    xf_error err;
    xf_status st = xf_outfile_write_all(fifo, "through", 7, &err);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(st == XF_OK, "%s", err.msg);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the reader did not get the data");
    struct stat sb;
    ck_assert_int_eq(lstat(fifo, &sb), 0);
    ck_assert_msg(S_ISFIFO(sb.st_mode), "the FIFO was replaced");
}
END_TEST

START_TEST(outfile_failure_leaves_the_destination)
{
    char dir[4096], path[4200];
    scratch_dir("out_fail", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/keep.txt", dir);
    write_text(path, "old");
    xf_error err;
    xf_outfile o;
    ck_assert_int_eq(xf_outfile_open(&o, path, &err), XF_OK);
    fputs("half", o.f);
    xf_outfile_abort(&o);
    expect_content(path, "old");
    expect_no_temp(dir);
    /* a directory is refused, a missing directory names the cause */
    ck_assert_int_eq(xf_outfile_write_all(dir, "x", 1, &err), XF_ERR_IO);
    xf_test_expect_contains(err.msg, "Is a directory");
    snprintf(path, sizeof path, "%s/no/such/file", dir);
    ck_assert_int_eq(xf_outfile_write_all(path, "x", 1, &err), XF_ERR_IO);
    xf_test_expect_contains(err.msg, "No such file or directory");
    expect_no_temp(dir);
}
END_TEST

START_TEST(infile_refuses_what_is_not_a_regular_file)
{
    char dir[4096], path[4200], link[4200];
    scratch_dir("in_kinds", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/plain", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    write_text(path, "data");
    ck_assert_int_eq(symlink("plain", link), 0);
    xf_error err;
    FILE *f;
    ck_assert_int_eq(xf_infile_open(link, &f, &err), XF_OK);
    char buf[8] = {0};
    ck_assert_uint_eq(fread(buf, 1, sizeof buf, f), 4);
    ck_assert_str_eq(buf, "data");
    fclose(f);
    const char *fifo = xf_test_fifo("in.fifo");
    if (fifo) {
        alarm(20); /* a blocking open would hang here */
        ck_assert_int_eq(xf_infile_open(fifo, &f, &err), XF_ERR_IO);
        alarm(0);
        ck_assert_ptr_null(f);
        xf_test_expect_contains(err.msg, "not a regular file (a FIFO)");
    } else {
        xf_test_skip_part("cannot make a FIFO");
    }
    ck_assert_int_eq(xf_infile_open(dir, &f, &err), XF_ERR_IO);
    xf_test_expect_contains(err.msg, "not a regular file (a directory)");
    ck_assert_int_eq(xf_infile_open("/dev/null", &f, &err), XF_ERR_IO);
    xf_test_expect_contains(err.msg, "/dev/null: not a regular file (a character device)");
    snprintf(path, sizeof path, "%s/missing", dir);
    ck_assert_int_eq(xf_infile_open(path, &f, &err), XF_ERR_IO);
    xf_test_expect_contains(err.msg, "cannot open: No such file or directory");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ir_files");
    TCase *t = tcase_create("files");
    tcase_add_test(t, outfile_writes_new_and_replaces_keeping_the_mode);
    tcase_add_test(t, outfile_follows_symbolic_links);
    tcase_add_test(t, outfile_full_device_fails_and_stays_a_device);
    tcase_add_test(t, outfile_writes_through_a_fifo);
    tcase_add_test(t, outfile_failure_leaves_the_destination);
    tcase_add_test(t, infile_refuses_what_is_not_a_regular_file);
    tcase_add_test(t, outfile_temp_removed_on_stop_signals);
    tcase_add_test(t, outfile_refuses_protected_files);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
