/*
 * exec_layout.c - what the sandbox sees: the bwrap options that build its
 * root from an allowlist, never from the host's "/".
 *
 *   /usr                     read-only, and /bin /sbin /lib /lib32 /lib64
 *                            /libx32 as the host has them (a symlink into
 *                            /usr on merged-/usr systems, else read-only)
 *   /etc                     only ld.so.cache, localtime, alternatives,
 *                            and stub passwd and group (generated: root,
 *                            sandbox 1000, nobody); with network also
 *                            ssl/certs, ca-certificates, resolv.conf,
 *                            hosts, nsswitch.conf, gai.conf, services,
 *                            protocols
 *   /dev /proc               fresh (bwrap), /dev read-only; /proc of the
 *                            sandbox's own pid namespace
 *   /tmp /scratch            tmpfs of scratch_bytes each; /scratch is the
 *                            cwd and HOME
 *   binds                    the registry entry's (the sandbox user must
 *                            be able to reach the source path)
 *   /                        a tmpfs holding only the above, read-only
 *
 * Nothing else of the host: no /run, /var, /home, /root, /srv, no other
 * /etc file, and so none of the executor's or the PDP's files (the
 * startup self-check proves it: exec_selfcheck.c). Every namespace is
 * unshared (the network only without "network": true), a user namespace
 * maps the sandbox's uid 1000 to the host uid the child runs as (the
 * config's sandbox_user), nested user namespaces are disabled, every
 * capability is dropped.
 *
 * bwrap runs as the sandbox user, so it mounts a bind only when that user
 * can reach the source path, and inside the bind the files' own modes
 * apply (a 0600 file of the executor's user stays unreadable). The stub
 * files are written into pipes, and the self-check's probe binary is
 * opened here; bwrap copies both into the sandbox (--ro-bind-data). Every
 * descriptor opened goes into the plan's keep list: the child leaves them
 * open across execve, the parent closes them after fork.
 */
#include "exec_run_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_json.h"

static const char passwd_stub[] =
    "root:x:0:0:root:/:/usr/sbin/nologin\n"
    "sandbox:x:1000:1000:sandbox:" EXEC_SANDBOX_SCRATCH ":/usr/sbin/nologin\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char group_stub[] = "root:x:0:\nsandbox:x:1000:\n"
                                 "nogroup:x:65534:\n";

/* /etc files every program may need; those a network client needs. */
static const char *const etc_base[] = {"/etc/ld.so.cache", "/etc/localtime",
                                       "/etc/alternatives", NULL};
static const char *const etc_net[] = {"/etc/ssl/certs",
                                      "/etc/ca-certificates",
                                      "/etc/resolv.conf",
                                      "/etc/hosts",
                                      "/etc/nsswitch.conf",
                                      "/etc/gai.conf",
                                      "/etc/host.conf",
                                      "/etc/services",
                                      "/etc/protocols",
                                      "/etc/ssl/openssl.cnf",
                                      NULL};

/* The top-level system directories, as the host has them. */
#define SYS_DIRS 6
static const char *const sys_dir[SYS_DIRS] = {"/bin",   "/sbin",  "/lib",
                                              "/lib32", "/lib64", "/libx32"};

/* How the host has them, read once: 'l' symlink (target), 'd' directory,
   0 absent or anything else. */
static struct {
    char kind;
    char target[PATH_MAX];
} sys_info[SYS_DIRS];
static pthread_once_t sys_once = PTHREAD_ONCE_INIT;

static void
sys_scan(void)
{
    struct stat sb;
    ssize_t n;
    size_t i;

    for (i = 0; i < SYS_DIRS; i++) {
        sys_info[i].kind = 0;
        if (lstat(sys_dir[i], &sb) != 0)
            continue;
        if (S_ISLNK(sb.st_mode)) {
            n = readlink(sys_dir[i], sys_info[i].target,
                         sizeof(sys_info[i].target) - 1);
            if (n > 0) {
                sys_info[i].target[n] = '\0';
                sys_info[i].kind = 'l';
            }
        } else if (S_ISDIR(sb.st_mode)) {
            sys_info[i].kind = 'd';
        }
    }
}

/* fd moved above 2 (stdio of the child) and close-on-exec, or -1. */
static int
fd_high(int fd)
{
    int hi;

    if (fd < 0 || fd > 2)
        return fd;
    hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    (void)close(fd);
    return hi;
}

/* Remember fd for the child; -1 when the list is full (fd is closed). */
static int
keep_fd(struct exec_plan *p, int fd)
{
    if (fd < 0)
        return -1;
    if (p->nkeep >= EXEC_PLAN_MAX_FDS) {
        (void)close(fd);
        return -1;
    }
    p->keep[p->nkeep++] = fd;
    return fd;
}

/* A pipe holding text (it fits the pipe buffer): its read end, kept. */
static int
data_fd(struct exec_plan *p, const char *text)
{
    int fds[2], i;
    size_t n = strlen(text);

    if (pipe(fds) != 0)
        return -1;
    for (i = 0; i < 2; i++)
        (void)fcntl(fds[i], F_SETFD, FD_CLOEXEC);
    if (write(fds[1], text, n) != (ssize_t)n) {
        (void)close(fds[0]);
        (void)close(fds[1]);
        return -1;
    }
    (void)close(fds[1]);
    return keep_fd(p, fd_high(fds[0]));
}

/* "--opt", then the fd's number, then dest. */
static int
push_fd_opt(struct exec_vec *s, const char *opt, int fd, const char *dest)
{
    char num[16];

    (void)snprintf(num, sizeof(num), "%d", fd);
    return exec_vec_push(s, opt, NULL, NULL) |
           exec_vec_push(s, num, NULL, NULL) |
           exec_vec_push(s, dest, NULL, NULL);
}

static int
push3(struct exec_vec *s, const char *a, const char *b, const char *c)
{
    return exec_vec_push(s, a, NULL, NULL) | exec_vec_push(s, b, NULL, NULL) |
           (c != NULL ? exec_vec_push(s, c, NULL, NULL) : 0);
}

/* The root: /usr, the system directories, the allowed /etc files. */
static int
push_root(const struct exec_run_opts *o, struct exec_vec *s,
          struct exec_plan *p)
{
    const char *const *etc;
    int bad = push3(s, "--ro-bind", "/usr", "/usr"), fd;
    size_t i;

    (void)pthread_once(&sys_once, sys_scan);
    for (i = 0; i < SYS_DIRS; i++) {
        if (sys_info[i].kind == 'l')
            bad |= push3(s, "--symlink", sys_info[i].target, sys_dir[i]);
        else if (sys_info[i].kind == 'd')
            bad |= push3(s, "--ro-bind", sys_dir[i], sys_dir[i]);
    }
    for (etc = etc_base; *etc != NULL; etc++)
        bad |= push3(s, "--ro-bind-try", *etc, *etc);
    for (etc = etc_net; o->network && *etc != NULL; etc++)
        bad |= push3(s, "--ro-bind-try", *etc, *etc);
    if ((fd = data_fd(p, passwd_stub)) < 0)
        return -1;
    bad |= push_fd_opt(s, "--ro-bind-data", fd, "/etc/passwd");
    if ((fd = data_fd(p, group_stub)) < 0)
        return -1;
    return bad | push_fd_opt(s, "--ro-bind-data", fd, "/etc/group");
}

/* /dev, /proc, the two tmpfs, the binds and the probe. */
static enum ig_status
push_mounts(const struct exec_run_opts *o, struct exec_vec *s,
            struct exec_plan *p, struct ig_err *err)
{
    unsigned long long size =
        o->scratch_bytes != 0 ? o->scratch_bytes : IG_EXEC_SCRATCH_DEFAULT;
    char num[32];
    size_t i;
    int bad, fd;

    (void)snprintf(num, sizeof(num), "%llu", size);
    bad = push3(s, "--dev", "/dev", NULL) | push3(s, "--proc", "/proc", NULL);
    bad |= push3(s, "--size", num, NULL) | push3(s, "--tmpfs", "/tmp", NULL);
    bad |= push3(s, "--size", num, NULL) |
           push3(s, "--tmpfs", EXEC_SANDBOX_SCRATCH, NULL);
    for (i = 0; i < o->nbinds; i++)
        bad |= push3(s, o->binds[i].rw ? "--bind" : "--ro-bind",
                     o->binds[i].src, o->binds[i].dest);
    if (o->probe_exe != NULL) {
        /* A copy, from a descriptor we opened: the sandbox user need not
           be able to reach the executor's binary. */
        fd = keep_fd(p, fd_high(open(o->probe_exe, O_RDONLY | O_CLOEXEC)));
        if (fd < 0)
            return ig_err_set(err, IG_ERR_IO, "exec: probe %.200s: %s",
                              o->probe_exe, strerror(errno));
        bad |= push3(s, "--perms", "0555", NULL) |
               push_fd_opt(s, "--ro-bind-data", fd, EXEC_SANDBOX_PROBE);
    }
    bad |= push3(s, "--remount-ro", "/", NULL) |
           push3(s, "--remount-ro", "/dev", NULL);
    return bad ? ig_err_set(err, IG_ERR_NOMEM, "out of memory") : IG_OK;
}

/* Namespaces, identity, process settings, environment. */
static int
push_process(const struct exec_run_opts *o, struct exec_vec *s)
{
    static const char *const flags[] = {"--unshare-all",
                                        "--unshare-user",
                                        "--disable-userns",
                                        "--cap-drop",
                                        "ALL",
                                        "--die-with-parent",
                                        "--new-session",
                                        "--clearenv",
                                        NULL};
    char id[16];
    const char *k;
    json_t *v;
    size_t i;
    int bad = 0;

    (void)snprintf(id, sizeof(id), "%d", EXEC_SANDBOX_ID);
    for (i = 0; flags[i] != NULL; i++)
        bad |= exec_vec_push(s, flags[i], NULL, NULL);
    if (o->network)
        bad |= exec_vec_push(s, "--share-net", NULL, NULL);
    bad |= push3(s, "--uid", id, NULL) | push3(s, "--gid", id, NULL);
    bad |= push3(s, "--hostname", "sandbox", NULL) |
           push3(s, "--chdir", EXEC_SANDBOX_SCRATCH, NULL);
    bad |= push3(s, "--setenv", "PATH", "/usr/bin:/bin") |
           push3(s, "--setenv", "HOME", EXEC_SANDBOX_SCRATCH);
    json_object_foreach(ig_json_unconst(o->env), k, v)
    {
        bad |= push3(s, "--setenv", k, json_string_value(v));
    }
    return bad;
}

enum ig_status
exec_layout_push(const struct exec_run_opts *o, struct exec_vec *s,
                 struct exec_plan *p, struct ig_err *err)
{
    enum ig_status st;

    if (push_root(o, s, p) != 0)
        return ig_err_set(err, IG_ERR_NOMEM, "exec: cannot build the sandbox");
    if ((st = push_mounts(o, s, p, err)) != IG_OK)
        return st;
    if (push_process(o, s) != 0)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return IG_OK;
}
