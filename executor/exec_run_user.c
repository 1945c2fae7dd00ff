/*
 * exec_run_user.c - the one step of a sandboxed run's child that needs
 * Linux-only calls (see exec_child_become in exec_run_int.h), kept apart
 * so only this file is built with _GNU_SOURCE.
 *
 * From root, changing every uid to a non-zero one clears every capability
 * by itself; from a non-root executor holding CAP_SETUID and CAP_SETGID
 * (systemd's AmbientCapabilities=), the permitted set survives the change,
 * so the ambient set is cleared and capset empties the rest. Then
 * no_new_privs: nothing executed later can gain privileges.
 */
#define _GNU_SOURCE /* setresuid, setresgid, setgroups, syscall */

#include "exec_run_int.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int
exec_child_become(uid_t uid, gid_t gid)
{
    struct __user_cap_header_struct hdr;
    struct __user_cap_data_struct data[2];

    if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 ||
        setresuid(uid, uid, uid) != 0)
        return -1;
    memset(&hdr, 0, sizeof(hdr));
    memset(data, 0, sizeof(data));
    hdr.version = _LINUX_CAPABILITY_VERSION_3;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 ||
        syscall(SYS_capset, &hdr, data) != 0 ||
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    if (getuid() != uid || geteuid() != uid || getgid() != gid ||
        getegid() != gid) {
        errno = EPERM;
        return -1;
    }
    return 0;
}
