/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sysfs view of a droce device, for programs that read
 * /sys/class/infiniband/<dev>/... and /dev/infiniband/ themselves instead of
 * asking verbs (rdma-core's python tests, UCX, NCCL). A droce device has no
 * kernel node; with DROCE_SYSFS_ROOT=<root> in the environment,
 * ibv_get_device_list() writes each device's attributes, from the answers
 * the verbs give, in the kernel's formats, under
 * <root>/sys/class/infiniband/<name>/, and makes <root>/dev/infiniband/<dev_name>.
 * devtools/droce-sysfs sets it to / in a mount namespace of its own where
 * both directories are writable tmpfs (doc/guides/sysfs.rst). Unset: nothing.
 *
 * Written each time the list is taken (the port state is as of then), each
 * file by rename(), so that a reader in another process never sees half of one.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <rte_eal.h>

#include "verbs_loc.h"

/* Paths under a device's directory, which is at most DIR_MAX long. */
#define DIR_MAX		1024
#define PATH_LEN	(DIR_MAX + 128)

struct sysfs_out {
	char dir[DIR_MAX];	/* the device's directory */
	int err;		/* the first errno, 0 while all went well */
	const char *what;	/* what that errno was about */
};

static void
fail(struct sysfs_out *o, const char *what)
{
	if (o->err == 0) {
		o->err = errno;
		o->what = what;
	}
}

/* mkdir -p of @o->dir/@sub */
static void
mkdirs(struct sysfs_out *o, const char *sub)
{
	char p[PATH_LEN];

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", o->dir, sub) >= sizeof(p)) {
		errno = ENAMETOOLONG;
		fail(o, sub);
		return;
	}
	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0755) != 0 && errno != EEXIST) {
				fail(o, p);
				return;
			}
			*s = c;
			if (c == '\0')
				return;
		}
	}
}

/* @o->dir/@file holds the line @fmt..., replaced whole */
static void __rte_format_printf(3, 4)
put(struct sysfs_out *o, const char *file, const char *fmt, ...)
{
	char p[PATH_LEN], tmp[PATH_LEN + 32], v[256];
	va_list ap;
	FILE *f;
	int ok;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	if (snprintf(p, sizeof(p), "%s/%s", o->dir, file) >= (int)sizeof(p)) {
		errno = ENAMETOOLONG;
		fail(o, file);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", p, rte_gettid());
	f = fopen(tmp, "w");
	if (f == NULL) {
		fail(o, file);
		return;
	}
	ok = fprintf(f, "%s\n", v) >= 0;
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, p) != 0) {
		fail(o, file);
		unlink(tmp);
	}
}

/* @o->dir/@name is a symlink to @target, replaced whole */
static void
put_link(struct sysfs_out *o, const char *name, const char *target)
{
	char p[PATH_LEN], tmp[PATH_LEN + 32];

	if (snprintf(p, sizeof(p), "%s/%s", o->dir, name) >= (int)sizeof(p)) {
		errno = ENAMETOOLONG;
		fail(o, name);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", p, rte_gettid());
	unlink(tmp);
	if (symlink(target, tmp) != 0 || rename(tmp, p) != 0) {
		fail(o, name);
		unlink(tmp);
	}
}

/* The kernel netdev that holds the device's IPv4 address, in this network namespace. */
static bool
netdev_of(rte_be32_t ip, char ifname[IF_NAMESIZE])
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa) != 0)
		return false;
	for (i = ifa; i != NULL && !found; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
			continue;
		if (((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == ip) {
			snprintf(ifname, IF_NAMESIZE, "%s", i->ifa_name);
			found = true;
		}
	}
	freeifaddrs(ifa);
	return found;
}

/* device/net/ holds @ifname alone (or nothing), as a PCI NIC's holds its netdev */
static void
put_netdev(struct sysfs_out *o, const char *ifname)
{
	char p[PATH_LEN], target[64];
	struct dirent *e;
	DIR *d;

	mkdirs(o, "device/net");
	snprintf(p, sizeof(p), "%s/device/net", o->dir);
	d = opendir(p);
	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.' || (ifname != NULL && strcmp(e->d_name, ifname) == 0))
				continue;
			unlinkat(dirfd(d), e->d_name, 0);
		}
		closedir(d);
	}
	if (ifname == NULL)
		return;
	snprintf(target, sizeof(target), "/sys/class/net/%.*s", IF_NAMESIZE, ifname);
	snprintf(p, sizeof(p), "device/net/%.*s", IF_NAMESIZE, ifname);
	put_link(o, p, target);
}

/* drivers/infiniband/core/sysfs.c rate_show(): "40 Gb/sec (4X FDR10)" */
static void
put_rate(struct sysfs_out *o, const struct ibv_port_attr *a)
{
	static const struct {
		uint8_t speed;
		uint16_t lane;		/* 100 Mb/s per lane */
		const char *name;
	} speeds[] = {
		{ 2, 50, " DDR" }, { 4, 100, " QDR" }, { 8, 100, " FDR10" }, { 16, 140, " FDR" },
		{ 32, 250, " EDR" }, { 64, 500, " HDR" }, { 128, 1000, " NDR" },
	};
	unsigned int lane = 25, width;
	const char *name = "";

	for (unsigned int i = 0; i < RTE_DIM(speeds); i++)
		if (speeds[i].speed == a->active_speed) {
			lane = speeds[i].lane;
			name = speeds[i].name;
		}
	width = a->active_width == 2 ? 4 : a->active_width == 4 ? 8 :
		a->active_width == 8 ? 12 : a->active_width == 16 ? 2 : 1;
	put(o, "ports/1/rate", "%u%s Gb/sec (%uX%s)", lane * width / 10,
	    lane * width % 10 ? ".5" : "", width, name);
}

static void
publish_port(struct sysfs_out *o, struct droce_rdev *rdev, const char *ifname)
{
	static const char *const state[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };
	static const char *const phys[] = { "", "Sleep", "Polling", "Disabled",
		"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "Phy Test" };
	const uint8_t *ip = (const uint8_t *)&rdev->ip;
	struct ibv_port_attr a;

	droce_port_attr_get(rdev, &a);
	mkdirs(o, "ports/1/gids");
	mkdirs(o, "ports/1/pkeys");
	mkdirs(o, "ports/1/gid_attrs/types");
	mkdirs(o, "ports/1/gid_attrs/ndevs");
	put(o, "ports/1/state", "%d: %s", a.state,
	    (unsigned int)a.state < RTE_DIM(state) ? state[a.state] : "UNKNOWN");
	put(o, "ports/1/phys_state", "%u: %s", a.phys_state,
	    a.phys_state < RTE_DIM(phys) ? phys[a.phys_state] : "<unknown>");
	put(o, "ports/1/link_layer", "%s",
	    a.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");
	put_rate(o, &a);
	put(o, "ports/1/lid", "0x%x", a.lid);
	put(o, "ports/1/sm_lid", "0x%x", a.sm_lid);
	put(o, "ports/1/lid_mask_count", "%u", a.lmc);
	put(o, "ports/1/sm_sl", "%u", a.sm_sl);
	put(o, "ports/1/cap_mask", "0x%08x", a.port_cap_flags);
	/* the one GID, ::ffff:<ip> as ibv_query_gid() gives it, in %pI6 form */
	put(o, "ports/1/gids/0", "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x",
	    ip[0], ip[1], ip[2], ip[3]);
	/*
	 * The empty entries, as the kernel shows them: a zero GID, and no
	 * type or netdev (the kernel's read of those fails: no file here).
	 */
	for (unsigned int i = 1; i < DROCE_GID_TBL_LEN; i++) {
		char f[32];

		snprintf(f, sizeof(f), "ports/1/gids/%u", i);
		put(o, f, "0000:0000:0000:0000:0000:0000:0000:0000");
	}
	put(o, "ports/1/gid_attrs/types/0", "RoCE v2");
	if (ifname != NULL) {
		put(o, "ports/1/gid_attrs/ndevs/0", "%s", ifname);
	} else {
		char p[PATH_LEN];

		/* the kernel's read fails when a GID has no netdev: no file */
		snprintf(p, sizeof(p), "%s/ports/1/gid_attrs/ndevs/0", o->dir);
		unlink(p);
	}
	put(o, "ports/1/pkeys/0", "0x%04x", DROCE_DEFAULT_PKEY);
}

/*
 * /dev/infiniband/<dev_name>: UCX lists a device only when this is a
 * character device it may open read-write. droce opens nothing there (its
 * dev_path is /dev/null): the node is /dev/null's.
 */
static void
publish_devnode(struct sysfs_out *o, const char *root, const char *dev_name)
{
	char dir[DIR_MAX], p[PATH_LEN];
	struct stat st;

	if (snprintf(dir, sizeof(dir), "%s/dev/infiniband", root) >= (int)sizeof(dir))
		return;
	if (stat(dir, &st) != 0)
		return;		/* no such directory to fill */
	snprintf(p, sizeof(p), "%s/%s", dir, dev_name);
	if (stat(p, &st) == 0)
		return;
	if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) != 0 || chmod(p, 0666) != 0)
		fail(o, p);
}

static void
publish_device(const char *root, const struct ibv_device *ibdev, struct droce_rdev *rdev)
{
	static const char *const attrs[] = { "board_id", "fw_ver", "hca_type", "hw_rev",
		"node_desc", "node_guid", "node_type", "sys_image_guid" };
	struct sysfs_out o = { .err = 0 };
	char ifname[IF_NAMESIZE];
	bool has_netdev;
	char v[128];

	if ((size_t)snprintf(o.dir, sizeof(o.dir), "%s/sys/class/infiniband/%s", root,
			     ibdev->name) >= sizeof(o.dir)) {
		VERBS_LOG(WARNING, "DROCE_SYSFS_ROOT=%s: path too long", root);
		return;
	}
	mkdirs(&o, "device");
	for (unsigned int i = 0; i < RTE_DIM(attrs); i++)
		if (droce_sysfs_attr(rdev, attrs[i], v, sizeof(v)) >= 0)
			put(&o, attrs[i], "%s", v);
	has_netdev = netdev_of(rdev->ip, ifname);
	put_netdev(&o, has_netdev ? ifname : NULL);
	put(&o, "device/numa_node", "%d", -1);
	publish_port(&o, rdev, has_netdev ? ifname : NULL);
	publish_devnode(&o, root, ibdev->dev_name);
	if (o.err != 0)
		VERBS_LOG(WARNING, "DROCE_SYSFS_ROOT=%s: %s: cannot write %s: %s", root,
			  ibdev->name, o.what, strerror(o.err));
	else if (!has_netdev)
		VERBS_LOG(INFO, "%s: no netdev of this namespace holds its IP address: no device/net/",
			  ibdev->name);
}

void
droce_sysfs_publish(struct ibv_device **list, unsigned int n)
{
	const char *root = getenv("DROCE_SYSFS_ROOT");
	int saved = errno;

	if (root == NULL || *root == '\0')
		return;
	if (strcmp(root, "/") == 0)
		root = "";
	for (unsigned int i = 0; i < n; i++)
		publish_device(root, list[i],
			       container_of(list[i], struct droce_device, ibdev)->rdev);
	errno = saved;
}
