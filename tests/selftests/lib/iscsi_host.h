/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cluster suite's iSCSI host (vm4, not a node), set up and logged in
 * by tests/selftests/iscsi_host as a Linux host runs it (iscsid, udev,
 * multipathd). Its paths through nodes 1..3 are found by udev's by-path
 * links, their ALUA states in sysfs. Include after cluster_host.h.
 */
#ifndef CHORUS_SELFTEST_ISCSI_HOST_H
#define CHORUS_SELFTEST_ISCSI_HOST_H

#include <string.h>
#include <unistd.h>

#define XIQN	"iqn.2026-11.org.chorus:cluster-export"	/* IqnOf(XNQN) */
#define HOSTIQN	"iqn.2026-11.org.chorus:host4"

/* The lab's CHAP credentials (tests/selftests/cluster_node). */
#define CHAP_USER	"chorus-lab"
#define CHAP_SECRET	"chorus-lab-chap-2026"

/* Starts iscsid, udevd and multipathd on the host (tests/selftests/iscsi_host). */
static inline int iscsi_host_start(void)
{
	return rl_on(HOST, "%s/tests/selftests/iscsi_host start " HOSTIQN, chorus_src());
}

/*
 * Logs the host in to XIQN through node @node with CHAP secret @secret
 * (discovery needs none); 0 on success. A login refused leaves no session.
 */
static inline int iscsi_login(int node, const char *secret)
{
	return rl_on(HOST, "%s/tests/selftests/iscsi_host login %d " XIQN " " CHAP_USER " %s",
		     chorus_src(), node, secret);
}

/* Logs out of every node and lets multipath forget the map. */
static inline void iscsi_logout_all(void)
{
	rl_on(HOST, "%s/tests/selftests/iscsi_host logout; "
	      "iscsiadm -m iface -I intruder -o delete >/dev/null 2>&1; true", chorus_src());
}

/*
 * The SCSI disk of the host's path to LUN @lun through node @node ("sdb"),
 * "" if it has none.
 */
static inline void iscsi_lun_disk(int node, int lun, char *out, size_t len)
{
	if (rl_on_out(HOST, out, len, "basename $(readlink -e /dev/disk/by-path/"
		      "ip-10.99.0.%d:3260-iscsi-" XIQN "-lun-%d) 2>/dev/null", node, lun))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* The SCSI disk of the host's path to LUN 0 through node @node. */
static inline void iscsi_path_disk(int node, char *out, size_t len)
{
	iscsi_lun_disk(node, 0, out, len);
}

/* The ALUA state of the host's path through node @node ("" if none). */
static inline void iscsi_path_state(int node, char *out, size_t len)
{
	char disk[32];

	iscsi_path_disk(node, disk, sizeof(disk));
	if (!disk[0] || rl_on_out(HOST, out, len, "cat /sys/block/%s/device/access_state", disk))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* Waits up to @timeout_s for the ALUA paths through nodes 1, 2, 3 to be @want ("a,b,c"). */
static inline bool iscsi_paths_are(const char *want, int timeout_s, char *seen, size_t len)
{
	return paths_are(iscsi_path_state, want, timeout_s, seen, len);
}

/*
 * Waits up to @timeout_s for the active path group of multipath device
 * @wwid (LUN @lun) to be the path through node @node alone; @seen gets the
 * disks of the active group.
 */
static inline bool iscsi_lun_active_path_is(const char *wwid, int lun, int node, int timeout_s,
					    char *seen, size_t len)
{
	uint64_t end = now_ms() + scaled(timeout_s) * 1000ULL;
	char disk[32];

	do {
		iscsi_lun_disk(node, lun, disk, sizeof(disk));
		if (rl_on_out(HOST, seen, len, "multipath -ll %s | awk '/status=/ { g = /status=active/ } "
			      "g && / sd[a-z]+ / { for (i = 1; i <= NF; i++) if ($i ~ /^sd/) "
			      "printf \"%%s \", $i }'", wwid))
			seen[0] = '\0';
		if (disk[0] && !strncmp(seen, disk, strlen(disk)) && seen[strlen(disk)] == ' ' &&
		    seen[strlen(disk) + 1] == '\0')
			return true;
		usleep(500 * 1000);
	} while (now_ms() < end);
	return false;
}

/* iscsi_lun_active_path_is() for LUN 0. */
static inline bool iscsi_active_path_is(const char *wwid, int node, int timeout_s, char *seen,
					size_t len)
{
	return iscsi_lun_active_path_is(wwid, 0, node, timeout_s, seen, len);
}

/*
 * Waits up to @timeout_s for the host's path through node @node to be up
 * in multipathd with priority @prio (alua: 50 active/optimized, 10
 * active/non-optimized). multipathd asks the node itself (REPORT TARGET
 * PORT GROUPS) every few seconds; sysfs's access_state changes only on a
 * unit attention, which a node that comes back after a crash does not send.
 */
static inline bool iscsi_path_ready(int node, int prio, int timeout_s, char *seen, size_t len)
{
	uint64_t end = now_ms() + scaled(timeout_s) * 1000ULL;
	char disk[32];

	do {
		iscsi_path_disk(node, disk, sizeof(disk));
		if (!disk[0] || rl_on_out(HOST, seen, len, "multipathd show paths raw format "
					  "'%%d %%T %%p' | grep '^%s '", disk))
			seen[0] = '\0';
		seen[strcspn(seen, "\n")] = '\0';
		if (disk[0] && strstr(seen, " ready ") && atoi(strrchr(seen, ' ') + 1) == prio)
			return true;
		usleep(500 * 1000);
	} while (now_ms() < end);
	return false;
}

#endif /* CHORUS_SELFTEST_ISCSI_HOST_H */
